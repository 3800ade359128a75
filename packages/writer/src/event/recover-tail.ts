import { decodeLine, EventLogFold, type EventLogState, type JournalSource, readJournal } from '@turnjournal/reader';
import { type Finding, validateRecord } from '@turnjournal/schema';

/** What {@link recoverTail} derived from the tail of an event log. */
export interface TailRecovery {
  /** The fold of the tail: messages, last seq, the runs it saw, the active run and overlay. */
  readonly state: EventLogState;
  /** Accepted records after the last valid checkpoint (all accepted records when there is none). */
  readonly sinceCheckpoint: number;
  /** Byte offset of the last valid checkpoint, or null. */
  readonly checkpointOffset: number | null;
  /** Where the forward fold began. */
  readonly startOffset: number;
  /** Framing findings of the lines read forwards, then the fold's findings. */
  readonly findings: readonly Finding[];
}

const CHUNK_BYTES = 64 * 1024;
const CHECKPOINT = Buffer.from('checkpoint');
const CHAT_STARTED = Buffer.from('chat.started');
const ESCAPE = Buffer.from('\\u');

/**
 * Recovers the state an event-log writer continues from, with the semantics of the reader's `recoverEventLog`
 * (spec §15.2) but through `source`, the descriptor the writer holds (so that it reads exactly the file it appends
 * to, through the file-system layer that tests and the simulated file system replace): scans backwards from `end` for
 * the last valid `checkpoint` and the last `chat.started` (TJ-REPLAY-003, TJ-REPLAY-006), then folds forwards from
 * the earlier of the two with the reader's {@link EventLogFold} (TJ-REPLAY-004, TJ-REPLAY-011). The cost follows the
 * tail, not the log (TJ-REPLAY-005). The last seq comes from the last accepted record (TJ-EVENT-004).
 */
export async function recoverTail(
  path: string,
  source: JournalSource,
  end: number,
  maxLineBytes: number,
): Promise<TailRecovery> {
  let checkpoint: number | undefined;
  let started: number | undefined;
  for await (const line of linesBackward(source, end, maxLineBytes)) {
    if (line.bytes === undefined) continue;
    const type = eventTypeOf(line.offset, line.bytes, checkpoint === undefined);
    if (type === 'checkpoint' && checkpoint === undefined) checkpoint = line.offset;
    else if (type === 'chat.started' && started === undefined) started = line.offset;
    if (checkpoint !== undefined && started !== undefined) break;
  }
  const startOffset = checkpoint === undefined ? 0 : Math.min(checkpoint, started ?? checkpoint);
  const fold = new EventLogFold({
    messagesUnknownUntilCheckpoint: checkpoint !== undefined && startOffset < checkpoint,
  });
  const framing: Finding[] = [];
  const where = { file: path, lineNumbers: startOffset === 0 };
  let sinceCheckpoint = 0;
  const bounded: JournalSource = {
    read: (buffer, offset, length, position) =>
      position >= end ? Promise.resolve(0) : source.read(buffer, offset, Math.min(length, end - position), position),
  };
  for await (const batch of readJournal(path, {
    source: bounded,
    startOffset,
    maxLineBytes,
    chunkBytes: CHUNK_BYTES,
  })) {
    for (const item of batch) {
      if (item.kind === 'finding') framing.push(item.finding);
      else if (fold.add(item.record, where) && (checkpoint === undefined || item.record.offset > checkpoint))
        sinceCheckpoint += 1;
    }
  }
  const state = fold.finish();
  return {
    state,
    sinceCheckpoint,
    checkpointOffset: checkpoint ?? null,
    startOffset,
    findings: [...framing, ...state.findings],
  };
}

/** The type of the valid event record a line holds, when it may be a checkpoint or a `chat.started`. */
function eventTypeOf(offset: number, bytes: Uint8Array, wantCheckpoint: boolean): string | undefined {
  // Without its type spelt out, a line can only hold one through a JSON escape: such lines alone are parsed.
  if (!(wantCheckpoint && includes(bytes, CHECKPOINT)) && !includes(bytes, CHAT_STARTED) && !includes(bytes, ESCAPE))
    return undefined;
  const decoded = decodeLine({ kind: 'line', number: 0, offset, bytes }, true);
  const value =
    decoded.kind === 'record' ? decoded.value : decoded.kind === 'damage' ? decoded.salvaged?.value : undefined;
  if (value === undefined) return undefined;
  const validation = validateRecord(value);
  if (validation.status !== 'valid' || validation.classification.family !== 'event') return undefined;
  return validation.classification.type;
}

function includes(haystack: Uint8Array, needle: Buffer): boolean {
  return Buffer.from(haystack.buffer, haystack.byteOffset, haystack.byteLength).includes(needle);
}

/** A committed line met backwards: its bytes (without the LF), or none when it is over the size limit. */
interface BackwardLine {
  readonly offset: number;
  readonly bytes: Uint8Array | undefined;
}

/**
 * Yields the committed lines before `end`, last first, reading {@link CHUNK_BYTES} at a time backwards. Bytes after
 * the last LF are a torn tail and skipped; a line over `maxLineBytes` is yielded without bytes and never buffered.
 */
export async function* linesBackward(
  source: JournalSource,
  end: number,
  maxLineBytes: number,
): AsyncGenerator<BackwardLine> {
  let parts: Uint8Array[] = [];
  let partsLength = 0;
  let seenLf = false;
  let position = end;
  while (position > 0) {
    const from = Math.max(0, position - CHUNK_BYTES);
    const chunk = new Uint8Array(position - from);
    await readFully(source, chunk, from);
    let stop = chunk.length;
    let lf = chunk.lastIndexOf(0x0a, stop - 1);
    while (lf >= 0) {
      if (seenLf) yield lineOf(from + lf + 1, chunk.subarray(lf + 1, stop), parts, partsLength, maxLineBytes);
      seenLf = true;
      parts = [];
      partsLength = 0;
      stop = lf;
      lf = lf > 0 ? chunk.lastIndexOf(0x0a, lf - 1) : -1;
    }
    if (seenLf && stop > 0) {
      partsLength += stop;
      // Past the limit the bytes are dropped and only counted (TJ-FRAME-032).
      parts = partsLength > maxLineBytes ? [] : [chunk.subarray(0, stop), ...parts];
    }
    position = from;
  }
  if (seenLf) yield lineOf(0, new Uint8Array(0), parts, partsLength, maxLineBytes);
}

function lineOf(
  offset: number,
  head: Uint8Array,
  parts: readonly Uint8Array[],
  partsLength: number,
  maxLineBytes: number,
): BackwardLine {
  const length = head.length + partsLength;
  if (length > maxLineBytes) return { offset, bytes: undefined };
  if (parts.length === 0) return { offset, bytes: head };
  const bytes = new Uint8Array(length);
  bytes.set(head, 0);
  let at = head.length;
  for (const part of parts) {
    bytes.set(part, at);
    at += part.length;
  }
  return { offset, bytes };
}

async function readFully(source: JournalSource, buffer: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < buffer.length) {
    const read = await source.read(buffer, done, buffer.length - done, position + done);
    if (read === 0) throw new Error(`the file shrank while it was read backwards, at byte ${position + done}`);
    done += read;
  }
}
