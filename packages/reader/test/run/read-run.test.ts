import { propertyParameters } from '@turnjournal/test-support';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ReaderError } from '../../src/errors.js';
import { readRunFile } from '../../src/run/read-run.js';
import { tempFile } from '../support/temp.js';

const RUN = 'run-1';
const header = (extra: Record<string, unknown> = {}) => ({
  type: 'header',
  schema_version: 1,
  run_id: RUN,
  started_at: '2026-02-03T12:00:00.123Z',
  ...extra,
});
const rec = (type: string, extra: Record<string, unknown> = {}) => ({ type, run_id: RUN, ts: 't', ...extra });
const line = (value: unknown) => `${JSON.stringify(value)}\n`;
const codes = (findings: readonly { code: string; line?: number | undefined }[]) =>
  findings.map((f) => `${f.code}@${f.line ?? '-'}`);

describe('readRunFile', () => {
  it('reads the spec §7.3 example as a completed run with no findings', async () => {
    const example = [
      header({ session_id: 's' }),
      rec('run.start', { input: { type: 'parts', parts: [{ type: 'text', text: 'list files' }] } }),
      rec('llm.request', { seq: 1, input: { messages: [{ role: 'user', content: 'list files' }] } }),
      rec('llm.response', { seq: 1, output: { messages: [{ role: 'assistant', content: null }] } }),
      rec('agent.event', { seq: 0, event: { type: 'tool_call' } }),
      rec('tool.output', { tool: 'exec_command', tool_call_id: 'call_1', result_raw: 'a\n' }),
      rec('agent.event', { seq: 1, event: { type: 'final', content: 'done' } }),
      rec('run.status', { status: 'completed' }),
      rec('run.end', { outcome: 'completed', final: 'done' }),
    ];
    const path = tempFile(example.map(line).join(''), `${RUN}.jsonl`);
    const run = await readRunFile(path);
    expect(run).toMatchObject({ file: path, runId: RUN, sessionId: 's', outcome: 'completed', agentEventCount: 2 });
    expect(run.findings).toEqual([]);
  });

  it('merges framing and derivation findings in file order (TJ-FRAME-004, TJ-COMPAT-017)', async () => {
    const raw = `${line(rec('run.start', { input: { type: 'text', text: 'x' } }))}not json\n${line(rec('agent.event', { seq: 'x' }))}{"type":"run.e`;
    const run = await readRunFile(tempFile(raw));
    expect(codes(run.findings)).toEqual(['missing_header@1', 'malformed_line@2', 'invalid_record@3', 'torn_tail@-']);
    expect(run.outcome).toBe('incomplete');
  });

  it('reports unsupported_version once for a file under an unsupported header (TJ-COMPAT-012)', async () => {
    const v2 = [
      header({ schema_version: 2 }),
      rec('run.start', { input: 'a v2 shape' }),
      rec('thing.new', {}),
      rec('run.end', { outcome: 'completed' }),
    ];
    const run = await readRunFile(tempFile(`${v2.map(line).join('')}{"torn`));
    expect(codes(run.findings)).toEqual(['unsupported_version@1', 'torn_tail@-']);
    expect(run).toMatchObject({ unsupportedVersion: 2, outcome: 'incomplete' });
  });

  it('keeps record findings before an unsupported header is reached (TJ-COMPAT-012)', async () => {
    const raw = [{ type: 'run.end', run_id: RUN }, header({ schema_version: 3 }), rec('bogus', {})].map(line).join('');
    const run = await readRunFile(tempFile(raw));
    expect(codes(run.findings)).toEqual(['invalid_record@1', 'unsupported_version@2']);
  });

  it('fails in strict mode at an invalid record (TJ-FRAME-022)', async () => {
    const raw = [header(), rec('agent.event', { seq: -1, event: { type: 'x' } })].map(line).join('');
    await expect(readRunFile(tempFile(raw), { mode: 'strict' })).rejects.toBeInstanceOf(ReaderError);
  });

  it('throws the file system error for a missing file', async () => {
    await expect(readRunFile('/nonexistent/turnjournal/run.jsonl')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('readRunFile properties', () => {
  const runShape = fc.record({
    firstSeq: fc.nat({ max: 1000 }),
    calls: fc.nat({ max: 4 }),
    gaps: fc.array(fc.integer({ min: 1, max: 5 }), { maxLength: 6 }),
    outcome: fc.option(fc.constantFrom('completed', 'cancelled', 'error', 'handed_off'), { nil: undefined }),
  });

  type RunShape = typeof runShape extends fc.Arbitrary<infer T> ? T : never;

  function build(shape: RunShape): { text: string; endAt: number | undefined } {
    const values: unknown[] = [header(), rec('run.start', { input: { type: 'text', text: 'go' } })];
    let agentSeq = 0;
    const events = [...shape.gaps];
    for (let i = 0; i < shape.calls; i += 1) {
      const seq = shape.firstSeq + i;
      values.push(rec('llm.request', { seq, input: { messages: [{ role: 'user', content: `q${i}\n` }] } }));
      values.push(rec('llm.response', { seq, output: { messages: [{ role: 'assistant', content: 'é' }] } }));
      const gap = events.shift();
      if (gap !== undefined) {
        values.push(rec('agent.event', { seq: agentSeq, event: { type: 'tool_call' } }));
        agentSeq += gap;
      }
    }
    for (const gap of events) {
      values.push(rec('agent.event', { seq: agentSeq, event: { type: 'text' } }));
      agentSeq += gap;
    }
    let text = values.map(line).join('');
    let endAt: number | undefined;
    if (shape.outcome !== undefined) {
      text += line(rec('run.end', { outcome: shape.outcome }));
      endAt = Buffer.byteLength(text);
    }
    return { text, endAt };
  }

  it('a generated valid run has no findings and the outcome of its run.end (TJ-RUNSEM-001, TJ-RUNSEM-008, TJ-RUNSEM-009)', async () => {
    await fc.assert(
      fc.asyncProperty(runShape, async (shape) => {
        const run = await readRunFile(tempFile(build(shape).text));
        expect(run.findings).toEqual([]);
        expect(run.outcome).toBe(shape.outcome ?? 'incomplete');
        expect(run.llmCalls.map((c) => c.seq)).toEqual(
          Array.from({ length: shape.calls }, (_, i) => shape.firstSeq + i),
        );
        expect(run.agentEventCount).toBe(shape.gaps.length);
      }),
      propertyParameters(),
    );
  });

  it('a run cut anywhere is incomplete unless the cut follows the run.end line, and only the torn tail is reported (TJ-RUNSEM-001, TJ-RUNSEM-004, TJ-FRAME-004)', async () => {
    await fc.assert(
      fc.asyncProperty(runShape, fc.double({ min: 0, max: 1, noNaN: true }), async (shape, at) => {
        const { text, endAt } = build(shape);
        const bytes = Buffer.from(text);
        const cut = Math.floor(at * bytes.length);
        const run = await readRunFile(tempFile(bytes.subarray(0, cut)));
        const complete = endAt !== undefined && cut >= endAt;
        expect(run.outcome).toBe(complete ? shape.outcome : 'incomplete');
        const torn = cut > 0 && bytes[cut - 1] !== 0x0a;
        expect(codes(run.findings)).toEqual(torn ? ['torn_tail@-'] : []);
      }),
      propertyParameters(),
    );
  });
});
