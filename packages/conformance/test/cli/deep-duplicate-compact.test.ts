import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '../../../..');
const bin = join(repo, 'packages/conformance/dist/cli/main.js');

function turnjournal(...args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: repo });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * The reproduction of issue 11, defect 0: `t0` completed; `t1` submitted and completed twice, the two `completed`
 * records differing only in member order and carrying a 5,000-deep array; a pending `t2`; a garbage line. Every turn
 * is four days old, so the retention sweep would prune `t0` and `t1`.
 */
function store(): { root: string; journal: string; lines: string[] } {
  const root = mkdtempSync(join(tmpdir(), 'tj-cli-deep-'));
  mkdirSync(join(root, '_turn_journal'));
  const at = Date.now() / 1000 - 96 * 3600;
  const deep = `${'['.repeat(5000)}${']'.repeat(5000)}`;
  const lines = [
    `{"version":1,"event":"submitted","turn_id":"t0","session_id":"sess","created_at":${at},"role":"user","content":"zero"}`,
    `{"version":1,"event":"completed","turn_id":"t0","session_id":"sess","created_at":${at + 1},"terminal":true}`,
    `{"version":1,"event":"submitted","turn_id":"t1","session_id":"sess","created_at":${at + 2},"role":"user","content":"one"}`,
    `{"version":1,"event":"completed","turn_id":"t1","session_id":"sess","created_at":${at + 3},"terminal":true,"x":${deep}}`,
    `{"event":"completed","version":1,"turn_id":"t1","session_id":"sess","created_at":${at + 3},"terminal":true,"x":${deep}}`,
    `{"version":1,"event":"submitted","turn_id":"t2","session_id":"sess","created_at":${at + 4},"role":"user","content":"two, pending"}`,
    'this is garbage',
  ];
  const journal = join(root, '_turn_journal/sess.jsonl');
  writeFileSync(journal, `${lines.join('\n')}\n`);
  return { root, journal, lines };
}

describe('a crafted deep duplicate neither hides a file from the audit nor makes compact lose a turn (issue 11, defect 0)', () => {
  it('audit reads the whole file and is not clean (TJ-AUDIT-015)', () => {
    const { root } = store();
    const audit = turnjournal('audit', '--format', 'json', root);
    expect(audit.status).toBe(1);
    const report = JSON.parse(audit.stdout) as { clean: boolean; findings: { code: string; line?: number }[] };
    expect(report.clean).toBe(false);
    const codes = report.findings.map((f) => `${f.code}${f.line === undefined ? '' : `@${f.line}`}`).sort();
    expect(codes).toEqual([
      'duplicate_event@5',
      'malformed_line@7',
      'turn_journal_malformed_event@7',
      'turn_journal_pending_turn',
    ]);
  });

  it("compact keeps every line, t2's submitted included (TJ-RET-002, TJ-RET-017)", () => {
    const { root, journal } = store();
    const before = readFileSync(journal, 'utf8');
    const compact = turnjournal('compact', root);
    expect(compact.status).toBe(0);
    expect(compact.stdout).toContain('sess: kept everything: the audit is not clean');
    expect(readFileSync(journal, 'utf8')).toBe(before);
  });
});
