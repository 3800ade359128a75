import { mkdirSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditStore } from '../../src/index.js';

function store(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'tj-audit-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}
const rec = (v: Record<string, unknown>) => `${JSON.stringify({ version: 1, created_at: 1, ...v })}\n`;
const sub = (turn_id: string) => rec({ event: 'submitted', turn_id, session_id: 's1', role: 'user', content: 'hi' });

describe('auditStore (spec §13.2)', () => {
  it('reports pending turns as repairable when abandoned and plans their recovery (TJ-AUDIT-007)', async () => {
    const root = store({ '_turn_journal/s1.jsonl': `${sub('t1')}${rec({ event: 'worker_started', turn_id: 't1' })}` });
    const audit = await auditStore([root]);
    expect(audit.check.findings).toContainEqual(
      expect.objectContaining({ code: 'turn_journal_pending_turn', severity: 'warn', repairable: true, turn_id: 't1' }),
    );
    expect(Array.from(audit.plan, (p) => p.turnId)).toEqual(['t1']);
  });

  it('builds each planned recovery when the plan is iterated, and keeps none (issue 11: 2 M abandoned turns)', async () => {
    const root = store({
      '_turn_journal/s1.jsonl': `${sub('t1')}${rec({ event: 'worker_started', turn_id: 't2', session_id: 's1' })}${sub('t3')}${rec({ event: 'completed', turn_id: 't3', session_id: 's1' })}`,
    });
    const asked: string[] = [];
    const host = {
      hasUserMessage: (_s: string, t: string) => {
        asked.push(`user ${t}`);
        return false;
      },
      hasInterruptionMarker: (_s: string, t: string) => {
        asked.push(`marker ${t}`);
        return t === 't2';
      },
    };
    const audit = await auditStore([root], { host });
    // The host is asked once, while planning; the orphan t2 has no user message to ask about.
    expect(asked).toEqual(['user t1', 'marker t1', 'marker t2']);
    expect(audit.plan).toHaveLength(2);
    const first = [...audit.plan];
    const second = [...audit.plan];
    expect(asked).toHaveLength(3);
    expect(second).toEqual(first);
    // Built anew: the plan holds no recovery object per turn.
    expect(second[0]).not.toBe(first[0]);
    expect(first.map((p) => [p.turnId, p.state, p.actions.map((a) => a.kind)])).toEqual([
      ['t1', 'submitted', ['ensure_user_message', 'ensure_interruption_marker', 'append_interrupted']],
      ['t2', 'worker_started', ['append_interrupted']],
    ]);
    expect(JSON.parse(JSON.stringify(audit.plan))).toEqual(JSON.parse(JSON.stringify(first)));
  });

  it('builds no pending or interrupted finding beyond the cap: the host is asked only for those kept', async () => {
    let content = '';
    for (let i = 0; i < 5; i += 1)
      content += `${sub(`t${i}`)}${rec({ event: 'interrupted', turn_id: `t${i}`, session_id: 's1', reason: 'cancelled' })}`;
    const root = store({ '_turn_journal/s1.jsonl': content });
    let asked = 0;
    const host = {
      hasUserMessage: () => true,
      hasInterruptionMarker: () => {
        asked += 1;
        return true;
      },
    };
    const audit = await auditStore([root], { host, maxFindingsPerCode: 2 });
    expect(audit.check.findings.filter((f) => f.code === 'turn_journal_interrupted_turn')).toHaveLength(2);
    expect(audit.check.omitted).toEqual({ turn_journal_interrupted_turn: 3 });
    expect(asked).toBe(2);
  });

  it('leaves a turn alone while a live writer holds its journal', async () => {
    const root = store({ '_turn_journal/s1.jsonl': sub('t1') });
    writeFileSync(
      join(root, '_turn_journal/s1.jsonl.lock'),
      JSON.stringify({ pid: process.pid, host: hostname(), token: 'x' }),
    );
    const audit = await auditStore([root]);
    expect(audit.check.findings).toContainEqual(
      expect.objectContaining({ code: 'turn_journal_pending_turn', severity: 'info', repairable: false }),
    );
    expect([...audit.plan]).toEqual([]);
  });

  it('grades interrupted turns by the host marker and flags every malformed turn line (TJ-AUDIT-008, TJ-AUDIT-009)', async () => {
    const root = store({
      '_turn_journal/s1.jsonl': `${sub('t1')}${rec({ event: 'interrupted', turn_id: 't1', reason: 'cancelled' })}garbage\n`,
    });
    const host = { hasUserMessage: () => true, hasInterruptionMarker: () => false };
    const codes = (await auditStore([root], { host })).check.findings.map((f) => `${f.code}/${f.severity}`);
    expect(codes).toEqual(
      expect.arrayContaining([
        'turn_journal_interrupted_turn/warn',
        'malformed_line/error',
        'turn_journal_malformed_event/error',
      ]),
    );
  });

  it('modifies no file, not even a torn tail or a stale lock (TJ-AUDIT-010)', async () => {
    const root = store({
      '_turn_journal/s1.jsonl': `${sub('t1')}{"torn`,
      '_turn_journal/s1.jsonl.lock': JSON.stringify({ pid: 999_999_999, host: hostname(), token: 'x' }),
    });
    const snapshot = () =>
      readdirSync(root, { recursive: true, encoding: 'utf8' })
        .sort()
        .map((name) => {
          const path = join(root, name);
          const stat = statSync(path);
          return stat.isFile() ? [name, readFileSync(path, 'hex'), stat.mtimeMs] : [name];
        });
    const before = snapshot();
    const audit = await auditStore([root]);
    expect(audit.check.findings.map((f) => f.code)).toEqual(expect.arrayContaining(['torn_tail', 'stale_lock']));
    expect(snapshot()).toEqual(before);
  });
});
