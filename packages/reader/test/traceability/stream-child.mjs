// Child process of streaming.test.ts, run with --expose-gc so that retained memory can be measured without garbage:
// reads virtual journal sources (never materialised) with the built reference reader and prints what it saw.
import { readJournal } from '../../dist/index.js';

const MiB = 1024 * 1024;
const record = (n) =>
  `${JSON.stringify({ seq: n, ts: '2026-01-01T00:00:00Z', type: 'message_append', payload: { message: { role: 'user', content: `m${n}` } } })}\n`;

/** A source whose bytes are `head` ('x' repeated `length` times, then LF) followed by `tail`, produced on demand. */
function virtualSource(length, tail, probe) {
  const tailBytes = Buffer.from(tail, 'utf8');
  const size = length + 1 + tailBytes.length;
  let reads = 0;
  return {
    size,
    read: async (buffer, offset, want, position) => {
      if (position >= size) return 0;
      const n = Math.min(want, size - position);
      for (let i = 0; i < n; i++) {
        const p = position + i;
        buffer[offset + i] = p < length ? 0x78 : p === length ? 0x0a : tailBytes[p - length - 1];
      }
      probe.bytes += n;
      probe.maxRead = Math.max(probe.maxRead, want);
      if (++reads % 128 === 0) {
        globalThis.gc();
        const { heapUsed, arrayBuffers } = process.memoryUsage();
        probe.peak = Math.max(probe.peak, heapUsed + arrayBuffers);
      }
      return n;
    },
  };
}

async function oversized() {
  globalThis.gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  const probe = { bytes: 0, maxRead: 0, peak: heapUsed + arrayBuffers };
  const baseline = probe.peak;
  const source = virtualSource(256 * MiB, record(1) + record(2), probe);
  const records = [];
  const findings = [];
  for await (const batch of readJournal('virtual.jsonl', { source, chunkBytes: 64 * 1024 }))
    for (const item of batch)
      if (item.kind === 'record') records.push(item.record.value.seq);
      else findings.push(item.finding.code);
  return {
    lineBytes: 256 * MiB,
    growth: probe.peak - baseline,
    bytes: probe.bytes,
    size: source.size,
    maxRead: probe.maxRead,
    records,
    findings,
  };
}

async function early() {
  // 1 GiB of small records: the first batch must come after a few reads, not after the whole file.
  const line = record(7);
  const count = Math.floor((1024 * MiB) / line.length);
  const probe = { bytes: 0, maxRead: 0, peak: 0 };
  const source = {
    read: async (buffer, offset, want, position) => {
      const size = count * line.length;
      if (position >= size) return 0;
      const n = Math.min(want, size - position);
      const bytes = Buffer.from(line);
      for (let i = 0; i < n; i++) buffer[offset + i] = bytes[(position + i) % line.length];
      probe.bytes += n;
      return n;
    },
  };
  for await (const batch of readJournal('virtual.jsonl', { source })) {
    if (batch.some((item) => item.kind === 'record'))
      return { size: count * line.length, bytesBeforeFirstRecord: probe.bytes };
  }
  return { size: count * line.length, bytesBeforeFirstRecord: probe.bytes };
}

process.stdout.write(`${JSON.stringify({ oversized: await oversized(), early: await early() })}\n`);
