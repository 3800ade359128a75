import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkStore } from '../../src/index.js';

// Hostile turn journals of issue 11, defect 8, from generate-turn-journals.mjs: 10,000 records each here, the issue's
// full sizes (1 M duplicates, 2 M orphans, 1 M turns) with TJ_HOSTILE_FULL=1. Speed and memory are measured with
// `/usr/bin/time -v` on the CLI (see the generator); these tests check what the check reports, at any size.
const FULL = process.env.TJ_HOSTILE_FULL === '1';

function generate(kind: 'duplicates' | 'orphans' | 'turns'): { root: string; n: number } {
  const root = mkdtempSync(join(tmpdir(), `tj-hostile-${kind}-`));
  execFileSync(process.execPath, [join(import.meta.dirname, 'generate-turn-journals.mjs'), kind, root], {
    env: { ...process.env },
  });
  const n = FULL ? { duplicates: 1_000_000, orphans: 2_000_000, turns: 1_000_000 }[kind] : 10_000;
  return { root, n };
}

const CAP = 1000;
const countOf = (codes: readonly string[], code: string) => codes.filter((c) => c === code).length;

describe('hostile turn journals (issue 11, defect 8; TJ-DERIVE-014, TJ-AUDIT-013)', () => {
  it('one turn with a distinct record per line: one finding each, capped and counted', async () => {
    const { root, n } = generate('duplicates');
    const check = await checkStore([root]);
    const codes = check.findings.map((f) => f.code);
    // The first worker_started represents the event; each later one is a distinct record.
    expect(countOf(codes, 'conflicting_duplicate')).toBe(CAP);
    expect(check.omitted).toEqual({ conflicting_duplicate: n - 1 - CAP });
    expect(check.sessions[0]?.turns.map((t) => t.state)).toEqual(['worker_started']);
  }, 600_000);

  it('a turn per record, none submitted: every turn derived, orphan findings capped and counted', async () => {
    const { root, n } = generate('orphans');
    const check = await checkStore([root]);
    expect(
      countOf(
        check.findings.map((f) => f.code),
        'orphan_turn',
      ),
    ).toBe(CAP);
    expect(check.omitted).toEqual({ orphan_turn: n - CAP });
    expect(check.sessions[0]?.turns.length).toBe(n);
  }, 600_000);

  it('many completed turns: every one derived, no finding', async () => {
    const { root, n } = generate('turns');
    const check = await checkStore([root]);
    expect(check.findings).toEqual([]);
    const turns = check.sessions[0]?.turns ?? [];
    expect(turns.length).toBe(n);
    expect(turns.every((t) => t.state === 'completed')).toBe(true);
  }, 600_000);
});
