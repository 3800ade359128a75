import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { checkStore, discoverStore, readJournal } from '@turnjournal/reader';
import { FINDING_CODES } from '@turnjournal/schema';
import type { StoreFixtureCase } from '../fixtures/fixture-file.js';
import { loadFixtures } from '../fixtures/load-fixtures.js';
import {
  compareStoreObservation,
  readStoreReference,
  relativeReading,
  type StoreObservation,
  writeStoreFixture,
} from '../fixtures/run-store-fixtures.js';
import { generateTurnStore } from './generate-store.js';
import { loadRequirementLevels, locateStoreFixtures } from './locate.js';
import { AdapterFailure, AdapterProcess, truncate } from './process.js';
import type { ReadResult, StartResult } from './protocol.js';
import { Random } from './random.js';
import type { CheckReport, CheckStatus, ConformanceReport, ExpectedFailures } from './report.js';
import { checkSyncBeforeAck, straceAvailable, straceWrapper } from './strace.js';

/** Which tiers a run covers. */
export type ConformanceTier = 'reader' | 'writer' | 'all';

/** Options of {@link runConformance}. */
export interface ConformanceOptions {
  /** The adapter command, run with `sh -c`. */
  readonly adapter: string;
  /** Tiers to run (default `all`: every tier the adapter claims). */
  readonly tier?: ConformanceTier;
  /** Generated reader cases (default 100). */
  readonly runs?: number;
  /** Writer kill rounds (default 20). */
  readonly writerRounds?: number;
  /** Seed of every generated case and kill point (default 20260511). */
  readonly seed?: number;
  /** The expected-failures baseline (TJ-CONF-017). */
  readonly expectedFailures?: ExpectedFailures;
  /** Where the baseline came from, for the report. */
  readonly expectedFailuresPath?: string;
  /** Per-request timeout in milliseconds (default 10 s). */
  readonly timeoutMs?: number;
  /** The store fixtures directory, `<fixtures root>/v1/store` (default: the kit's own). */
  readonly fixturesDir?: string;
  /** Run the fsync-before-ack check under strace: `auto` (default) when available, or never. */
  readonly strace?: 'auto' | 'never';
  /** Run only the checks whose id starts with one of these prefixes (`adapter/start` and `adapter/stop` always run). */
  readonly only?: readonly string[];
  /** Called after each check, for progress output. */
  readonly onCheck?: (check: CheckReport, done: number) => void;
}

/** Default seed, shared with the property suites' convention. */
export const DEFAULT_SEED = 20260511;

