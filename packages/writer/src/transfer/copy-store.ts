import type { JournalReader, RecordStore, StoreEntry } from '@turnjournal/reader/record-store';
import { WriterError } from '../errors.js';
import { journalEnd } from '../seam/journal-end.js';

/** One journal or document {@link copyStore} copied. */
export interface CopiedEntry {
  /** Its name in the source store. */
  readonly name: string;
  /** Where it is, in both stores (spec §4.4). */
  readonly location: StoreEntry['location'];
  /** Bytes copied: every committed line of a journal, LF included, or the whole document. */
  readonly bytes: number;
}

/** What {@link copyStore} copied. */
export interface StoreCopy {
  /** Every journal and document, in the source's listing order. */
  readonly entries: readonly CopiedEntry[];
}

/** Bytes read from a source journal at a time: a journal of any size is copied in chunks, never whole. */
const CHUNK_BYTES = 1024 * 1024;

/**
 * Copies every journal and document of `from` into `to` at the same locations (spec §19.1), byte for byte: each
 * journal's committed lines as the source's reader yields them (damaged and invalid lines included, so that every
 * finding survives the copy; a torn tail is not a committed line and stays behind), each document whole. What
 * `turnjournal export` and `import` run, between a file store and a database.
 *
 * The target must hold nothing at any of the source's locations: the copy refuses with `target_not_empty` before it
 * writes anything. Each journal is written as its owner, in one atomic rewrite (TJ-STORE-006), so a crash leaves each
 * one whole or absent. The source is read without locks: copy a store no one writes to, or what is appended during
 * the copy may be left out (each journal is copied up to where it ended when its copy began).
 */
export async function copyStore(from: RecordStore, to: RecordStore): Promise<StoreCopy> {
  const entries: StoreEntry[] = [];
  for await (const entry of from.list()) entries.push(entry);
  const occupied: string[] = [];
  for (const entry of entries) if (await holds(to, entry)) occupied.push(entry.name);
  if (occupied.length > 0)
    throw new WriterError(
      'target_not_empty',
      `${to.name} already holds ${occupied.length} of the locations to copy (${occupied.slice(0, 3).join(', ')}${occupied.length > 3 ? ', …' : ''}): copy into an empty store`,
    );
  const copied: CopiedEntry[] = [];
  for (const entry of entries) {
    const { location } = entry;
    if (location.family === 'state') {
      const bytes = await from.readDocument(location);
      if (bytes === undefined) continue;
      await to.replaceDocument(location, bytes);
      copied.push({ name: entry.name, location, bytes: bytes.length });
      continue;
    }
    const reader = await from.openReader(location);
    try {
      const end = await committedEnd(reader);
      const journal = await to.openJournal(location, { durability: 'group' });
      try {
        await journal.rewrite(chunksOf(reader, end));
      } finally {
        await journal.close();
      }
      copied.push({ name: entry.name, location, bytes: end });
    } finally {
      await reader.close();
    }
  }
  return { entries: copied };
}

/** True when `store` holds a document, or a journal with at least one line, at the entry's location. */
async function holds(store: RecordStore, entry: StoreEntry): Promise<boolean> {
  const { location } = entry;
  if (location.family === 'state') return (await store.readDocument(location)) !== undefined;
  return ((await journalEnd(store, location)) ?? 0) > 0;
}

/**
 * Where the journal's committed lines end: after its last LF. A file's bytes can go on past it (pre-allocated space, a
 * torn tail, a line being written, see JournalReader.end), and none of that is a line to copy.
 */
async function committedEnd(reader: JournalReader): Promise<number> {
  let position = await reader.end();
  while (position > 0) {
    const length = Math.min(64 * 1024, position);
    const buffer = new Uint8Array(length);
    const read = await reader.read(buffer, 0, length, position - length);
    if (read !== length)
      throw new WriterError('source_changed', `${reader.name} shrank while its last line was looked for`);
    const lf = buffer.lastIndexOf(0x0a);
    if (lf >= 0) return position - length + lf + 1;
    position -= length;
  }
  return 0;
}

/** The journal's committed lines up to `end`, in chunks. */
async function* chunksOf(reader: JournalReader, end: number): AsyncGenerator<Uint8Array> {
  for (let position = 0; position < end; ) {
    const buffer = new Uint8Array(Math.min(CHUNK_BYTES, end - position));
    const read = await reader.read(buffer, 0, buffer.length, position);
    if (read === 0)
      throw new WriterError(
        'source_changed',
        `${reader.name} ended at byte ${position}, before the ${end} bytes it had: it was rewritten during the copy`,
      );
    yield buffer.subarray(0, read);
    position += read;
  }
}
