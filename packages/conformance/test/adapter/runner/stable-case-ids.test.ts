import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runConformance } from '../../support/internals.js';
import { referenceAdapter, repo } from '../support.js';

const framing = JSON.parse(readFileSync(join(repo, 'fixtures/v1/store/framing.json'), 'utf8')) as {
  cases: { description: string }[];
};
const superseded = JSON.parse(readFileSync(join(repo, 'fixtures/superseded.json'), 'utf8')) as {
  cases: { file: string; case: string }[];
};

describe('store fixture check ids', () => {
  it('keep each case at its place in the file when an earlier case is superseded (TJ-CONF-030)', async () => {
    const gone = framing.cases.findIndex((c) =>
      superseded.cases.some((s) => s.file === 'v1/store/framing.json' && s.case === c.description),
    );
    expect(gone).toBeGreaterThanOrEqual(0);
    const ids = [gone, gone + 1, framing.cases.length - 1].map((i) => `reader/store/framing.json#${i}`);
    const report = await runConformance({ adapter: referenceAdapter, tier: 'reader', runs: 0, only: ids });
    // `only` selects by prefix (#6 also selects #60): keep the ids asked for.
    const checks = report.checks.filter((c) => ids.includes(c.id));
    // The superseded case runs under no id; the cases after it keep theirs, down to the last one.
    expect(checks.map((c) => [c.id, c.title])).toEqual([
      [ids[1], framing.cases[gone + 1]?.description],
      [ids[2], framing.cases[framing.cases.length - 1]?.description],
    ]);
    expect(checks.every((c) => c.status === 'passed')).toBe(true);
  }, 120_000);
});
