import type pg from 'pg';
import { isConnectionLoss } from './connection-errors.js';

/** The lines of one journal's commit, as the rows they become, and the owner's view of where the journal ends. */
export interface CommitRequest {
  readonly stream: string;
  /** The owner's epoch, checked in the transaction (TJ-STORE-021). */
  readonly epoch: number;
  /** Where the journal ends before these lines, as the owner committed it. */
  readonly fromEnd: number;
  readonly fromLines: number;
  /** Where it ends after them. */
  readonly toEnd: number;
  readonly toLines: number;
  readonly positions: readonly number[];
  readonly starts: readonly number[];
  readonly lines: readonly Buffer[];
  readonly seqs: readonly (number | null)[];
  readonly types: readonly (string | null)[];
}

interface Queued {
  readonly request: CommitRequest;
  readonly bytes: number;
  resolve(added: number): void;
  reject(error: unknown): void;
}

/** One shared transaction carries at most about this many bytes (one request more when a single one is larger). */
const SHARED_BYTES = 4 * 1024 * 1024;

/**
 * The owner's check and the stream row's new end: it matches no row once fenced or when the journal does not end where
 * the owner committed it. Shared by the one-journal statements.
 */
const OWNER_CTE = `WITH owner AS (
    UPDATE turnjournal_streams SET end_cursor = $4, line_count = $5
     WHERE store = $1 AND stream = $2 AND epoch = $3 AND end_cursor = $6 AND line_count = $7
    RETURNING 1)`;

/**
 * One journal's lines, if and only if the stream's epoch is still the owner's and it ends where the owner believes:
 * one statement, so one transaction and one round trip, in which the UPDATE of the stream's row comes first (it takes
 * the row's lock, so an owner bumping the epoch waits for this commit or fences it) and the INSERT adds nothing when
 * it matched no row. The lines travel as one binary parameter, cut in the database by their lengths (a `bytea[]`
 * parameter would go as hex text, twice the bytes to encode and decode). Named prepared statements, parsed and planned
 * once per connection.
 */
const APPEND_MANY = {
  name: 'turnjournal_append_many',
  text: `${OWNER_CTE}
  INSERT INTO turnjournal_lines (store, stream, position, start, line, seq, type)
  SELECT $1, $2, l.position, l.start, substring($10::bytea FROM (l.start - $6 + 1)::int FOR l.length), l.seq, l.type
    FROM owner, unnest($8::bigint[], $9::bigint[], $11::int[], $12::bigint[], $13::text[])
      AS l(position, start, length, seq, type)`,
};
/** The same for one line: its bytes as one binary parameter, where the owner's check says the stream ends ($6, $7). */
const APPEND_ONE = {
  name: 'turnjournal_append_one',
  text: `${OWNER_CTE}
  INSERT INTO turnjournal_lines (store, stream, position, start, line, seq, type)
  SELECT $1, $2, $7::bigint, $6::bigint, $8::bytea, $9::bigint, $10::text FROM owner`,
};
/**
 * The commits of several journals in one transaction: each journal's owner check on its own row, and the lines of
 * exactly the journals whose check matched; answers how many lines each journal got. The lines travel as one binary
 * parameter, cut by offset and length.
 */
const APPEND_SHARED = {
  name: 'turnjournal_append_shared',
  text: `WITH owner AS (
    UPDATE turnjournal_streams s SET end_cursor = b.to_end, line_count = b.to_lines
      FROM unnest($2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[])
        AS b(stream, epoch, from_end, from_lines, to_end, to_lines)
     WHERE s.store = $1 AND s.stream = b.stream AND s.epoch = b.epoch
       AND s.end_cursor = b.from_end AND s.line_count = b.from_lines
    RETURNING s.stream),
  added AS (
    INSERT INTO turnjournal_lines (store, stream, position, start, line, seq, type)
    SELECT $1, l.stream, l.position, l.start, substring($10::bytea FROM l.offset_ + 1 FOR l.length), l.seq, l.type
      FROM unnest($8::text[], $9::bigint[], $11::bigint[], $12::int[], $13::int[], $14::bigint[], $15::text[])
        AS l(stream, position, start, offset_, length, seq, type)
     WHERE l.stream IN (SELECT stream FROM owner)
    RETURNING stream)
  SELECT stream, count(*)::int AS added FROM added GROUP BY stream`,
};

