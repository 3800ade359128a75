import { LineViewReader } from '@turnjournal/reader/_internals';
import type {
  JournalAppendAck,
  JournalAppendOptions,
  JournalDurability,
  JournalOpenReport,
  JournalReader,
  ListOptions,
  OpenJournalOptions,
  RecordStore,
  StoreChannel,
  StoreEntry,
  WritableJournal,
  WritableJournalState,
} from '@turnjournal/reader/record-store';
import { type StoreLocation, storePathSegments } from '@turnjournal/reader/store-format';

/** An error with a stable code, as the writers' are. */
export class SimulatedStoreError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'SimulatedStoreError';
    this.code = code;
  }
}

/** One journal of the backing: its lines (each with its LF), how many are durable, its owner and its owner's epoch. */
interface StoredJournal {
  lines: Uint8Array[];
  /** Cursor of each line, and of the end after the last one. */
  starts: number[];
  durable: number;
  owner: SimulatedJournal | null;
  epoch: number;
}

/**
 * What several simulated stores share, as processes share a database: journals, documents, announcements. A "crash"
 * drops what was not durable and every owner with it.
 */
export class SimulatedBacking {
  readonly journals = new Map<string, StoredJournal>();
  readonly documents = new Map<string, Uint8Array>();
  readonly marks = new Map<string, number>();
  /** The location of every journal and document, by key. */
  readonly locations = new Map<string, StoreLocation>();
  readonly listeners = new Map<string, Set<(seq: number | undefined) => void>>();

  journal(key: string): StoredJournal {
    let journal = this.journals.get(key);
    if (journal === undefined) {
      journal = { lines: [], starts: [0], durable: 0, owner: null, epoch: 0 };
      this.journals.set(key, journal);
    }
    return journal;
  }

  /** Loses every line not yet durable and every owner, as a machine crash does. */
  crash(): void {
    for (const journal of this.journals.values()) {
      journal.lines.length = journal.durable;
      journal.starts.length = journal.durable + 1;
      if (journal.owner !== null) journal.owner.lose();
      journal.owner = null;
    }
  }

  /** Another owner takes `key` over (an expired lease): the current owner is fenced at its next append. */
  takeOver(key: string): void {
    const journal = this.journal(key);
    journal.owner = null;
    journal.epoch += 1;
  }
}

const keyOf = (location: StoreLocation): string => storePathSegments(location).join('/');

/** A journal's lines as the codec's byte view. */
function viewOf(journal: StoredJournal) {
  return {
    read: (buffer: Uint8Array, offset: number, length: number, position: number): Promise<number> => {
      let copied = 0;
      // The first line that ends after `position` (binary search over the line starts).
      let lo = 0;
      let hi = journal.lines.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if ((journal.starts[mid + 1] as number) <= position) lo = mid + 1;
        else hi = mid;
      }
      for (let i = lo; i < journal.lines.length && copied < length; i++) {
        const line = journal.lines[i] as Uint8Array;
        const from = Math.max(0, position + copied - (journal.starts[i] as number));
        const part = line.subarray(from, from + (length - copied));
        buffer.set(part, offset + copied);
        copied += part.length;
      }
      return Promise.resolve(copied);
    },
    end: () => Promise.resolve(journal.starts[journal.lines.length] as number),
  };
}

/** A simulated owner of one journal (see {@link SimulatedRecordStore}). */
class SimulatedJournal implements WritableJournal {
  readonly name: string;
  readonly durability: JournalDurability;
  readonly #journal: StoredJournal;
  readonly #epoch: number;
  readonly opened: JournalOpenReport;
  #state: WritableJournalState = 'open';
  /** Appends handed over and not acknowledged yet, and who waits for them to settle. */
  #pending = 0;
  #idle: (() => void)[] = [];
  /** Settles when the rewrite under way has ended; null when none runs. */
  #rewriting: Promise<void> | null = null;

