import { type EventLogStart, generateEventLogStore } from '../generate-event-log.js';
import { generateSizedStore } from '../generate-sized.js';
import type { StartResult } from '../protocol.js';
import { Random } from '../random.js';
import { generatedCaseOutcome } from './generated-cases.js';
import type { CheckRecorder } from './record.js';
import type { Session } from './session.js';

// The reader tier beyond turn stores (issue 37, TJ-CONF-060): the adapter's `read` (and `replay`) answers compared
// with the reference reader's on generated event logs, on logs that begin as compaction leaves them, and on stores of
// tiny and huge records read with a limit of their own. Each class's number of cases is chosen for a stated catch
// probability and scales with `--runs`.

/** One class of generated reader cases. */
interface GeneratedClass {
  /** Check id prefix; each case is `<id>#<index>`. */
  readonly id: string;
  /** What a case is, for its title. */
  readonly noun: string;
  /** Cases in a default run (`--runs 100`). */
  readonly cases: number;
  /** The share of cases a defect is assumed to show in: the cases catch it with probability 1 − (1 − share)^cases. */
  readonly share: number;
  /** Added to the run seed so that each class draws its own cases. */
  readonly seedOffset: number;
  /** The families a case needs one of. */
  readonly families: readonly ('turn' | 'event')[];
}

/**
 * Event logs, fresh and compacted: 44 cases each catch, with probability 99.0 %, a defect that one generated log store
 * in ten shows (1 − 0.9^44). Stores of tiny and huge records: 21 cases catch one that one store in five shows with
 * probability 99.1 % (1 − 0.8^21); each holds several lines near its limit, so a limit counted wrong shows in most.
 */
export const GENERATED_CLASSES: readonly GeneratedClass[] = [
  {
    id: 'reader/generated-event-log',
    noun: 'event log store',
    cases: 44,
    share: 0.1,
    seedOffset: 1_000_003,
    families: ['event'],
  },
  {
    id: 'reader/generated-compacted',
    noun: 'compacted event log store',
    cases: 44,
    share: 0.1,
    seedOffset: 2_000_003,
    families: ['event'],
  },
  {
    id: 'reader/generated-sizes',
    noun: 'store of tiny and huge records',
    cases: 21,
    share: 0.2,
    seedOffset: 3_000_017,
    families: ['turn', 'event'],
  },
];

/** The cases of a class in a run of `runs` (TJ-CONF-060: scaled by `--runs`, at least one unless `--runs 0`). */
export function generatedCaseCount(cases: number, runs: number): number {
  return runs <= 0 ? 0 : Math.max(1, Math.ceil((cases * runs) / 100));
}

/** The probability that `cases` cases catch a defect shown by a share `share` of them, as a percentage. */
export function catchPercent(cases: number, share: number): string {
  return (100 * (1 - (1 - share) ** cases)).toFixed(1);
}

/** Requirements an event-log case checks: the fold, the seq checks, unknown and extension records, framing. */
const EVENT_LOG_REQUIREMENTS = [
  'TJ-CONF-060',
  'TJ-AUDIT-001',
  'TJ-AUDIT-003',
  'TJ-EVENT-013',
  'TJ-EVENT-014',
  'TJ-EVENT-015',
  'TJ-EVENT-016',
  'TJ-EVENT-025',
  'TJ-REPLAY-001',
  'TJ-REPLAY-002',
  'TJ-REPLAY-009',
  'TJ-REPLAY-010',
  'TJ-REPLAY-015',
  'TJ-COMPAT-005',
  'TJ-COMPAT-006',
  'TJ-FRAME-002',
  'TJ-FRAME-003',
  'TJ-FRAME-013',
  'TJ-FRAME-014',
  'TJ-FRAME-016',
  'TJ-FRAME-026',
];

/** With feature `replay`, each log is also replayed from cursors at its start, middle and end. */
const REPLAY_REQUIREMENTS = ['TJ-REPLAY-012', 'TJ-REPLAY-013', 'TJ-REPLAY-014'];

/** Requirements a case of tiny and huge records checks: the limit, counted in bytes, given by the request. */
const SIZE_REQUIREMENTS = [
  'TJ-CONF-060',
  'TJ-CONF-031',
  'TJ-FRAME-031',
  'TJ-FRAME-032',
  'TJ-FRAME-013',
  'TJ-COMPAT-006',
  'TJ-AUDIT-003',
];

/** The files of a store a reader of `families` reads: a family not claimed is left out, not judged. */
function claimedFiles<T extends { readonly path: string }>(files: readonly T[], families: readonly string[]): T[] {
  return files.filter((file) =>
    file.path.startsWith('_turn_journal/') ? families.includes('turn') : families.includes('event'),
  );
}

/** `reader/generated-event-log#N`, `reader/generated-compacted#N` and `reader/generated-sizes#N`. */
export async function generatedReaderChecks(
  session: Session,
  claims: StartResult,
  settings: { readonly runs: number; readonly seed: number },
  recorder: CheckRecorder,
): Promise<void> {
  const { runs, seed } = settings;
  const replay = (claims.features ?? []).includes('replay');
  for (const generated of GENERATED_CLASSES) {
    const count = generatedCaseCount(generated.cases, runs);
    const sizes = generated.id === 'reader/generated-sizes';
    const requirements = sizes
      ? SIZE_REQUIREMENTS
      : [...EVENT_LOG_REQUIREMENTS, ...(replay ? REPLAY_REQUIREMENTS : [])];
    const odds = `the ${count} catch a defect shown by one in ${Math.round(1 / generated.share)} with probability ${catchPercent(count, generated.share)} %`;
    for (let index = 0; index < count; index++) {
      const caseSeed = (seed + generated.seedOffset + index * 7919) >>> 0;
      await recorder.record(
        `${generated.id}#${index}`,
        `generated ${generated.noun} ${index + 1} of ${count} (seed ${caseSeed}; ${odds})`,
        'reader',
        requirements,
        async () => {
          const families = generated.families.filter((f) => claims.families.includes(f));
          if (families.length === 0) return { skip: `family ${generated.families.join(' or ')} not claimed` };
          const random = new Random(caseSeed);
          const name = `${generated.id.slice('reader/'.length)} case ${index}`;
          const label = { caseSeed, seed, name };
          if (sizes) {
            const store = generateSizedStore(random);
            const files = claimedFiles(store.files, claims.families);
            return generatedCaseOutcome(session, { ...store, files }, requirements, label, {
              maxLineBytes: store.maxLineBytes,
            });
          }
          const start: EventLogStart = generated.id === 'reader/generated-compacted' ? 'compacted' : 'fresh';
          return generatedCaseOutcome(session, generateEventLogStore(random, start), requirements, label, { replay });
        },
      );
    }
  }
}
