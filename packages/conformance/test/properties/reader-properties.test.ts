// Reader properties over generated valid turn histories: damage injected mid-file (TJ-FRAME-0xx), unknown data
// injected (TJ-COMPAT-0xx) and kept byte for byte through compaction, and shard permutation and duplication
// (TJ-DERIVE-002, TJ-DERIVE-004, TJ-DERIVE-011). The reference reader reads real files written to a temp dir.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore, readJournal } from '@turnjournal/reader';
import { compactEventLog, sweepTurnJournals } from '@turnjournal/writer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SimulatedFileSystem } from '../../src/simulated-fs/index.js';
import { eventHistory, type Opcode, turnHistory, writeStoreFiles } from './histories.js';
import { realTempDir, splitCommitted } from './sim-support.js';
import { checkProperty } from './support.js';

const enc = new TextEncoder();
const dec = new TextDecoder();
const DIR = '_turn_journal';

interface Derived {
  states: Record<string, string>;
  findings: { code: string; file: string; line: number | undefined }[];
}

/** Derives the turn sessions of files (name in the turn journal dir → bytes) with the reference reader. */
async function derive(files: Readonly<Record<string, Uint8Array>>): Promise<Derived> {
  const tmp = realTempDir('tj-reader-prop-');
  try {
    writeStoreFiles(tmp.dir, Object.fromEntries(Object.entries(files).map(([name, b]) => [`${DIR}/${name}`, b])));
    const check = await checkStore([join(tmp.dir, DIR)]);
    const states: Record<string, string> = {};
    for (const session of check.sessions)
      for (const turn of session.turns) states[`${session.sessionId}/${turn.turnId}`] = turn.state;
    return {
      states,
      findings: check.findings.map((f) => ({
        code: f.code,
        file: (f.file ?? '').split('/').at(-1) ?? '',
        line: f.line,
      })),
    };
  } finally {
    tmp.remove();
  }
}

const turnCodes = fc.array(fc.tuple(fc.nat(20), fc.nat(20)) as fc.Arbitrary<Opcode>, { minLength: 2, maxLength: 24 });

/** Lines of a valid history, each with its LF. */
async function historyLines(codes: readonly Opcode[], closeAll = false): Promise<Uint8Array[]> {
  const { bytes } = await turnHistory(codes, closeAll);
  return splitCommitted(bytes).lines.map((line) => enc.encode(`${line}\n`));
}