const GENERATED_REQUIREMENTS = [
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

type Outcome = { readonly failures: readonly string[] } | { readonly skip: string };

const MAX_RESTARTS = 5;

/** Starts (and restarts, after a crash or a protocol violation) the adapter under test. */
class Session {
  #process: AdapterProcess | null = null;
  claims: StartResult | null = null;

  constructor(
    readonly command: string,
    readonly timeoutMs: number,
  ) {}

  #restarts = 0;
  #lastFailure = '';

  async get(): Promise<AdapterProcess> {
    if (this.#process?.usable === true) return this.#process;
    // A crashed or misbehaving adapter is restarted for the next check, but not forever: after a few restarts every
    // later check fails at once instead of spending a process start each.
    if (this.#process !== null) {
      const status = this.#process.exitStatus;
      this.#lastFailure = status === null ? 'protocol violation' : `exit ${status.signal ?? status.code}`;
      if (++this.#restarts > MAX_RESTARTS)
        throw new AdapterFailure(
          'exited',
          `the adapter stopped working ${MAX_RESTARTS + 1} times (last: ${this.#lastFailure}); not restarted again`,
        );
    }
    await this.#process?.dispose();
    const process = AdapterProcess.spawn(this.command, { timeoutMs: this.timeoutMs });
    this.#process = process;
    this.claims = (await process.request('start', { protocol: 1 })) as StartResult;
    return process;
  }

  async dispose(): Promise<void> {
    await this.#process?.dispose();
    this.#process = null;
  }

  async close(): Promise<number | null> {
    const process = this.#process;
    this.#process = null;
    if (process === null || !process.usable) {
      await process?.dispose();
      return null;
    }
    try {
      return await process.stop();
    } finally {
      await process.dispose();
    }
  }
}

/**
 * Runs the black-box conformance kit against an adapter (spec/v1/adapter.md): the reader tier (every store fixture
 * of the claimed families, plus generated cases compared with the reference reader) and the writer tier (kill
 * rounds checked against the acknowledgement oracle, restart, lock, torn tail, fsync before ack). Never throws for
 * what the adapter does: every failure is a failed check.
 */
export async function runConformance(options: ConformanceOptions): Promise<ConformanceReport> {
  const tier = options.tier ?? 'all';
  const runs = options.runs ?? 100;
  const writerRounds = options.writerRounds ?? 20;
  const seed = options.seed ?? DEFAULT_SEED;
  const timeoutMs = options.timeoutMs ?? 10_000;
  const levels = loadRequirementLevels();
  const baseline = new Map((options.expectedFailures?.failures ?? []).map((f) => [f.check, f.reason]));
  const checks: CheckReport[] = [];

  const record = async (
    id: string,
    title: string,
    checkTier: CheckReport['tier'],
    requirements: readonly string[],
    body: () => Promise<Outcome>,
  ) => {
    if (!selected(options, id)) return;
    const started = performance.now();
    let outcome: Outcome;
    try {
      outcome = await body();
    } catch (error) {
      outcome = { failures: [error instanceof AdapterFailure ? error.message : `harness error: ${String(error)}`] };
    }
    let status: CheckStatus;
    let details: string[];
    if ('skip' in outcome) {
      status = 'skipped';
      details = [outcome.skip];
    } else if (outcome.failures.length === 0) {
      status = baseline.has(id) ? 'stale_expected_failure' : 'passed';
      details = baseline.has(id) ? [`listed in the expected-failures baseline but passed: remove the entry`] : [];
    } else {
      details = [...outcome.failures];
      // A check covering only SHOULD requirements is a warning (TJ-CONF-004).
      const shouldOnly =
        requirements.length > 0 && requirements.every((r) => (levels.get(r) ?? 'MUST').startsWith('SHOULD'));
      status = baseline.has(id) ? 'expected_failure' : shouldOnly ? 'warning' : 'failed';
      if (baseline.has(id)) details.push(`expected failure: ${baseline.get(id)}`);
    }
    const check: CheckReport = {
      id,
      title,
      tier: checkTier,
      requirements: [...requirements],
      status,
      details,
      duration_ms: Math.round(performance.now() - started),
    };
    checks.push(check);
    options.onCheck?.(check, checks.length);
  };

  const session = new Session(options.adapter, timeoutMs);
  try {
    return await runChecks(options, session, record, checks, baseline, { tier, runs, writerRounds, seed, timeoutMs });
  } finally {
    // Whatever happened, no adapter process outlives the run (a live child would keep the runner from exiting).
    await session.dispose();
  }
}

async function runChecks(
  options: ConformanceOptions,
  session: Session,
  record: Record_,
  checks: CheckReport[],
  baseline: Map<string, string>,
  settings: {
    readonly tier: ConformanceTier;
    readonly runs: number;
    readonly writerRounds: number;
    readonly seed: number;
    readonly timeoutMs: number;
  },
): Promise<ConformanceReport> {
  const { tier, runs, writerRounds, seed, timeoutMs } = settings;
  let claims: StartResult | null = null;
  await record(
    'adapter/start',
    'start answers a valid capability claim',
    'adapter',
    ['TJ-CONF-001', 'TJ-CONF-024'],
    async () => {
      await session.get();
      claims = session.claims;
      return { failures: [] };
    },
  );
  if (claims === null) return finish(options, tier, runs, writerRounds, seed, null, checks, baseline);
  const claimed: StartResult = claims;

  await record(
    'adapter/unknown-op',
    'an unknown op is answered with an error response, not by exiting',
    'adapter',
    ['TJ-CONF-015', 'TJ-CONF-022'],
    async () => {
      const process = await session.get();
      try {
        await process.request('x_tj_unknown_op');
        return { failures: ['an unknown op was answered with ok: true'] };
      } catch (error) {
        if (error instanceof AdapterFailure && error.kind === 'error_response') {
          return error.code === 'unsupported'
            ? { failures: [] }
            : { failures: [`expected error code unsupported, got ${error.code}`] };
        }
        throw error;
      }
    },
  );

  if (tier !== 'writer') {
    if (!claimed.levels.includes('reader'))
      await record('reader/claim', 'reader tier', 'reader', ['TJ-CONF-002'], async () => ({
        skip: 'the adapter does not claim the reader level',
      }));
    else await readerTier(session, claimed, options, runs, seed, record);
  }
  if (tier !== 'reader') {
    if (!claimed.levels.includes('writer'))
      await record('writer/claim', 'writer tier', 'writer', ['TJ-CONF-009'], async () => ({
        skip: 'the adapter does not claim the writer level',
      }));
    else await writerTier(claimed, options, writerRounds, seed, timeoutMs, record);
  }
  await record(
    'adapter/stop',
    'stop is answered and the adapter exits 0',
    'adapter',
    ['TJ-CONF-015', 'TJ-CONF-023'],
    async () => {
      await session.get();
      const code = await session.close();
      return { failures: code === 0 ? [] : [`the adapter exited with ${code} after stop`] };
    },
  );
  return finish(options, tier, runs, writerRounds, seed, claimed, checks, baseline);
}

function selected(options: ConformanceOptions, id: string): boolean {
  return (
    id === 'adapter/start' ||
    id === 'adapter/stop' ||
    options.only === undefined ||
    options.only.some((prefix) => id.startsWith(prefix))
  );
}

type Record_ = (
  id: string,
  title: string,
  tier: CheckReport['tier'],
  requirements: readonly string[],
  body: () => Promise<Outcome>,
) => Promise<void>;

function freshDir(prefix: string): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

function caseFamilies(root: string, fixtureCase: StoreFixtureCase): Set<string> {
  const families = new Set<string>();
  for (const file of discoverStore([root]).files) if (file.hint.family !== undefined) families.add(file.hint.family);
  if (fixtureCase.files.some((f) => f.path.startsWith('_turn_journal/') || f.path.includes('/_turn_journal/')))
    families.add('turn');
  return families;
}

async function adapterReading(
  process: AdapterProcess,
  root: string,
  mode: 'tolerant' | 'prefix' | 'strict',
  audit: boolean,
): Promise<Omit<StoreObservation, 'replay'>> {
  const result = (await process.request('read', {
    paths: [root],
    mode,
    ...(audit ? { audit: true } : {}),
  })) as ReadResult;
  return relativeReading(
    {
      turns: result.turns ?? {},
      findings: result.findings,
      runs: result.runs ?? {},
      event_logs: result.event_logs ?? {},
      plan: result.plan ?? [],
    },
    root,
  );
}

async function readerTier(
  session: Session,
  claims: StartResult,
  options: ConformanceOptions,
  runs: number,
  seed: number,
  record: Record_,
): Promise<void> {
  const features = claims.features ?? [];
  const fixturesDir = options.fixturesDir ?? locateStoreFixtures();
  // loadFixtures reads the files below a fixtures root, so load from the root and keep the store files.
  for (const loaded of loadFixtures(dirname(dirname(fixturesDir)))) {
    if (loaded.content.kind !== 'store' || !loaded.path.startsWith('v1/store/')) continue;
    const cases = loaded.content.cases;
    for (const [index, fixtureCase] of cases.entries()) {
      await record(
        `reader/store/${loaded.path.slice('v1/store/'.length)}#${index}`,
        fixtureCase.description,
        'reader',
        fixtureCase.requirements,
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
            const reading = await adapterReading(
              process,
              root,
              fixtureCase.mode ?? 'tolerant',
              fixtureCase.audit === true,
            );
            const replay: StoreObservation['replay'][number][] = [];
            for (const { file, after } of fixtureCase.expect.replay ?? []) {
              const answer = await process.request('replay', { file: join(root, file), after });
              replay.push({ file, after, ...answer });
            }
            return { failures: compareStoreObservation(fixtureCase, { ...reading, replay }) };
          } finally {
            rmSync(root, { recursive: true, force: true });
          }
        },
      );
    }
  }

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
        const failures = await compareGenerated(session, store.files);
        if (failures.length === 0) return { failures: [] };
        // Shrink: drop lines while the adapter still disagrees with the reference, then save the counterexample
        // as a store fixture case that replays it (TJ-CONF-010).
        const shrunk = await shrink(session, store.files);
        const counterexample = await asFixtureCase(shrunk, `generated case ${index}, seed ${caseSeed}`);
        // A fresh directory per failure: two runs with one seed (CI jobs in parallel) never overwrite each other.
        const path = join(
          mkdtempSync(join(tmpdir(), `tj-conformance-counterexample-${caseSeed}-`)),
          'counterexample.json',
        );
        writeFileSync(path, `${JSON.stringify(counterexample, null, 2)}\n`);
        return {
          failures: [
            ...failures,
            `perturbations: ${store.perturbations.join(', ') || 'none'}`,
            `seed ${caseSeed} (run seed ${seed}, case ${index}); shrunk counterexample written to ${path}:`,
            truncate(JSON.stringify(shrunk), 2000),
            `after shrinking: ${(await compareGenerated(session, shrunk)).join('; ')}`,
          ],
        };
      },
    );
  }
}

