import { type JournalSource, readJournal } from '@turnjournal/reader';
import { trailingNulCount } from '@turnjournal/reader/store-format';
import type { Finding } from '@turnjournal/schema';
import { attempt } from '../fs/durable-ops.js';
import type { FileSystem } from '../fs/file-system.js';
import type { TurnTable } from './turn-table.js';

/** What {@link readTurnRecords} read. */
export interface TurnRecordsRead {
  /** Offset just after the last committed line read: where the next incremental read starts. */
  readonly end: number;
  /** Framing and record findings of the lines read (mid-file damage is reported, never repaired). */
  readonly findings: readonly Finding[];
}

/**
 * Reads the committed lines of a turn journal from `startOffset` through the file-system layer (`source` reads the
 * descriptor) and folds its valid turn records into `table`. Returns where the committed lines end, so that a later
 * call reads only what was appended since; a line still being written is left for that later call.
 */
export async function readTurnRecords(
  path: string,
  source: JournalSource,
  table: TurnTable,
  startOffset = 0,
): Promise<TurnRecordsRead> {
  let eof = startOffset;
  // NUL bytes that end what was read so far: pre-allocated space (spec §3.8), which another writer fills later. The
  // next read must start where they start, not at the end of the file (TJ-FRAME-037).
  let trailingNuls = 0;
  const tracked: JournalSource = {
    async read(buffer, offset, length, position) {
      const read = await source.read(buffer, offset, length, position);
      if (read > 0 && position + read > eof) {
        eof = position + read;
        const nuls = trailingNulCount(buffer, offset, offset + read);
        trailingNuls = nuls === read ? trailingNuls + read : nuls;
      }
      return read;
    },
  };
  const findings: Finding[] = [];
  let tornAt: number | undefined;
  for await (const batch of readJournal(path, { source: tracked, startOffset })) {
    for (const item of batch) {
      if (item.kind === 'finding') {
        if (item.finding.code === 'torn_tail') tornAt = item.finding.offset;
        else findings.push(item.finding);
        continue;
      }
      const { validation, value } = item.record;
      if (validation.status === 'valid' && validation.classification.family === 'turn')
        table.add(validation.classification.type as string, value);
    }
  }
  return { end: tornAt ?? eof - trailingNuls, findings };
}

/** A positional reader over a descriptor of the file-system layer, naming `path` in its errors. */
export function descriptorSource(fs: FileSystem, path: string, fd: number): JournalSource {
  return {
    read: (buffer, offset, length, position) =>
      attempt(path, 'read', () => fs.read(fd, buffer, offset, length, position)),
  };
}
