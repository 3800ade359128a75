import { writeFileSync } from 'node:fs';
import type { AdapterProcess } from '../../process.js';
import { type JournalSource, parseRecords } from './answers.js';
import { openHandle, type WriterContext } from './context.js';
import { heldBytes } from './store-lines.js';

// How a check of the writer's own decisions (features lifecycle and retention) reads back and plants the journals it
// names: at their paths, or, with feature `store-lines`, through the adapter (adapter.md §5.8) — `lines` to read, and
// `open`/`append`/`close` to plant, so that a writer on a record store meets the same starting logs.

/** A check's access to the journals it names, through one adapter process. */
export interface JournalAccess {
  /** The bytes of the journal's committed lines, each with its LF. */
  bytes(file: string): Promise<Buffer>;
  /** The journal's bytes as a source {@link expectRefused} compares before and after a refusal. */
  source(file: string): JournalSource;
  /** The journal's records; a line that is not a JSON record is added to `failures`. */
  records(file: string, failures: string[]): Promise<Record<string, unknown>[]>;
  /**
   * Makes `text` (whole lines, each a record in compact JSON) the start of the journal `file`, which the store does not
   * hold yet: written to the file, or with `store-lines` each record appended through the adapter — the same bytes, as
   * an adapter appends a record as its compact JSON with its members in order (TJ-CONF-027).
   */
  plant(file: string, text: string): Promise<void>;
}

/** The journal access of a check whose requests go to `process`. */
export function journalAccess(context: WriterContext, process: AdapterProcess): JournalAccess {
  const bytes = (file: string) => heldBytes(context, file, process);
  return {
    bytes,
    source: (file) => () => bytes(file),
    records: async (file, failures) => parseRecords(await bytes(file), failures),
    plant: async (file, text) => {
      if (!context.storeLines) {
        writeFileSync(file, text);
        return;
      }
      const handle = await openHandle(process, file, 'every');
      for (const line of text.split('\n').filter((l) => l !== ''))
        await process.request('append', { handle, record: JSON.parse(line) });
      await process.request('close', { handle });
    },
  };
}
