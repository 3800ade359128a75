// `turnjournal check` of an event log holding two epochs (spec §6.7): two histories written into one file, which
// TJ-EVENT-026 makes an error, so the check fails (TJ-CONF-016) where a log of one history passes.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '../../../..');
const bin = join(repo, 'packages/conformance/dist/cli/main.js');

const line = (seq: number, type: string, payload: object, epoch?: string) =>
  `${JSON.stringify({ seq, ts: '2026-06-19T03:14:07Z', type, payload, ...(epoch === undefined ? {} : { epoch }) })}\n`;
const user = (content: string) => ({ message: { role: 'user', content } });

function check(log: string) {
  const root = mkdtempSync(join(tmpdir(), 'tj-check-epoch-'));
  mkdirSync(join(root, 's1'));
  writeFileSync(join(root, 's1', 'events.jsonl'), log);
  const result = spawnSync(process.execPath, [bin, 'check', '--format', 'json', root], { encoding: 'utf8' });
  const report = JSON.parse(result.stdout) as { findings: { code: string; severity: string }[] };
  return { status: result.status, codes: report.findings.map((f) => `${f.code}:${f.severity}`) };
}

describe('turnjournal check of epochs (TJ-EVENT-026)', () => {
  it('fails a log whose checkpoint carries another epoch than its first record', () => {
    const log = line(0, 'message_append', user('a'), 'epoch-a') + line(1, 'checkpoint', { messages: [] }, 'epoch-b');
    expect(check(log)).toEqual({ status: 1, codes: ['epoch_conflict:error'] });
  });

  it('passes a log of one epoch, and one that gains an epoch after a checkpoint without one', () => {
    const one = line(0, 'message_append', user('a'), 'epoch-a') + line(1, 'checkpoint', { messages: [] }, 'epoch-a');
    expect(check(one)).toEqual({ status: 0, codes: [] });
    const adopted =
      line(0, 'message_append', user('a'), 'epoch-a') +
      line(1, 'checkpoint', { messages: [] }) +
      line(2, 'checkpoint', { messages: [] }, 'epoch-b');
    expect(check(adopted)).toEqual({ status: 0, codes: [] });
  });
});
