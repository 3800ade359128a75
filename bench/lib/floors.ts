import { closeSync, openSync, readSync } from 'node:fs';

/**
 * The raw read floor: reads the file in 1 MiB chunks into one reused buffer, splits on LF, decodes each line as UTF-8
 * and `JSON.parse`s it, keeping nothing. No validation, no derivation, no error handling: what any reader must at
 * least do. Returns the number of lines parsed.
 */
export function rawSplitParse(path: string, chunkBytes = 1024 * 1024): number {
  const fd = openSync(path, 'r');
  try {
    let buffer = Buffer.allocUnsafe(chunkBytes);
    let filled = 0;
    let lines = 0;
    for (;;) {
      if (filled === buffer.length) {
        const bigger = Buffer.allocUnsafe(buffer.length * 2);
        buffer.copy(bigger, 0, 0, filled);
        buffer = bigger;
      }
      const n = readSync(fd, buffer, filled, buffer.length - filled, null);
      if (n === 0) break;
      const end = filled + n;
      let from = 0;
      for (let lf = buffer.indexOf(10, from); lf >= 0 && lf < end; lf = buffer.indexOf(10, from)) {
        JSON.parse(buffer.toString('utf8', from, lf));
        lines += 1;
        from = lf + 1;
      }
      buffer.copy(buffer, 0, from, end);
      filled = end - from;
    }
    return lines;
  } finally {
    closeSync(fd);
  }
}

/**
 * A `submitted` turn record of about 400 bytes once serialized (spec §5.3 shape), the payload of the durable-submit
 * figures. `i` makes each record distinct.
 */
export function submittedRecord(i: number): Record<string, unknown> {
  return {
    version: 1,
    event: 'submitted',
    turn_id: `20260511T001122Z-${i.toString(16).padStart(12, '0')}`,
    session_id: 'conv-bench0005',
    stream_id: 'stream-4f1a',
    created_at: 1778458282.123 + i,
    role: 'user',
    content:
      'Summarise the attached report and list the three biggest risks, with one sentence each. Keep it short: the ' +
      'audience reads it on a phone between meetings.',
    workspace: '/workspace',
    model: 'openai/gpt-5',
    model_provider: 'openai',
  };
}

/** A `chat.delta` event record (spec §6.3), the payload of the non-durable figures. */
export function deltaRecord(seq: number): Record<string, unknown> {
  return {
    seq,
    ts: '2026-06-19T03:14:08.050000+00:00',
    type: 'chat.delta',
    payload: { request_id: 'req-8d1c', message_id: 'msg-31', text: 'The test expects UTC dates, so ' },
  };
}
