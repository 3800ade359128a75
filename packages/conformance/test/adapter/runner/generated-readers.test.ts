import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { COMPACTED_SEQ_RANGE, generateEventLogStore } from '../../../src/adapter/generate-event-log.js';
import { generateSizedStore } from '../../../src/adapter/generate-sized.js';
import { Random } from '../../../src/adapter/random.js';
import { catchPercent, GENERATED_CLASSES, generatedCaseCount } from '../../../src/adapter/runner/generated-readers.js';
import { DEFAULT_SEED } from '../../../src/adapter/runner.js';
import { runConformance } from '../../support/internals.js';
import { referenceAdapter, repo } from '../support.js';

// The reader tier's generated event logs, compacted logs and stores of tiny and huge records (TJ-CONF-060): their
// numbers, what the generators make, and that each class fails a defect of the Python example that every store fixture
// case passes, while the unmodified adapters pass.

const seedsOf = (id: string, runs = 100) => {
  const generated = GENERATED_CLASSES.find((c) => c.id === id);
  if (generated === undefined) throw new Error(`no class ${id}`);
  return Array.from(
    { length: generatedCaseCount(generated.cases, runs) },
    (_, index) => (DEFAULT_SEED + generated.seedOffset + index * 7919) >>> 0,
  );
};

const python = (defect?: string) =>
  `${defect === undefined ? '' : `TJ_MUTANT=${defect} `}python3 ${join(repo, 'examples/python-adapter/adapter.py')}`;

describe('reader tier: generated event logs, compacted logs, tiny and huge records (TJ-CONF-060)', () => {
  it('each class has as many cases as catch its stated share with probability ≥ 99 %, scaled by --runs', () => {
    const counts = Object.fromEntries(GENERATED_CLASSES.map((c) => [c.id, [c.cases, c.share]]));
    expect(counts).toEqual({
      'reader/generated-event-log': [44, 0.1],
      'reader/generated-compacted': [44, 0.1],
      'reader/generated-sizes': [21, 0.2],
    });
    expect(catchPercent(44, 0.1)).toBe('99.0');
    expect(Number(catchPercent(43, 0.1))).toBeLessThan(99);
    expect(catchPercent(21, 0.2)).toBe('99.1');
    expect(Number(catchPercent(20, 0.2))).toBeLessThan(99);
    expect(generatedCaseCount(44, 100)).toBe(44);
    expect(generatedCaseCount(44, 300)).toBe(132);
    expect(generatedCaseCount(44, 5)).toBe(3);
    expect(generatedCaseCount(21, 1)).toBe(1);
    expect(generatedCaseCount(44, 0)).toBe(0);
  });

  it('the default run meets every situation the event-log classes name, and each compacted log begins at a checkpoint with seq N', () => {
    const seen = new Set<string>();
    for (const seed of seedsOf('reader/generated-event-log'))
      for (const p of generateEventLogStore(new Random(seed), 'fresh').perturbations) seen.add(p);
    for (const seed of seedsOf('reader/generated-compacted')) {
      const store = generateEventLogStore(new Random(seed), 'compacted');
      for (const p of store.perturbations) seen.add(p.startsWith('compacted at seq') ? 'compacted' : p);
      for (const file of store.files) {
        const first = JSON.parse(file.text.split('\n')[0] as string) as { seq: number; type: string };
        expect(first.type, `seed ${seed}`).toBe('checkpoint');
        expect(first.seq).toBeGreaterThanOrEqual(COMPACTED_SEQ_RANGE[0]);
        expect(first.seq).toBeLessThanOrEqual(COMPACTED_SEQ_RANGE[1]);
      }
    }
    expect([...seen].sort()).toEqual(
      [
        'CRLF',
        'abandoned run',
        'blank line',
        'checkpoint',
        'compacted',
        'delivery ack',
        'delta of another message',
        'duplicated line',
        'edit out of range',
        'extension record',
        'extension record without seq',
        'garbage line',
        'glued line',
        'open segment',
        'raw U+2028/U+2029',
        'repeated seq',
        'run index of removed runs',
        'second chat.started',
        'seq below the first',
        'seq below the last',
        'seq gap',
        'tool call',
        'torn tail',
        'undo past the start',
        'unknown record',
        'unknown record without seq',
      ].sort(),
    );
  });

  it('a store of tiny and huge records holds lines within a few bytes of its limit, some over it in bytes but not in characters', () => {
    let overInBytesOnly = 0;
    const seeds = seedsOf('reader/generated-sizes');
    for (const seed of seeds) {
      const store = generateSizedStore(new Random(seed));
      const lines = store.files.flatMap((f) => f.text.split('\n')).filter((l) => l !== '');
      const near = lines.filter((l) => Math.abs(Buffer.byteLength(l) - store.maxLineBytes) <= 7);
      expect(near.length, `seed ${seed}`).toBeGreaterThan(0);
      expect(lines.length - near.length, `seed ${seed}`).toBeGreaterThanOrEqual(300);
      if (near.some((l) => Buffer.byteLength(l) > store.maxLineBytes && l.length <= store.maxLineBytes))
        overInBytesOnly += 1;
    }
    // The share the class's count is chosen for: one store in five at least.
    expect(overInBytesOnly / seeds.length).toBeGreaterThanOrEqual(0.2);
  });

  const only = ['reader/generated-'];
  const run = (adapter: string) => runConformance({ adapter, tier: 'reader', runs: 5, only });
  const failing = (report: Awaited<ReturnType<typeof run>>) =>
    [...new Set(report.checks.filter((c) => c.status === 'failed').map((c) => c.id.replace(/#\d+$/, '')))].sort();

  it('the reference adapter and the Python example agree with the reference reader on every case', async () => {
    for (const adapter of [referenceAdapter, python()]) {
      const report = await run(adapter);
      expect(report.checks.filter((c) => c.id.startsWith('reader/generated-')).length, adapter).toBe(3 + 3 + 2);
      expect(failing(report), adapter).toEqual([]);
    }
  }, 120_000);

  it.each([
    ['extension-closes-segment', ['reader/generated-compacted', 'reader/generated-event-log']],
    ['below-first-silent', ['reader/generated-compacted']],
    ['limit-in-characters', ['reader/generated-sizes']],
  ])(
    'the Python defect %s fails %s, with the seed and a shrunk counterexample',
    async (defect, classes) => {
      const report = await run(python(defect));
      expect(failing(report)).toEqual(classes);
      const details = report.checks.find((c) => c.status === 'failed')?.details.join('\n') ?? '';
      expect(details).toMatch(
        /seed \d+ \(run seed 20260511, generated-[a-z-]+ case \d+\); shrunk counterexample written/,
      );
    },
    120_000,
  );
});
