import type { JournalItem } from '@turnjournal/reader';
import type { JournalReader } from '@turnjournal/reader/record-store';
import { isAcceptedRecord } from '@turnjournal/schema';
import type { LiveRecord } from './records.js';

/** What {@link DiskReader.readAfter} found. */
export type DiskBatch =
  | {
      readonly kind: 'records';
      readonly records: readonly LiveRecord[];
      /** The length of each record's line, in bytes: what it weighs in a window of records. */
      readonly sizes: readonly number[];
    }
  | { readonly kind: 'compacted' };

/**
 * Most bytes of records per batch (the batch ends after the record that reaches it, so it holds one at least): what a
 * subscriber catching up holds (TJ-LIVE-011). A count alone let 256 records of large tool results or checkpoints,
 * each up to the line limit, make one batch of gigabytes.
 */
const BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Reads a session's event log from the store for subscribers whose cursor is older than the in-memory window
 * (TJ-LIVE-012), and for followers (TJ-LIVE-042): finds where the records after the cursor start by the store's seek
 * (TJ-STORE-005; a file store bisects on byte offsets, since seq grows with the offset), then reads forward from there,
 * starting with the bytes the seek read last where the store can (`JournalReader.recordsFromSeq`).
 * It reads through the record store's reader of the log, by its location: the hub never builds a path.
 */
export class DiskReader {
  readonly #open: () => Promise<JournalReader>;
  #reader: Promise<JournalReader> | null = null;

  /** @param open opens a reader of the event log (the store's `openReader` of its location) */
  constructor(open: () => Promise<JournalReader>) {
    this.#open = open;
  }

  /** Forgets the open reader (after a compaction replaced the log's lines). */
  async reopen(): Promise<void> {
    const reader = this.#reader;
    this.#reader = null;
    // An open that failed was the answer of the read that made it (and the next read opens again): only an open
    // reader is closed, and a failure to close it is the caller's to hear.
    if (reader !== null) await reader.then((open) => open.close(), openAlreadyAnswered);
  }

  /** Closes the reader. */
  close(): Promise<void> {
    return this.reopen();
  }

  /**
   * The consecutive accepted records from `after + 1` on, through `through`, at most `limit` of them and about
   * {@link BATCH_BYTES} of their lines; `compacted`
   * when the log does not hold `after + 1` (compaction removed it, TJ-LIVE-010, or a crash lost it before it was ever
   * durable, TJ-LIVE-018). The batch stops before any later jump in seq: a crash can lose an unsynced record while a
   * later unsynced one survives (the reader salvages it after the zero-filled region, TJ-FRAME-029), and a batch
   * that went on past the hole would make the subscriber skip a seq silently; the next read then starts at the hole
   * and answers `compacted`.
   */
  async readAfter(after: number, through: number, limit: number): Promise<DiskBatch> {
    if (this.#reader === null) {
      const opening = this.#open();
      this.#reader = opening;
      // A failed open is answered to the read awaiting it below, and not kept: the next read tries again.
      opening.catch(() => {
        if (this.#reader === opening) this.#reader = null;
      });
    }
    const reader = await this.#reader;
    const end = await reader.end();
    const records: LiveRecord[] = [];
    const sizes: number[] = [];
    let last = after;
    let bytes = 0;
    reading: for await (const batch of recordsFromSeq(reader, after + 1, end)) {
      for (const item of batch) {
        if (item.kind !== 'record') continue;
        const { validation, value } = item.record;
        if (!isAcceptedRecord(validation) || validation.classification.family !== 'event') continue;
        const seq = value.seq as number;
        if (seq <= last) continue;
        if (seq !== last + 1) {
          if (records.length === 0) return { kind: 'compacted' };
          break reading;
        }
        if (seq > through) break reading;
        records.push(value as unknown as LiveRecord);
        sizes.push(item.record.bytes.length + 1);
        last = seq;
        bytes += item.record.bytes.length;
        if (records.length >= limit || bytes >= BATCH_BYTES) break reading;
      }
    }
    return { kind: 'records', records, sizes };
  }
}

/** The records from where `reader`'s seek to `target` lands, through `to`: in one read where the store can. */
async function* recordsFromSeq(reader: JournalReader, target: number, to: number): AsyncGenerator<JournalItem[]> {
  if (reader.recordsFromSeq !== undefined) yield* reader.recordsFromSeq(target, { to });
  else yield* reader.records({ from: await reader.seekSeq(target, { to }), to });
}

/** The settled value of a reader whose open failed: its failure was answered to the read that opened it. */
function openAlreadyAnswered(): undefined {
  return undefined;
}
