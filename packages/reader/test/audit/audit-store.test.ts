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
    expect(audit.plan.map((p) => p.turnId)).toEqual(['t1']);
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
    expect(audit.plan).toEqual([]);
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