function join0(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

// ---- (b) damage ----

/** One kind of damage inserted as a line of its own, and the finding code the reader must give it. */
const DAMAGE = {
  garbage: { code: 'malformed_line', bytes: () => enc.encode('this is not json\n') },
  array: { code: 'malformed_line', bytes: () => enc.encode('[1,2,3]\n') },
  brokenObject: { code: 'malformed_line', bytes: () => enc.encode('{"version":1,"event":"subm\n') },
  invalidUtf8: { code: 'malformed_line', bytes: () => Uint8Array.of(0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a) },
  zeros: { code: 'zero_filled_region', bytes: () => new Uint8Array([0, 0, 0, 0, 0, 0, 0, 0x0a]) },
  blank: { code: 'blank_line', bytes: () => enc.encode('  \n') },
} as const;
type DamageKind = keyof typeof DAMAGE;

describe('torn and garbage lines, zero-filled regions, CRLF and BOM (TJ-FRAME-0xx)', () => {
  it('damage mid-file is reported where it is, the surviving records derive as before, nothing throws (TJ-FRAME-012, TJ-FRAME-013, TJ-FRAME-014, TJ-FRAME-015, TJ-FRAME-016, TJ-FRAME-017, TJ-FRAME-018, TJ-FRAME-028, TJ-FRAME-004)', async () => {
    await checkProperty(
      'damage injection (TJ-FRAME-016)',
      fc.asyncProperty(
        turnCodes,
        fc.array(
          fc.record({
            at: fc.nat(),
            kind: fc.constantFrom(...(Object.keys(DAMAGE) as DamageKind[])),
          }),
          { maxLength: 5 },
        ),
        fc.array(fc.nat(), { maxLength: 6 }),
        fc.boolean(),
        fc.option(fc.nat(), { nil: undefined }),
        async (codes, damage, crlfAt, bom, tornCut) => {
          const lines = await historyLines(codes);
          const baseline = await derive({ 's1.jsonl': join0(lines) });
          // CRLF on some lines (TJ-FRAME-013); a BOM at the start (TJ-FRAME-012).
          const crlf = new Set(crlfAt.map((n) => n % Math.max(1, lines.length)));
          const out: { bytes: Uint8Array; code?: string }[] = lines.map((line, i) =>
            crlf.has(i) ? { bytes: join0([line.subarray(0, -1), enc.encode('\r\n')]) } : { bytes: line },
          );
          for (const { at, kind } of damage)
            out.splice(at % (out.length + 1), 0, { bytes: DAMAGE[kind].bytes(), code: DAMAGE[kind].code });
          const bomAdded = bom && out.length > 0 && out[0]?.code === undefined;
          if (bomAdded)
            out[0] = { bytes: join0([Uint8Array.of(0xef, 0xbb, 0xbf), (out[0] as { bytes: Uint8Array }).bytes]) };
          // A torn tail: part of a copy of a record, without its LF (TJ-FRAME-003, TJ-FRAME-004).
          const last = lines.at(-1) as Uint8Array;
          const tail = tornCut === undefined ? new Uint8Array(0) : last.subarray(0, 1 + (tornCut % (last.length - 1)));
          const file = join0([...out.map((o) => o.bytes), tail]);
          const derived = await derive({ 's1.jsonl': file });
          expect(derived.states).toEqual(baseline.states);
          const expected = out
            .map((o, i) => ({ code: o.code, line: i + 1 }))
            .filter((o): o is { code: string; line: number } => o.code !== undefined);
          const framing = derived.findings
            .filter((f) => ['malformed_line', 'zero_filled_region', 'blank_line', 'glued_record'].includes(f.code))
            .map((f) => ({ code: f.code, line: f.line }));
          expect(framing).toEqual(expected);
          expect(derived.findings.filter((f) => f.code === 'torn_tail').length).toBe(tail.length > 0 ? 1 : 0);
          // What a writer must not write is reported, once per file, exactly when it was injected (TJ-FAM-026).
          const violations = new Set(
            derived.findings.map((f) => f.code).filter((c) => c.startsWith('writer_violation')),
          );
          expect(violations).toEqual(
            new Set([
              ...(crlf.size > 0 ? ['writer_violation_crlf'] : []),
              ...(bomAdded ? ['writer_violation_bom'] : []),
            ]),
          );
          // Nothing else is reported that the valid history did not already have.
          const known = new Set([
            ...baseline.findings.map((f) => f.code),
            'torn_tail',
            ...expected.map((e) => e.code),
            ...violations,
          ]);
          expect(derived.findings.filter((f) => !known.has(f.code))).toEqual([]);
        },
      ),
      { defaultRuns: 60 },
    );
  }, 300_000);

  it('a torn record with a complete record glued after it is salvaged and reported as glued_record (TJ-FRAME-025, TJ-FRAME-026, TJ-FRAME-027)', async () => {
    await checkProperty(
      'glued records (TJ-FRAME-026)',
      fc.asyncProperty(turnCodes, fc.nat(), fc.nat(), async (codes, which, cut) => {
        const lines = await historyLines(codes);
        const baseline = await derive({ 's1.jsonl': join0(lines) });
        // What a writer that appended after a torn tail leaves: a record's head, then the next record, one line.
        const at = which % lines.length;
        const victim = lines[at] as Uint8Array;
        const head = victim.subarray(0, 1 + (cut % (victim.length - 2)));
        const glued = [...lines.slice(0, at), join0([head, lines[at + 1] ?? victim]), ...lines.slice(at + 2)];
        if (at + 1 >= lines.length) glued.splice(at + 1);
        const derived = await derive({ 's1.jsonl': join0(glued) });
        const codesFound = derived.findings.map((f) => f.code);
        expect(codesFound).toContain('glued_record');
        expect(codesFound).not.toContain('malformed_line');
        // The torn head's record is lost; the glued one is recovered: every other turn derives as before.
        const lostTurn = (JSON.parse(dec.decode(victim)) as { turn_id: string }).turn_id;
        for (const [key, state] of Object.entries(baseline.states))
          if (key !== `s1/${lostTurn}`) expect(derived.states[key]).toBe(state);
      }),
      { defaultRuns: 40 },
    );
  }, 300_000);
});

// ---- (c) unknown data ----

const EXTRA = '"zz_future":{"n":1.50,"list":[1e2,"\\u00e9"]},';

function withUnknownField(line: Uint8Array): Uint8Array {
  const text = dec.decode(line);
  return enc.encode(`{${EXTRA}${text.slice(1)}`);
}

function unknownRecord(n: number): Uint8Array {
  return enc.encode(
    n % 2 === 0
      ? `{"version":1,"event":"future_event_${n}","turn_id":"t${n % 5}","session_id":"s1","created_at":1.5}\n`
      : `{"version":1,"event":"x.acme.note","turn_id":"t${n % 5}","session_id":"s1","created_at":2.5,"note":"private ${n}"}\n`,
  );
}

function withUnknownReason(line: Uint8Array): Uint8Array {
  return enc.encode(dec.decode(line).replace(/"reason":"[a-z_]+"/, '"reason":"quota_exhausted_v9"'));
}

describe('unknown fields, record types and enum values (TJ-COMPAT-0xx)', () => {
  it('injected unknown data leaves derived states unchanged, is reported as specified and preserved in parsed records (TJ-COMPAT-001, TJ-COMPAT-002, TJ-COMPAT-003, TJ-COMPAT-005, TJ-COMPAT-006, TJ-COMPAT-009, TJ-DERIVE-005)', async () => {
    await checkProperty(
      'unknown data injection (TJ-COMPAT-002)',
      fc.asyncProperty(
        turnCodes,
        fc.array(fc.nat(), { maxLength: 8 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(9)), { maxLength: 4 }),
        async (codes, fieldAt, records) => {
          const lines = await historyLines(codes);
          const baseline = await derive({ 's1.jsonl': join0(lines) });
          const fields = new Set(fieldAt.map((n) => n % lines.length));
          const out = lines.map((line, i) => withUnknownReason(fields.has(i) ? withUnknownField(line) : line));
          for (const [at, n] of records) out.splice(at % (out.length + 1), 0, unknownRecord(n));
          const file = join0(out);
          const derived = await derive({ 's1.jsonl': file });
          expect(derived.states).toEqual(baseline.states);
          const unknown = records.filter(([, n]) => n % 2 === 0).length;
          expect(derived.findings.filter((f) => f.code === 'unknown_record').length).toBe(unknown);
          const known = new Set([...baseline.findings.map((f) => f.code), 'unknown_record']);
          expect(derived.findings.filter((f) => !known.has(f.code))).toEqual([]);
          // Parsed records keep unknown members with their values (TJ-COMPAT-003).
          const tmp = realTempDir('tj-compat-');
          try {
            writeStoreFiles(tmp.dir, { 'f.jsonl': file });
            let preserved = 0;
            for await (const batch of readJournal(join(tmp.dir, 'f.jsonl')))
              for (const item of batch)
                if (item.kind === 'record' && 'zz_future' in item.record.value) {
                  expect(item.record.value.zz_future).toEqual({ n: 1.5, list: [100, 'é'] });
                  preserved += 1;
                }
            expect(preserved).toBe(fields.size);
          } finally {
            tmp.remove();
          }
        },
      ),
      { defaultRuns: 50 },
    );
  }, 300_000);

  it('the retention sweep keeps retained lines with unknown members byte for byte (TJ-COMPAT-004, TJ-RET-005)', async () => {
    let rewrites = 0;
    await checkProperty(
      'unknown data through the turn sweep (TJ-COMPAT-004)',
      fc.asyncProperty(turnCodes, fc.array(fc.nat(4), { minLength: 1, maxLength: 3 }), async (codes, undelivered) => {
        const lines = (await historyLines(codes, true)).map(withUnknownField);
        const kept = new Set(undelivered.map((n) => `t${n}`));
        const tmp = realTempDir('tj-sweep-');
        try {
          writeStoreFiles(tmp.dir, { 's1.jsonl': join0(lines) });
          const report = await sweepTurnJournals(tmp.dir, {
            retentionSeconds: 0,
            clock: () => Date.now() + 10 ** 10,
            isDelivered: (_session, turnId) => !kept.has(turnId),
          });
          const pruned = new Set(report.sessions.flatMap((s) => s.prunedTurnIds));
          const after = splitCommitted(new Uint8Array(readFileSync(join(tmp.dir, 's1.jsonl')))).lines;
          const retained = lines
            .map((l) => dec.decode(l).slice(0, -1))
            .filter((l) => !pruned.has((JSON.parse(l) as { turn_id: string }).turn_id));
          if (pruned.size === 0) expect(after).toEqual(retained);
          else {
            rewrites += 1;
            expect(after.slice(0, -1)).toEqual(retained);
            expect(after.at(-1)).toContain('"event":"compacted"');
          }
          for (const line of retained) expect(line).toContain(EXTRA);
        } finally {
          tmp.remove();
        }
      }),
      { defaultRuns: 30 },
    );
    // Not vacuous: sweeps did rewrite files.
    expect(rewrites).toBeGreaterThan(0);
  }, 300_000);

  it('event-log compaction keeps the lines after its checkpoint byte for byte, unknown members and types included (TJ-COMPAT-004, TJ-RET-012)', async () => {
    let compactions = 0;
    await checkProperty(
      'unknown data through event-log compaction (TJ-COMPAT-004)',
      fc.asyncProperty(
        fc.array(fc.tuple(fc.nat(20), fc.nat(20)) as fc.Arbitrary<Opcode>, { minLength: 6, maxLength: 24 }),
        async (codes) => {
          const { bytes } = await eventHistory(codes);
          // Unknown members on every record, and an extension record after every fourth line.
          const lines = splitCommitted(bytes).lines.flatMap((line, i) => {
            const withField = `{${EXTRA}${line.slice(1)}`;
            return i % 4 === 3
              ? [withField, `{"seq":${1000 + i},"type":"x.acme.ping","payload":{"i":${i}}}`]
              : [withField];
          });
          const sim = new SimulatedFileSystem();
          await sim.mkdir('/log');
          const fd = await sim.open('/log/events.jsonl', 'create-exclusive');
          const text = enc.encode(`${lines.join('\n')}\n`);
          await sim.write(fd, text, 0, text.length, 0);
          await sim.close(fd);
          const result = await compactEventLog('/log/events.jsonl', {
            fs: sim,
            retentionSeconds: 0,
            now: Date.now() + 10 ** 10,
          });
          const after = splitCommitted(sim.peek('/log/events.jsonl') as Uint8Array).lines;
          if (!result.compacted) expect(after).toEqual(lines);
          else {
            compactions += 1;
            // The new file is exactly a suffix of the old one, starting at the checkpoint kept.
            expect(after).toEqual(lines.slice(lines.length - after.length));
            expect(after[0]).toContain('"type":"checkpoint"');
          }
        },
      ),
      { defaultRuns: 40 },
    );
    // Not vacuous: logs were compacted.
    expect(compactions).toBeGreaterThan(0);
  }, 300_000);
});

// ---- (d) shards ----

describe('shard permutation and duplication (TJ-DERIVE-002, TJ-DERIVE-004, TJ-DERIVE-011)', () => {
  it('splitting a session across shard files in any order and duplicating records leaves derived states unchanged (TJ-DERIVE-002, TJ-DERIVE-003, TJ-DERIVE-004, TJ-DERIVE-011)', async () => {
    await checkProperty(
      'shard permutation and duplication (TJ-DERIVE-002)',
      fc.asyncProperty(
        turnCodes,
        fc.array(fc.nat(3), { maxLength: 40 }),
        fc.array(fc.nat(), { maxLength: 40 }),
        fc.array(fc.tuple(fc.nat(), fc.nat(3)), { maxLength: 6 }),
        async (codes, shardOf, keys, duplicates) => {
          const lines = await historyLines(codes);
          const baseline = await derive({ 's1.jsonl': join0(lines) });
          const names = ['s1.jsonl', 's1~a.jsonl', 's1~1234.jsonl', 's1~b.jsonl'];
          const shards: { key: number; line: Uint8Array }[][] = names.map(() => []);
          for (const [i, line] of lines.entries()) shards[shardOf[i] ?? 0]?.push({ key: keys[i] ?? i, line });
          for (const [at, shard] of duplicates) {
            const line = lines[at % lines.length] as Uint8Array;
            shards[shard]?.push({ key: at, line });
          }
          const files: Record<string, Uint8Array> = {};
          shards.forEach((entries, i) => {
            if (entries.length === 0) return;
            // Any order within a file: sort by the generated keys (a permutation).
            entries.sort((a, b) => a.key - b.key);
            files[names[i] as string] = join0(entries.map((e) => e.line));
          });
          const derived = await derive(files);
          expect(derived.states).toEqual(baseline.states);
          if (duplicates.length > 0)
            expect(derived.findings.filter((f) => f.code === 'duplicate_event').length).toBeGreaterThanOrEqual(1);
        },
      ),
      { defaultRuns: 60 },
    );
  }, 300_000);
});