type StoreFiles = { readonly path: string; readonly text: string }[];

async function asFixtureCase(files: StoreFiles, description: string): Promise<StoreFixtureCase> {
  const root = freshDir('tj-conf-gen-');
  try {
    writeStoreFixture(root, { files });
    const expected = relativeReading(await readStoreReference([root]), root);
    return {
      description,
      requirements: GENERATED_REQUIREMENTS,
      files,
      expect: {
        turns: expected.turns as Record<string, Record<string, string>>,
        findings: expected.findings.map((f) =>
          Object.fromEntries(Object.entries(f).filter(([, v]) => v !== undefined)),
        ) as NonNullable<StoreFixtureCase['expect']['findings']>,
      },
    };
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function compareGenerated(session: Session, files: StoreFiles): Promise<string[]> {
  const expected = await asFixtureCase(files, 'generated');
  const root = freshDir('tj-conf-gen-');
  try {
    writeStoreFixture(root, { files });
    const process = await session.get();
    const reading = await adapterReading(process, root, 'tolerant', false);
    return compareStoreObservation(expected, { ...reading, replay: [] });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

async function shrink(session: Session, files: StoreFiles): Promise<StoreFiles> {
  let current = files.filter((f) => f.text !== '');
  let budget = 150;
  let progress = true;
  while (progress && budget > 0) {
    progress = false;
    for (let f = 0; f < current.length && budget > 0; f++) {
      const lines = (current[f] as StoreFiles[number]).text.split(/(?<=\n)/);
      for (let l = 0; l < lines.length && budget > 0; l++) {
        const text = [...lines.slice(0, l), ...lines.slice(l + 1)].join('');
        const candidate =
          text === ''
            ? current.filter((_, i) => i !== f)
            : current.map((file, i) => (i === f ? { path: file.path, text } : file));
        if (candidate.length === 0) continue;
        budget--;
        const failures = await compareGenerated(session, candidate).catch(() => ['adapter failure']);
        if (failures.length > 0) {
          current = candidate;
          progress = true;
          break;
        }
      }
      if (progress) break;
    }
  }
  return current;
}

// ---- writer tier -------------------------------------------------------------------------------------------------

interface Target {
  readonly family: 'turn' | 'event';
  readonly root: string;
  readonly file: string;
}

function target(claims: StartResult, dir: string): Target {
  const family = claims.families.includes('turn') ? 'turn' : 'event';
  const file = family === 'turn' ? join(dir, '_turn_journal', 's1.jsonl') : join(dir, 's1', 'events.jsonl');
  mkdirSync(dirname(file), { recursive: true });
  return { family, root: dir, file };
}

/** A record carrying its sequence number in an unknown member, so the oracle can find it in the file. */
export function writerRecord(family: 'turn' | 'event', seq: number, random: Random): Record<string, unknown> {
  const padding = 'x'.repeat(random.int(0, 300));
  return family === 'turn'
    ? {
        version: 1,
        event: 'submitted',
        turn_id: `t${String(seq).padStart(6, '0')}`,
        session_id: 's1',
        created_at: 1_770_000_000 + seq,
        role: 'user',
        content: `message ${seq} ${padding}`,
        x_tj_seq: seq,
      }
    : {
        seq,
        ts: '2026-06-19T03:14:07Z',
        type: 'message_append',
        payload: { message: { role: 'user', content: `message ${seq} ${padding}` } },
        x_tj_seq: seq,
      };
}

/** The `x_tj_seq` of the records in a file, in file order, and every finding of reading it. */
async function survivors(file: string): Promise<{ seqs: number[]; findings: string[]; torn: boolean }> {
  const seqs: number[] = [];
  const findings: string[] = [];
  let torn = false;
  for await (const batch of readJournal(file)) {
    for (const item of batch) {
      if (item.kind === 'record') seqs.push(item.record.value.x_tj_seq as number);
      else if (item.finding.code === 'torn_tail') torn = true;
      else if (item.finding.code !== 'blank_line') findings.push(`${item.finding.code} at line ${item.finding.line}`);
    }
  }
  return { seqs, findings, torn };
}

function prefixProblems(seqs: readonly number[], expectedLength?: number): string[] {
  const problems: string[] = [];
  const bad = seqs.findIndex((s, i) => s !== i);
  if (bad >= 0)
    problems.push(
      `records are not a gap-free prefix in append order: position ${bad} holds x_tj_seq ${seqs[bad]} (${truncate(JSON.stringify(seqs), 300)})`,
    );
  if (expectedLength !== undefined && seqs.length !== expectedLength)
    problems.push(`expected ${expectedLength} records, found ${seqs.length}`);
  return problems;
}

async function writerTier(
  claims: StartResult,
  options: ConformanceOptions,
  rounds: number,
  seed: number,
  timeoutMs: number,
  record: Record_,
): Promise<void> {
  const modes = claims.durability.filter((d) => d === 'every' || d === 'group');
  const families = claims.families.filter((f) => f === 'turn' || f === 'event');
  let usable = true;
  await record(
    'writer/claims',
    'a writer supports the every mode and the turn or event family',
    'writer',
    ['TJ-DUR-011', 'TJ-DUR-013'],
    async () => {
      const failures: string[] = [];
      if (!claims.durability.includes('every')) failures.push('durability every is not claimed (TJ-DUR-011)');
      if (families.length === 0) failures.push('the writer tier needs the turn or event family');
      usable = modes.length > 0 && families.length > 0;
      return { failures };
    },
  );
  if (!usable) return;
  const spawn = () => AdapterProcess.spawn(options.adapter, { timeoutMs });
  const start = async (process: AdapterProcess) => {
    await process.request('start', { protocol: 1 });
    return process;
  };

  const oracle: string[] = [];
  const restart: string[] = [];
  const killRounds = selected(options, 'writer/ack-oracle') || selected(options, 'writer/restart') ? rounds : 0;
  for (let round = 0; round < killRounds; round++) {
    const roundSeed = (seed ^ 0x5bd1e995) + round * 104_729;
    const random = new Random(roundSeed);
    const durability = modes[round % modes.length] as string;
    const dir = freshDir('tj-conf-writer-');
    const where = target(claims, dir);
    const label = `round ${round} (seed ${roundSeed}, ${durability})`;
    const first = spawn();
    try {
      await start(first);
      const { handle } = (await first.request('open', { file: where.file, durability })) as { handle: string };
      const total = random.int(10, 150);
      const killAfter = random.int(0, total);
      const acked = new Set<number>();
      const errors: string[] = [];
      const appends: Promise<unknown>[] = [];
      if (killAfter === 0) void first.kill();
      for (let seq = 0; seq < total; seq++) {
        appends.push(
          first.request('append', { handle, record: writerRecord(where.family, seq, random) }).then(
            () => {
              acked.add(seq);
              if (acked.size === killAfter) void first.kill();
            },
            (error: unknown) => {
              if (!(error instanceof AdapterFailure && error.kind === 'exited')) errors.push(String(error));
            },
          ),
        );
      }
      await Promise.all(appends);
      await first.kill();
      for (const error of errors.slice(0, 3)) oracle.push(`${label}: append failed: ${error}`);
      const after = await survivors(where.file);
      const problems = [...prefixProblems(after.seqs), ...after.findings.map((f) => `damage: ${f}`)];
      const lost = [...acked].filter((seq) => !after.seqs.includes(seq));
      if (lost.length > 0)
        problems.push(
          `acknowledged records lost: x_tj_seq ${truncate(JSON.stringify(lost.sort((a, b) => a - b)), 200)}`,
        );
      for (const p of problems) oracle.push(`${label}: ${p} (${acked.size} acked of ${total} sent)`);

      // Restart: open must take over the dead writer's lock and repair the torn tail; then append and close.
      const k = after.seqs.length;
      const second = await start(spawn());
      try {
        const reopened = (await second.request('open', { file: where.file, durability })) as { handle: string };
        const more = random.int(1, 10);
        await Promise.all(
          Array.from({ length: more }, (_, i) =>
            second.request('append', { handle: reopened.handle, record: writerRecord(where.family, k + i, random) }),
          ),
        );
        await second.request('close', { handle: reopened.handle });
        const code = await second.stop();
        if (code !== 0) restart.push(`${label}: the adapter exited with ${code} after stop`);
        const final = await survivors(where.file);
        for (const p of prefixProblems(final.seqs, k + more)) restart.push(`${label}: after restart: ${p}`);
        if (final.torn) restart.push(`${label}: the file ends in a torn tail after close`);
        for (const f of final.findings) restart.push(`${label}: after restart: damage: ${f}`);
        const errorsInStore = (await checkStore([where.root])).findings.filter(
          (f) => FINDING_CODES[f.code as keyof typeof FINDING_CODES]?.severity === 'error',
        );
        for (const f of errorsInStore.slice(0, 3)) restart.push(`${label}: after restart: ${f.code}: ${f.message}`);
      } catch (error) {
        restart.push(`${label}: after the kill: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        await second.dispose();
      }
    } catch (error) {
      oracle.push(`${label}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      await first.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  await record(
    'writer/ack-oracle',
    `after SIGKILL at a random moment (${rounds} rounds), every acknowledged record survives exactly once and survivors are a gap-free prefix`,
    'writer',
    ['TJ-CONF-009', 'TJ-CONF-020', 'TJ-CONF-027', 'TJ-DUR-003', 'TJ-DUR-006', 'TJ-DUR-024'],
    async () => (rounds === 0 ? { skip: 'no rounds (--runs 0)' } : { failures: oracle }),
  );
  await record(
    'writer/restart',
    'after a crash, a new writer takes over the lock, repairs the torn tail and appends cleanly',
    'writer',
    ['TJ-DUR-004', 'TJ-DUR-005', 'TJ-DUR-019'],
    async () => (rounds === 0 ? { skip: 'no rounds (--runs 0)' } : { failures: restart }),
  );

  await record(
    'writer/lock',
    'a second writer cannot open a file a live writer holds',
    'writer',
    ['TJ-CONF-026', 'TJ-DUR-017', 'TJ-DUR-018'],
    async () => {
      const dir = freshDir('tj-conf-lock-');
      const where = target(claims, dir);
      const a = spawn();
      const b = spawn();
      try {
        await start(a);
        await start(b);
        const held = (await a.request('open', { file: where.file, durability: modes[0] })) as { handle: string };
        const failures: string[] = [];
        try {
          await b.request('open', { file: where.file, durability: modes[0] });
          failures.push('a second adapter opened a file that another live adapter holds');
        } catch (error) {
          if (!(error instanceof AdapterFailure && error.kind === 'error_response')) throw error;
          if (error.code !== 'journal_locked') failures.push(`expected error journal_locked, got ${error.message}`);
        }
        await a.request('close', { handle: held.handle });
        // Closing releases the lock (TJ-DUR-026): now the second writer may open the file.
        try {
          const reopened = (await b.request('open', { file: where.file, durability: modes[0] })) as {
            handle: string;
          };
          await b.request('close', { handle: reopened.handle });
        } catch (error) {
          failures.push(`after the holder closed, open still fails: ${(error as Error).message}`);
        }
        return { failures };
      } finally {
        await a.dispose();
        await b.dispose();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  await record(
    'writer/torn-tail',
    'opening a file that ends in a torn tail repairs it before appending',
    'writer',
    ['TJ-DUR-004', 'TJ-DUR-005'],
    async () => {
      const dir = freshDir('tj-conf-torn-');
      const where = target(claims, dir);
      const random = new Random(seed);
      const complete = [0, 1].map((seq) => `${JSON.stringify(writerRecord(where.family, seq, random))}\n`).join('');
      writeFileSync(where.file, `${complete}{"version":1,"event":"completed","turn_id":"t000000","crea`);
      const process = spawn();
      try {
        await start(process);
        const { handle } = (await process.request('open', { file: where.file, durability: modes[0] })) as {
          handle: string;
        };
        await process.request('append', { handle, record: writerRecord(where.family, 2, random) });
        await process.request('close', { handle });
        await process.stop();
        const final = await survivors(where.file);
        const failures = prefixProblems(final.seqs, 3);
        for (const f of final.findings) failures.push(`damage: ${f}`);
        if (final.torn) failures.push('the file still ends in a torn tail');
        if (failures.length > 0)
          failures.push(`file: ${truncate(JSON.stringify(readFileSync(where.file, 'utf8')), 600)}`);
        return { failures };
      } finally {
        await process.dispose();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );

  await record(
    'writer/fsync-before-ack',
    'every acknowledged append is covered by an fsync/fdatasync of its file before the acknowledgement (strace)',
    'writer',
    ['TJ-CONF-014', 'TJ-DUR-003'],
    async () => {
      if (options.strace === 'never') return { skip: 'disabled' };
      if (!straceAvailable()) return { skip: 'strace is not available (Linux only): durability before ack unchecked' };
      const dir = freshDir('tj-conf-strace-');
      const where = target(claims, dir);
      const traceFile = join(dir, 'trace.txt');
      const random = new Random(seed + 1);
      const process = AdapterProcess.spawn(options.adapter, { timeoutMs, wrapper: straceWrapper(traceFile) });
      try {
        await start(process);
        const acks: { id: number; seq: number }[] = [];
        for (const durability of modes) {
          const { handle } = (await process.request('open', { file: where.file, durability })) as { handle: string };
          const base = acks.length;
          await Promise.all(
            Array.from({ length: 20 }, (_, i) => {
              const seq = base + i;
              const pending = process.request('append', { handle, record: writerRecord(where.family, seq, random) });
              const id = process.lastRequestId;
              return pending.then(() => acks.push({ id, seq }));
            }),
          );
          await process.request('close', { handle });
        }
        await process.stop();
        const failures = checkSyncBeforeAck(readFileSync(traceFile, 'utf8'), where.file, acks);
        return {
          failures: failures.length > 10 ? [...failures.slice(0, 10), `… ${failures.length - 10} more`] : failures,
        };
      } finally {
        await process.dispose();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}

function finish(
  options: ConformanceOptions,
  tier: ConformanceTier,
  runs: number,
  writerRounds: number,
  seed: number,
  claims: StartResult | null,
  checks: CheckReport[],
  baseline: Map<string, string>,
): ConformanceReport {
  const zero = () => ({
    passed: 0,
    failed: 0,
    warning: 0,
    skipped: 0,
    expected_failure: 0,
    stale_expected_failure: 0,
  });
  const summary = zero();
  const requirements: Record<string, ReturnType<typeof zero>> = {};
  for (const check of checks) {
    summary[check.status]++;
    for (const id of check.requirements) {
      requirements[id] ??= zero();
      (requirements[id] as ReturnType<typeof zero>)[check.status]++;
    }
  }
  // A baseline entry naming no check at all is stale too (TJ-CONF-017).
  const known = new Set(checks.map((c) => c.id));
  for (const [id, reason] of baseline) {
    if (known.has(id)) continue;
    summary.stale_expected_failure++;
    checks.push({
      id,
      title: 'expected-failures entry for a check that does not exist',
      tier: 'adapter',
      requirements: ['TJ-CONF-017'],
      status: 'stale_expected_failure',
      details: [`no such check (reason given: ${reason}): remove the entry`],
      duration_ms: 0,
    });
  }
  return {
    spec: 'v1',
    protocol: 1,
    adapter: {
      command: options.adapter,
      ...(claims === null ? {} : { name: claims.name, version: claims.version, language: claims.language }),
      levels: [...(claims?.levels ?? [])],
      families: [...(claims?.families ?? [])],
      durability: [...(claims?.durability ?? [])],
      features: [...(claims?.features ?? [])],
    },
    options: {
      tier,
      runs,
      writer_rounds: writerRounds,
      seed,
      expected_failures: options.expectedFailuresPath ?? null,
    },
    ok: summary.failed === 0 && summary.stale_expected_failure === 0,
    // A run that passes only thanks to a baseline entry is not a conformance claim (TJ-CONF-003).
    conformant: summary.failed === 0 && summary.stale_expected_failure === 0 && baseline.size === 0,
    summary,
    requirements,
    checks,
  };
}
