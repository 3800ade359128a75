import { cpSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditStore, checkStore, recoverEventLog, replayEventLog } from '../../src/index.js';

// No unbounded recursion where the reader compares, copies or serialises a record (issue 11, defect 0;
// TJ-DERIVE-014): the example store with, in every record, members nested 10,000 levels deep (an array and an
// object), each line of the turn journals and run file written twice (the copy with its members in reverse order),
// and deep values in the members the schema leaves open. JSON.parse accepts any depth; the reader must too.
const DEPTH = 10_000;
const example = join(import.meta.dirname, '../../../../examples/store');

function walk(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? walk(path) : [path];
  });
}

function deepStore(): string {
  const root = join(mkdtempSync(join(tmpdir(), 'tj-deep-')), 'store');
  cpSync(example, root, { recursive: true });
  const array = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;
  const object = `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`;
  for (const file of walk(root)) {
    const text = readFileSync(file, 'utf8');
    if (file.endsWith('.json')) {
      writeFileSync(file, `${text.trimEnd().slice(0, -1)},"x_deep":${object}}`);
      continue;
    }
    const out: string[] = [];
    for (const line of text.split('\n')) {
      let value: Record<string, unknown>;
      try {
        value = JSON.parse(line);
      } catch {
        out.push(line);
        continue;
      }
      // Members of any JSON value in event logs and run files get a deep value too (turn `content` is a string).
      let body = JSON.stringify(value).slice(1, -1);
      if (!file.includes('_turn_journal'))
        for (const key of ['content', 'ui_context', 'provider_meta', 'tool_choice', 'args'])
          body = body.replace(`"${key}":`, `"${key}":${array},"${key}_was":`);
      out.push(`{${body},"x_deep":${array},"y_deep":${object}}`);
      if (!('seq' in value)) {
        const reversed = Object.entries(value)
          .reverse()
          .map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`)
          .join(',');
        out.push(`{"y_deep":${object},"x_deep":${array},${reversed}}`);
      }
    }
    writeFileSync(file, out.join('\n'));
  }
  return root;
}

describe('records nested 10,000 levels deep (issue 11, defect 0; TJ-DERIVE-014, TJ-AUDIT-015)', () => {
  it('check and audit read every file to its end and derive what the example store derives', async () => {
    const root = deepStore();
    const [plain, deep] = await Promise.all([checkStore([example]), checkStore([root])]);
    expect(deep.findings.filter((f) => f.code === 'incomplete_read' || f.code === 'unrecognised_file')).toEqual([]);
    const states = (check: typeof plain) =>
      check.sessions.flatMap((s) => s.turns.map((t) => `${s.sessionId} ${t.turnId} ${t.state}`));
    expect(states(deep)).toEqual(states(plain));
    expect(deep.eventLogs.map((l) => l.messages)).toEqual(plain.eventLogs.map((l) => l.messages));
    expect(deep.runs.map((r) => r.outcome)).toEqual(plain.runs.map((r) => r.outcome));
    // Every copy of a turn record is an exact duplicate of its original.
    const duplicates = deep.findings.filter((f) => f.code === 'duplicate_event').length;
    expect(duplicates).toBeGreaterThan(0);
    expect(deep.findings.filter((f) => f.code === 'conflicting_duplicate')).toEqual([]);
    const audit = await auditStore([root]);
    expect(audit.check.findings.filter((f) => f.code === 'incomplete_read')).toEqual([]);
  });

  it('replays and recovers an event log with deep messages', async () => {
    const log = join(deepStore(), 'conv-7f3a/events.jsonl');
    const plain = await replayEventLog(join(example, 'conv-7f3a/events.jsonl'));
    const replay = await replayEventLog(log);
    expect(replay.kind).toBe(plain.kind);
    expect(replay.findings.map((f) => f.code)).toEqual(plain.findings.map((f) => f.code));
    if (replay.kind === 'records' && plain.kind === 'records') {
      expect(replay.lastSeq).toBe(plain.lastSeq);
      expect(replay.records.length).toBe(plain.records.length);
    }
    const [recovered, original] = await Promise.all([
      recoverEventLog(log),
      recoverEventLog(join(example, 'conv-7f3a/events.jsonl')),
    ]);
    expect(recovered.findings.map((f) => f.code)).toEqual(original.findings.map((f) => f.code));
    expect(recovered.acceptedSinceCheckpoint).toBe(original.acceptedSinceCheckpoint);
  });
});
