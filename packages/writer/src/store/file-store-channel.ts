import { dirname, join } from 'node:path';
import type { StoreChannel } from '@turnjournal/reader/record-store';
import { EVENT_LOG_FILE_NAME } from '@turnjournal/reader/store-format';
import { ensureDirectory } from '../fs/durable-ops.js';
import type { FileSystem } from '../fs/file-system.js';

/** The suffix of an event log's durable mark (spec §16.3): `<sessionId>/events.jsonl.durable`. */
export const DURABLE_MARK_SUFFIX = '.durable';
/** Bytes of a mark: the seq in decimal, padded with spaces, then LF; one write replaces it whole. */
const MARK_BYTES = 24;
const DEFAULT_POLL_MS = 25;
/**
 * How long an announcement waits before its mark is written: the announcements of that time share one write. Followers
 * poll every few tens of milliseconds, so an earlier mark reaches none of them sooner; a write per commit would sit on
 * the commit path of every session, followed or not.
 */
const MARK_DELAY_MS = 2;

interface Listening {
  readonly listeners: Set<(seq: number | undefined) => void>;
  last: number;
  timer: ReturnType<typeof setInterval> | undefined;
  polling: boolean;
}

interface Publishing {
  fd: Promise<number> | undefined;
  /** The write due (after {@link MARK_DELAY_MS}) or under way; writes run one after another, each with the latest seq. */
  running: Promise<void> | undefined;
  next: number | undefined;
  written: number;
}

/**
 * The file store's {@link StoreChannel} (TJ-STORE-007). Inside the process, announcements reach the store's listeners
 * directly. Across processes on one host, an owner writes each durable seq into the event log's durable mark (a
 * small file beside it, never synced: its readers share the host's page cache, and after a crash the next owner's
 * open makes the whole log durable) and listeners of other processes poll it. A listener may miss seqs between two
 * polls, never get one that was not announced, and is told `undefined` when it starts, so it reads the end itself.
 */
export class FileStoreChannel implements StoreChannel {
  readonly #fs: FileSystem;
  readonly #root: string;
  readonly #pollMs: number;
  readonly #listening = new Map<string, Listening>();
  readonly #publishing = new Map<string, Publishing>();

  constructor(fs: FileSystem, root: string, pollMs = DEFAULT_POLL_MS) {
    this.#fs = fs;
    this.#root = root;
    this.#pollMs = pollMs;
  }

  #markPath(sessionId: string): string {
    return join(this.#root, sessionId, `${EVENT_LOG_FILE_NAME}${DURABLE_MARK_SUFFIX}`);
  }

  publish(sessionId: string, seq: number): Promise<void> {
    const here = this.#listening.get(sessionId);
    if (here !== undefined && seq > here.last) {
      here.last = seq;
      for (const listener of [...here.listeners]) listener(seq);
    }
    let mark = this.#publishing.get(sessionId);
    if (mark === undefined) {
      mark = { fd: undefined, running: undefined, next: undefined, written: Number.NEGATIVE_INFINITY };
      this.#publishing.set(sessionId, mark);
    }
    if (seq <= mark.written || (mark.next !== undefined && seq <= mark.next)) return mark.running ?? Promise.resolve();
    mark.next = seq;
    mark.running ??= this.#writeMarks(sessionId, mark);
    return mark.running;
  }

  async #writeMarks(sessionId: string, mark: Publishing): Promise<void> {
    try {
      await new Promise((resolve) => setTimeout(resolve, MARK_DELAY_MS));
      while (mark.next !== undefined) {
        const seq = mark.next;
        mark.next = undefined;
        const path = this.#markPath(sessionId);
        if (mark.fd === undefined) {
          const opening = ensureDirectory(this.#fs, dirname(path)).then(() => this.#fs.open(path, 'read-write'));
          mark.fd = opening;
          // A mark that could not be opened is opened again by the next announcement, not failed for ever.
          opening.catch(() => {
            if (mark.fd === opening) mark.fd = undefined;
          });
        }
        const fd = await mark.fd;
        const text = `${String(seq).padEnd(MARK_BYTES - 1, ' ')}\n`;
        await this.#fs.write(fd, Buffer.from(text, 'latin1'), 0, MARK_BYTES, 0, { awaited: true });
        mark.written = seq;
      }
    } finally {
      mark.running = undefined;
    }
  }

  /** Closes the mark of `sessionId` this process writes (its owner closed the session); the mark file stays. */
  async release(sessionId: string): Promise<void> {
    const mark = this.#publishing.get(sessionId);
    if (mark === undefined) return;
    this.#publishing.delete(sessionId);
    // A write that fails rejects the announcement that started it, whose caller reports it (the hub's `channel`
    // task): here only its end is waited for, so that the descriptor is closed after it.
    await mark.running?.then(settled, settled);
    const fd = await mark.fd?.then((opened) => opened, settled);
    if (fd !== undefined) await this.#fs.close(fd);
  }

  listen(sessionId: string, listener: (seq: number | undefined) => void): () => void {
    let entry = this.#listening.get(sessionId);
    if (entry === undefined) {
      entry = { listeners: new Set(), last: -1, timer: undefined, polling: false };
      this.#listening.set(sessionId, entry);
      const polled = entry;
      polled.timer = setInterval(() => void this.#poll(sessionId, polled), this.#pollMs);
      polled.timer.unref();
    }
    entry.listeners.add(listener);
    queueMicrotask(() => {
      if (entry.listeners.has(listener)) listener(undefined);
    });
    return () => {
      entry.listeners.delete(listener);
      if (entry.listeners.size === 0 && this.#listening.get(sessionId) === entry) {
        clearInterval(entry.timer);
        this.#listening.delete(sessionId);
      }
    };
  }

  async #poll(sessionId: string, entry: Listening): Promise<void> {
    if (entry.polling) return;
    entry.polling = true;
    try {
      const seq = await this.durableSeq(sessionId);
      if (seq > entry.last) {
        entry.last = seq;
        for (const listener of [...entry.listeners]) listener(seq);
      }
    } catch (error) {
      // A mark that cannot be read now is a missed announcement: listeners re-read the end themselves.
      for (const listener of [...entry.listeners]) listener(undefined);
      if (!isMissing(error)) process.emitWarning(error as Error, { code: 'TURNJOURNAL_CHANNEL_FAILURE' });
    } finally {
      entry.polling = false;
    }
  }

  async durableSeq(sessionId: string): Promise<number> {
    let fd: number;
    try {
      fd = await this.#fs.open(this.#markPath(sessionId), 'read');
    } catch (error) {
      if (isMissing(error)) return -1;
      throw error;
    }
    try {
      const buffer = Buffer.alloc(MARK_BYTES);
      const read = await this.#fs.read(fd, buffer, 0, MARK_BYTES, 0);
      const text = buffer.toString('latin1', 0, read).trim();
      const seq = /^(?:-1|\d{1,16})$/.test(text) ? Number(text) : -1;
      return Number.isSafeInteger(seq) ? seq : -1;
    } finally {
      await this.#fs.close(fd);
    }
  }
}

/** Ends a wait whose failure is reported elsewhere (see `release`). */
function settled(): undefined {
  return undefined;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