/**
 * The commits of a store's journals. A commit waits only while `maxInFlight` transactions run: then the commits of
 * every journal waiting go in the next one together, each with its own owner check, so that many sessions appending at
 * once share transactions (and their WAL flushes) rather than each paying for one. A commit that finds nothing in
 * flight goes at once, alone. A shared transaction that fails for another reason than a lost connection is retried
 * journal by journal, so that one journal's failure (a row changed behind its owner) is its own; a lost connection is
 * answered to each journal in it, whose owner re-reads its own row (TJ-STORE-025).
 */
export class CommitQueue {
  readonly #pool: pg.Pool;
  readonly #store: string;
  readonly #maxInFlight: number;
  #inFlight = 0;
  #queue: Queued[] = [];

  constructor(pool: pg.Pool, store: string, maxInFlight: number) {
    this.#pool = pool;
    this.#store = store;
    this.#maxInFlight = maxInFlight;
  }

  /** Commits one journal's lines; resolves with how many were added (0 when its owner check matched no row). */
  commit(request: CommitRequest): Promise<number> {
    return new Promise((resolve, reject) => {
      const bytes = request.lines.reduce((sum, line) => sum + line.length, 0);
      this.#queue.push({ request, bytes, resolve, reject });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#inFlight < this.#maxInFlight && this.#queue.length > 0) {
      let count = 0;
      let bytes = 0;
      for (const queued of this.#queue) {
        if (count > 0 && bytes + queued.bytes > SHARED_BYTES) break;
        count += 1;
        bytes += queued.bytes;
      }
      const batch = this.#queue.splice(0, count);
      this.#inFlight += 1;
      void this.#run(batch).finally(() => {
        this.#inFlight -= 1;
        this.#pump();
      });
    }
  }

  async #run(batch: readonly Queued[]): Promise<void> {
    if (batch.length === 1) return this.#alone(batch[0] as Queued);
    let added: Map<string, number>;
    try {
      added = await this.#shared(batch.map((queued) => queued.request));
    } catch (error) {
      if (isConnectionLoss(error)) {
        for (const queued of batch) queued.reject(error);
        return;
      }
      // Refused before COMMIT, so rolled back: each journal's commit is tried again on its own.
      await Promise.all(batch.map((queued) => this.#alone(queued)));
      return;
    }
    for (const queued of batch) queued.resolve(added.get(queued.request.stream) ?? 0);
  }

  async #alone(queued: Queued): Promise<void> {
    try {
      queued.resolve(await this.#single(queued.request));
    } catch (error) {
      queued.reject(error);
    }
  }

  async #single(request: CommitRequest): Promise<number> {
    const owner = [
      this.#store,
      request.stream,
      request.epoch,
      request.toEnd,
      request.toLines,
      request.fromEnd,
      request.fromLines,
    ];
    const result =
      request.positions.length === 1
        ? await this.#pool.query({
            ...APPEND_ONE,
            values: [...owner, request.lines[0], request.seqs[0], request.types[0]],
          })
        : await this.#pool.query({
            ...APPEND_MANY,
            values: [
              ...owner,
              request.positions,
              request.starts,
              Buffer.concat(request.lines as Buffer[]),
              request.lines.map((line) => line.length),
              request.seqs,
              request.types,
            ],
          });
    return result.rowCount ?? 0;
  }

  async #shared(requests: readonly CommitRequest[]): Promise<Map<string, number>> {
    const lines = {
      streams: [] as string[],
      positions: [] as number[],
      starts: [] as number[],
      offsets: [] as number[],
      lengths: [] as number[],
      seqs: [] as (number | null)[],
      types: [] as (string | null)[],
      bytes: [] as Buffer[],
    };
    let offset = 0;
    for (const request of requests)
      for (const [i, line] of request.lines.entries()) {
        lines.streams.push(request.stream);
        lines.positions.push(request.positions[i] as number);
        lines.starts.push(request.starts[i] as number);
        lines.offsets.push(offset);
        lines.lengths.push(line.length);
        lines.seqs.push(request.seqs[i] ?? null);
        lines.types.push(request.types[i] ?? null);
        lines.bytes.push(line);
        offset += line.length;
      }
    const { rows } = await this.#pool.query<{ stream: string; added: number }>({
      ...APPEND_SHARED,
      values: [
        this.#store,
        requests.map((request) => request.stream),
        requests.map((request) => request.epoch),
        requests.map((request) => request.fromEnd),
        requests.map((request) => request.fromLines),
        requests.map((request) => request.toEnd),
        requests.map((request) => request.toLines),
        lines.streams,
        lines.positions,
        Buffer.concat(lines.bytes),
        lines.starts,
        lines.offsets,
        lines.lengths,
        lines.seqs,
        lines.types,
      ],
    });
    return new Map(rows.map((row) => [row.stream, Number(row.added)]));
  }
}
