import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { discoverStore } from '@turnjournal/reader';
import type { StoreFixtureCase, StoreFixtureFile } from '../../fixtures/fixture-file.js';
import { loadFixtureFile, loadFixtures } from '../../fixtures/load-fixtures.js';
import {
  compareStoreObservation,
  type StoreObservation,
  writeStoreFixture,
} from '../../fixtures/run-store-fixtures.js';
import { generateTurnStore } from '../generate-store.js';
import { truncate } from '../process.js';
import type { StartResult } from '../protocol.js';
import { Random } from '../random.js';
import { adapterReading } from './adapter-reading.js';
import { boundedMemoryCheck } from './bounded-memory.js';
import { freshDir } from './fresh-dir.js';
import { generatedCaseOutcome } from './generated-cases.js';
import { generatedReaderChecks } from './generated-readers.js';
import type { CheckRecorder } from './record.js';
import { representativesCheck } from './representatives.js';
import type { Session } from './session.js';
import { specialFilesCheck } from './special-files.js';
import { snapshotTree, treeChanges } from './tree-snapshot.js';

/**
 * The requirements a generated reader case checks: it compares every turn state and every finding's code, file, line
 * and turn id with the reference reader's (so codes spelled exactly, TJ-AUDIT-001, and findings that locate their
 * line, TJ-AUDIT-003).
 */
export const GENERATED_REQUIREMENTS = [
  'TJ-AUDIT-001',
  'TJ-AUDIT-003',
  'TJ-CONF-002',
  'TJ-DERIVE-001',
  'TJ-DERIVE-002',
  'TJ-DERIVE-003',
  'TJ-DERIVE-004',
  'TJ-DERIVE-005',
  'TJ-DERIVE-008',
  'TJ-DERIVE-010',
  'TJ-DERIVE-011',
  'TJ-FRAME-002',
  'TJ-FRAME-003',
  'TJ-FRAME-013',
  'TJ-FRAME-016',
  'TJ-FRAME-026',
];

function caseFamilies(root: string, fixtureCase: StoreFixtureCase): Set<string> {
  const families = new Set<string>();
  for (const file of discoverStore([root]).files) if (file.hint.family !== undefined) families.add(file.hint.family);
  if (fixtureCase.files.some((f) => f.path.startsWith('_turn_journal/') || f.path.includes('/_turn_journal/')))
    families.add('turn');
  return families;
}

/** The default line-size limit of spec §3.7 (TJ-FRAME-031), in bytes without the LF. */
const DEFAULT_LIMIT = 16 * 1024 * 1024;

/**
 * A turn journal whose line 2 is exactly at the default limit (a valid `submitted` of t2) and whose line 3 is one byte
 * over it (another submitted, which must be skipped as `oversized_line`), between t1's two records.
 */
function defaultLimitJournal(): string {
  const record = (id: string, bytes: number) => {
    const head = `{"version":1,"event":"submitted","turn_id":"${id}","session_id":"s1","created_at":1770000000,"role":"user","content":"`;
    return `${head}${'x'.repeat(bytes - head.length - 2)}"}\n`;
  };
  return [
    '{"version":1,"event":"submitted","turn_id":"t1","session_id":"s1","created_at":1770000000,"role":"user","content":"a"}\n',
    record('t2', DEFAULT_LIMIT),
    record('t3', DEFAULT_LIMIT + 1),
    '{"version":1,"event":"completed","turn_id":"t1","session_id":"s1","created_at":1770000001}\n',
  ].join('');
}

/** The store fixture files below `<root>/v1/store`, by their path relative to it; none when the directory is missing. */
/** The cases of one store fixture file in force, each with its place in the file. */
interface StoreFixtureCases {
  readonly path: string;
  readonly cases: readonly { readonly index: number; readonly fixtureCase: StoreFixtureCase }[];
}

function storeFixtureFiles(fixturesDir: string): StoreFixtureCases[] {
  if (!existsSync(fixturesDir)) return [];
  // loadFixtures reads the files below a fixtures root, so load from the root and keep the store files.
  const root = dirname(dirname(fixturesDir));
  return loadFixtures(root).flatMap((loaded) => {
    if (loaded.content.kind !== 'store' || !loaded.path.startsWith('v1/store/')) return [];
    // A case's check id is its place in the file as written (TJ-CONF-030): a superseded case is skipped, and the
    // cases after it keep their ids, so that baselines and the mutation matrix still name the same cases.
    const inForce = new Set(loaded.content.cases.map((c) => c.description));
    const written = loadFixtureFile(root, join(root, loaded.path)).content as StoreFixtureFile;
    const cases = written.cases.flatMap((fixtureCase, index) =>
      inForce.has(fixtureCase.description) ? [{ index, fixtureCase }] : [],
    );
    return [{ path: loaded.path.slice('v1/store/'.length), cases }];
  });
}

/** Settings of the reader tier. */
export interface ReaderTierSettings {
  /** The `fixtures/v1/store` directory. */
  readonly fixturesDir: string;
  /** Generated cases. */
  readonly runs: number;
  /** Run seed. */
  readonly seed: number;
}

