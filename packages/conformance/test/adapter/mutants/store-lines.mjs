// Record-store writers that break one rule of the seam (spec §19.1), seen through feature `store-lines` (adapter.md
// §5.8): the reference writer on a record store with one defect each. The harness reads what they hold through
// `lines` only, so each defect is caught by the records, not by the files.
import { appendFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AdapterRequestError, referenceStoreLinesImplementation } from '@turnjournal/conformance';
import { safeParseStorePath, storePathSegments } from '@turnjournal/reader/store-format';
import { isAcceptedRecord, validateRecord } from '@turnjournal/schema';
import { JournalLockedError } from '@turnjournal/writer';

const reference = referenceStoreLinesImplementation;
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

/** Where the store-lines reference keeps the journal a harness path names (its private file store). */
function privatePath(file) {
  const segments = file.split('/');
  const relative = storePathSegments(safeParseStorePath(segments));
  return join(segments.slice(0, -relative.length).join('/'), '.store-lines', ...relative);
}

/** The reference's append refusals, for a defect that answers before the reference writer would. */
function refuseInvalid(record) {
  if (!isAcceptedRecord(validateRecord(record))) throw new AdapterRequestError('bad_request', 'invalid record');
}

export const storeLinesDefects = {
  // Not a defect: the reference writer on a record store (the control of the defects below).
  'store-lines': {},
  // TJ-STORE-001: a journal another owner holds is opened anyway, as an unowned appender to the same lines.
  'store-no-owner': {
    open: async (file, durability) => {
      try {
        return await reference.open(file, durability);
      } catch (error) {
        if (!(error instanceof JournalLockedError)) throw error;
        const path = privatePath(file);
        mkdirSync(dirname(path), { recursive: true });
        return {
          append: async (record) => {
            refuseInvalid(record);
            appendFileSync(path, `${JSON.stringify(record)}\n`);
          },
          close: async () => undefined,
        };
      }
    },
  },
  // TJ-STORE-002 / TJ-CONF-052: the journal's reader leaves out its last committed line.
  'store-lines-drops-last': {
    lines: async (file) => (await reference.lines(file)).slice(0, -1),
  },
  // TJ-STORE-003: an append is acknowledged when it is queued, and handed to the journal 20 ms later (a commit timer),
  // so the acknowledged lines of the last 20 ms die with the process.
  'store-ack-before-append': {
    open: async (file, durability) => {
      const journal = await reference.open(file, durability);
      let queue = Promise.resolve();
      return {
        append: async (record) => {
          refuseInvalid(record);
          queue = queue.then(() => sleep(20)).then(() => journal.append(record));
        },
        close: async () => {
          await queue;
          await journal.close();
        },
      };
    },
  },
  // TJ-STORE-004: every second append waits 3 ms before it reaches the journal, so pipelined appends overtake it.
  'store-appends-reordered': {
    open: async (file, durability) => {
      const journal = await reference.open(file, durability);
      let calls = 0;
      return {
        append: async (record) => {
          calls += 1;
          if (calls % 2 === 0) await sleep(3);
          await journal.append(record);
        },
        close: () => journal.close(),
      };
    },
  },
};

/** The capabilities every store-lines defect claims: the reference's, named after the defect. */
export function storeLinesImplementation(defect) {
  return { ...reference, ...storeLinesDefects[defect] };
}
