import { type JournalSource, readJournal, seekEventSeq } from '@turnjournal/reader';
import { isAcceptedRecord } from '@turnjournal/schema';
import type { FileSystem } from '@turnjournal/writer/file-system';
import type { LiveRecord } from './records.js';

/** What {@link DiskReader.readAfter} found. */
export type DiskBatch =
  | { readonly kind: 'records'; readonly records: readonly LiveRecord[] }
  | { readonly kind: 'compacted' };

const CHUNK_BYTES = 64 * 1024;
/**
 * Most bytes of records per batch (the batch ends after the record that reaches it, so it holds one at least): what a
 * subscriber catching up holds (TJ-LIVE-011). A count alone let 256 records of large tool results or checkpoints,
 * each up to the line limit, make one batch of gigabytes.
 */
const BATCH_BYTES = 4 * 1024 * 1024;

/**
 * Reads a session's event log from the store for subscribers whose cursor is older than the in-memory window
 * (TJ-LIVE-012): finds where the records after the cursor start by bisection on byte offsets (the log is its own
 * index, since seq grows with the offset), then reads forward from there. The file is read through the writer's
 * file-system layer, by the path the writer reports: the hub never builds a path.
 */
export class DiskReader {
  readonly #fs: FileSystem;
  readonly #path: string;
  #fd: Promise<number> | null = null;

  /**
   * @param fs the file-system layer the writer uses
   * @param path the event log's path, as its writer reports it
   */
  constructor(fs: FileSystem, path: string) {
    this.#fs = fs;
    this.#path = path;
  }

  /** Forgets the open descriptor (after a compaction replaced the file). */
  async reopen(): Promise<void> {
    const fd = this.#fd;
    this.#fd = null;
    if (fd !== null) await fd.then((n) => this.#fs.close(n)).catch(() => undefined);
  }

  /** Closes the descriptor. */
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
    if (this.#fd === null) this.#fd = this.#fs.open(this.#path, 'read');
    const fd = await this.#fd;
    const fs = this.#fs;
    const source: JournalSource = {
      read: (buffer, offset, length, position) => fs.read(fd, buffer, offset, length, position),
    };
    const size = (await fs.fstat(fd)).size;
    const start = await seekEventSeq(after + 1, { source, size });
    const records: LiveRecord[] = [];
    let last = after;
    let bytes = 0;
    reading: for await (const batch of readJournal(this.#path, {
      source,
      startOffset: start,
      chunkBytes: CHUNK_BYTES,
    })) {
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
        last = seq;
        bytes += item.record.bytes.length;
        if (records.length >= limit || bytes >= BATCH_BYTES) break reading;
      }
    }
    return { kind: 'records', records };
  }
}
