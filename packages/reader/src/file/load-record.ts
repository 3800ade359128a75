import { closeSync, openSync, readSync } from 'node:fs';
import { parseObject } from '../framing/decode-line.js';
import { type RecordLocation, recordMovedError } from '../turn/representative.js';

/** Reads a record's bytes back from disk. */
export function readRecordBytes(location: RecordLocation): Uint8Array {
  const bytes = Buffer.alloc(location.length);
  const fd = openSync(location.file, 'r');
  try {
    let done = 0;
    while (done < location.length) {
      const n = readSync(fd, bytes, done, location.length - done, location.offset + done);
      if (n === 0) throw recordMovedError(location, 'the file is shorter than when it was read');
      done += n;
    }
  } finally {
    closeSync(fd);
  }
  return bytes;
}

/** Reads a record back from disk, whole: content, attachments and unknown members included (TJ-COMPAT-003). */
export function loadRecord(location: RecordLocation): Record<string, unknown> {
  const parsed = parseObject(readRecordBytes(location));
  if (!parsed.ok) throw recordMovedError(location, parsed.reason);
  return parsed.value;
}