/** The reader tier: every store fixture case of the claimed families, then generated cases (spec/v1/adapter.md). */
export async function readerTier(
  session: Session,
  claims: StartResult,
  settings: ReaderTierSettings,
  recorder: CheckRecorder,
): Promise<void> {
  const { fixturesDir, runs, seed } = settings;
  const record = recorder.record.bind(recorder);
  const features = claims.features ?? [];
  let storeFiles: StoreFixtureCases[] = [];
  // A run over no fixture proves nothing: a missing or empty fixture directory fails the run (no false greens). This
  // check always runs with the reader tier, whatever --only says.
  await record(
    'reader/fixtures',
    'the store fixture directory holds fixture cases',
    'reader',
    ['TJ-CONF-002'],
    async () => {
      storeFiles = storeFixtureFiles(fixturesDir);
      if (!existsSync(fixturesDir)) return { failures: [`the store fixture directory ${fixturesDir} does not exist`] };
      if (storeFiles.every((f) => f.cases.length === 0))
        return {
          failures: [
            `the store fixture directory ${fixturesDir} holds no store fixture case (expected <root>/v1/store/*.json): a run over no fixture proves nothing`,
          ],
        };
      return { failures: [] };
    },
  );
  for (const loaded of storeFiles) {
    for (const { index, fixtureCase } of loaded.cases) {
      await record(
        `reader/store/${loaded.path}#${index}`,
        fixtureCase.description,
        'reader',
        // A case read with its own limit also checks that the adapter honours `max_line_bytes`, and an audit case that
        // the audit changed no file (TJ-AUDIT-010): every read is checked for that, an audit is where a reader that
        // "helpfully" repairs would do it.
        [
          ...fixtureCase.requirements,
          ...(fixtureCase.max_line_bytes === undefined ? [] : ['TJ-CONF-031']),
          ...(fixtureCase.audit === true ? ['TJ-AUDIT-010'] : []),
        ],
        async () => {
          const root = freshDir('tj-conf-store-');
          try {
            writeStoreFixture(root, fixtureCase);
            const missing = [...caseFamilies(root, fixtureCase)].filter(
              (f) => !claims.families.includes(f as StartResult['families'][number]),
            );
            if (missing.length > 0) return { skip: `family ${missing.join(', ')} not claimed` };
            if (fixtureCase.audit === true && !features.includes('audit'))
              return { skip: 'audit case; feature audit not claimed' };
            if (fixtureCase.expect.replay !== undefined && !features.includes('replay'))
              return { skip: 'replay case; feature replay not claimed' };
            const process = await session.get();
            const before = snapshotTree(root);
            const reading = await adapterReading(
              process,
              root,
              fixtureCase.mode,
              fixtureCase.audit === true,
              fixtureCase.max_line_bytes,
            );
            const replay: StoreObservation['replay'][number][] = [];
            for (const { file, after, epoch } of fixtureCase.expect.replay ?? []) {
              const withEpoch = epoch === undefined ? {} : { epoch };
              const answer = await process.request('replay', { file: join(root, file), after, ...withEpoch });
              replay.push({ file, after, ...withEpoch, ...answer });
            }
            const changed = treeChanges(before, snapshotTree(root)).map(
              (change) => `the ${fixtureCase.audit === true ? 'audit' : 'read'} changed the store: ${change}`,
            );
            return { failures: [...compareStoreObservation(fixtureCase, { ...reading, replay }), ...changed] };
          } finally {
            rmSync(root, { recursive: true, force: true });
          }
        },
      );
    }
  }

  await record(
    'reader/line-limit-default',
    'a line one byte over the default 16 MiB limit is skipped as oversized_line, one at the limit is read',
    'reader',
    ['TJ-FRAME-031', 'TJ-FRAME-032', 'TJ-FRAME-033'],
    async () => {
      if (!claims.families.includes('turn')) return { skip: 'family turn not claimed' };
      const root = freshDir('tj-conf-limit-');
      try {
        const file = join(root, '_turn_journal', 's1.jsonl');
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, defaultLimitJournal());
        const reading = await adapterReading(await session.get(), root, 'tolerant', false);
        const failures: string[] = [];
        const turns = JSON.stringify(reading.turns);
        if (turns !== JSON.stringify({ s1: { t1: 'completed', t2: 'submitted' } }))
          failures.push(`expected turns {"s1":{"t1":"completed","t2":"submitted"}}, got ${truncate(turns, 300)}`);
        const findings = reading.findings.map((f) => `${f.code}@${f.line ?? '-'}`).join(', ');
        if (findings !== 'oversized_line@3')
          failures.push(`expected findings oversized_line@3, got ${findings || 'none'}`);
        return { failures };
      } finally {
        rmSync(root, { recursive: true, force: true });
      }
    },
  );

  await specialFilesCheck(session, claims, recorder);
  await boundedMemoryCheck(session, claims, recorder);
  await representativesCheck(session, claims, seed, recorder);

  for (let index = 0; index < runs; index++) {
    const caseSeed = (seed + index * 7919) >>> 0;
    await record(
      `reader/generated#${index}`,
      `generated turn store (seed ${caseSeed})`,
      'reader',
      GENERATED_REQUIREMENTS,
      async () => {
        if (!claims.families.includes('turn')) return { skip: 'family turn not claimed' };
        const store = generateTurnStore(new Random(caseSeed));
        return generatedCaseOutcome(session, store, GENERATED_REQUIREMENTS, {
          caseSeed,
          seed,
          name: `case ${index}`,
        });
      },
    );
  }

  await generatedReaderChecks(session, claims, { runs, seed }, recorder);
}