  constructor(name: string, journal: StoredJournal, durability: JournalDurability) {
    this.name = name;
    this.#journal = journal;
    this.#epoch = journal.epoch;
    this.durability = durability;
    this.opened = { created: journal.lines.length === 0, tookOverLock: false, tornTail: null };
  }

  get poisoned(): boolean {
    return this.#state === 'poisoned';
  }

  /** Never: the simulated store's appends do not fail part-way. */
  get interrupted(): boolean {
    return false;
  }

  resume(): void {}

  idle(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  appendLines(lines: Uint8Array): Promise<JournalAppendAck> {
    return this.#append(lines, false);
  }

  get state(): WritableJournalState {
    return this.#state;
  }

  lose(): void {
    this.#state = 'closed';
  }

  #refusal(): SimulatedStoreError | null {
    if (this.#state === 'open' && this.#journal.epoch !== this.#epoch) this.#state = 'fenced';
    if (this.#state === 'open') return null;
    const code =
      this.#state === 'fenced' ? 'journal_fenced' : this.#state === 'closed' ? 'writer_closed' : 'writer_poisoned';
    return new SimulatedStoreError(code, `${this.name} is ${this.#state}`);
  }

  appendLine(line: Uint8Array, _options?: JournalAppendOptions): Promise<JournalAppendAck> {
    return this.#append(line, true);
  }

  async #append(bytes: Uint8Array, single: boolean): Promise<JournalAppendAck> {
    // Appends made while a rewrite runs follow its lines (TJ-STORE-006), as a database's wait for its transaction.
    while (this.#rewriting !== null) await this.#rewriting;
    const refusal = this.#refusal();
    if (refusal !== null) throw refusal;
    const whole = bytes.length > 0 && bytes[bytes.length - 1] === 0x0a;
    if (!whole || (single && bytes.indexOf(0x0a) !== bytes.length - 1))
      throw new SimulatedStoreError('invalid_record', 'an appended line must contain exactly one LF, at its end');
    const journal = this.#journal;
    const cursor = journal.starts[journal.lines.length] as number;
    for (let start = 0; start < bytes.length; ) {
      const lf = bytes.indexOf(0x0a, start);
      journal.lines.push(Uint8Array.from(bytes.subarray(start, lf + 1)));
      journal.starts.push((journal.starts.at(-1) as number) + lf + 1 - start);
      start = lf + 1;
    }
    this.#pending += 1;
    // A commit is asynchronous: the acknowledgement comes after it, as a database's does.
    await Promise.resolve();
    if (this.durability !== 'none') journal.durable = journal.lines.length;
    this.#pending -= 1;
    if (this.#pending === 0) for (const resolve of this.#idle.splice(0)) resolve();
    return { cursor, length: bytes.length };
  }

  async flush(): Promise<void> {
    const refusal = this.#refusal();
    if (refusal !== null) throw refusal;
    this.#journal.durable = this.#journal.lines.length;
  }

  rewrite(lines: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void> {
    const result = (this.#rewriting ?? Promise.resolve()).then(() => this.#rewrite(lines));
    const gate = result.then(
      () => undefined,
      () => undefined,
    );
    this.#rewriting = gate;
    gate.then(() => {
      if (this.#rewriting === gate) this.#rewriting = null;
    });
    return result;
  }

  async #rewrite(lines: Iterable<Uint8Array> | AsyncIterable<Uint8Array>): Promise<void> {
    const refusal = this.#refusal();
    if (refusal !== null) throw refusal;
    const next: Uint8Array[] = [];
    for await (const chunk of lines) next.push(Uint8Array.from(chunk));
    // Chunks are bytes of whole lines: split them at their LFs.
    const bytes = Buffer.concat(next);
    const split: Uint8Array[] = [];
    for (let start = 0; start < bytes.length; ) {
      const lf = bytes.indexOf(0x0a, start);
      if (lf < 0) throw new SimulatedStoreError('invalid_record', 'a rewrite must hold whole lines');
      split.push(bytes.subarray(start, lf + 1));
      start = lf + 1;
    }
    const journal = this.#journal;
    journal.lines = split;
    journal.starts = [0];
    for (const line of split) journal.starts.push((journal.starts.at(-1) as number) + line.length);
    journal.durable = split.length;
  }

  reader(): JournalReader {
    return new LineViewReader(this.name, { ...viewOf(this.#journal), close: () => Promise.resolve() });
  }

  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    if (this.#state === 'open') this.#journal.durable = this.#journal.lines.length;
    this.#state = 'closed';
    if (this.#journal.owner === this) this.#journal.owner = null;
  }
}

/**
 * The simulated record store: a backend of the seam in memory, the second one the contract suite runs against (and a
 * model of a database: commits are asynchronous, announcements may be missed, another owner can fence this one).
 */
export class SimulatedRecordStore implements RecordStore {
  readonly name = 'simulated://store';
  readonly backing: SimulatedBacking;
  readonly channel: StoreChannel;

  constructor(backing: SimulatedBacking = new SimulatedBacking()) {
    this.backing = backing;
    this.channel = {
      publish: async (sessionId, seq) => {
        await Promise.resolve();
        if (seq <= (backing.marks.get(sessionId) ?? -1)) return;
        backing.marks.set(sessionId, seq);
        for (const listener of [...(backing.listeners.get(sessionId) ?? [])]) listener(seq);
      },
      listen: (sessionId, listener) => {
        const listeners = backing.listeners.get(sessionId) ?? new Set();
        backing.listeners.set(sessionId, listeners);
        listeners.add(listener);
        queueMicrotask(() => {
          if (listeners.has(listener)) listener(undefined);
        });
        return () => listeners.delete(listener);
      },
      durableSeq: async (sessionId) => backing.marks.get(sessionId) ?? -1,
      release: async () => undefined,
    };
  }

  async openJournal(location: StoreLocation, options: OpenJournalOptions): Promise<WritableJournal> {
    if (location.family === 'state')
      throw new SimulatedStoreError('invalid_option', 'a state document is not a journal');
    const key = keyOf(location);
    const journal = this.backing.journal(key);
    this.backing.locations.set(key, location);
    if (journal.owner !== null && journal.owner.state === 'open')
      throw new SimulatedStoreError('journal_locked', `${key} is held by another owner`);
    const owner = new SimulatedJournal(`simulated://${key}`, journal, options.durability);
    journal.owner = owner;
    return owner;
  }

  async ownerHeld(location: StoreLocation): Promise<boolean> {
    const owner = this.backing.journals.get(keyOf(location))?.owner;
    return owner !== undefined && owner !== null && owner.state === 'open';
  }

  async openReader(location: StoreLocation): Promise<JournalReader> {
    const key = keyOf(location);
    const journal = this.backing.journals.get(key);
    if (journal === undefined) throw new SimulatedStoreError('not_found', `simulated://${key} does not exist`);
    return new LineViewReader(`simulated://${key}`, { ...viewOf(journal), close: () => Promise.resolve() });
  }

  async *list(options: ListOptions = {}): AsyncGenerator<StoreEntry> {
    const entries: StoreEntry[] = [];
    for (const key of [...this.backing.journals.keys(), ...this.backing.documents.keys()].sort()) {
      const location = this.backing.locations.get(key);
      if (location === undefined) continue;
      if (options.family !== undefined && location.family !== options.family) continue;
      if (options.sessionId !== undefined && (location.family === 'run' || location.sessionId !== options.sessionId))
        continue;
      entries.push({ location, name: `simulated://${key}` });
    }
    yield* entries;
  }

  async readDocument(location: StoreLocation & { readonly family: 'state' }): Promise<Uint8Array | undefined> {
    const bytes = this.backing.documents.get(keyOf(location));
    return bytes === undefined ? undefined : Uint8Array.from(bytes);
  }

  async replaceDocument(location: StoreLocation & { readonly family: 'state' }, bytes: Uint8Array): Promise<void> {
    const key = keyOf(location);
    this.backing.locations.set(key, location);
    this.backing.documents.set(key, Uint8Array.from(bytes));
  }
}
