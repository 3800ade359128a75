import { describe, expect, it } from 'vitest';
import type { JournalRecord } from '../../src/framing/read-journal.js';
import { RunFold } from '../../src/run/fold-run.js';
import { readAll, tempFile } from '../support/temp.js';

const RUN = 'run-1';
const FILE = 'sessions/2026/02/03/run-1.jsonl';
const header = (extra: Record<string, unknown> = {}) => ({
  type: 'header',
  schema_version: 1,
  run_id: RUN,
  session_id: 'sess-1',
  started_at: '2026-02-03T12:00:00.123Z',
  ...extra,
});
const rec = (type: string, extra: Record<string, unknown> = {}) => ({
  type,
  run_id: RUN,
  ts: '2026-02-03T12:00:01.000Z',
  ...extra,
});
const start = () => rec('run.start', { input: { type: 'text', text: 'list files' } });
const request = (seq: number) => rec('llm.request', { seq, input: { messages: [{ role: 'user', content: 'hi' }] } });
const response = (seq: number) =>
  rec('llm.response', { seq, output: { messages: [{ role: 'assistant', content: 'ok' }] } });
const agent = (seq: number) => rec('agent.event', { seq, event: { type: 'tool_call' } });
const end = (outcome: string, extra: Record<string, unknown> = {}) => rec('run.end', { outcome, ...extra });

async function records(values: readonly unknown[]): Promise<JournalRecord[]> {
  const items = await readAll(tempFile(values.map((v) => `${JSON.stringify(v)}\n`).join('')));
  return items.flatMap((i) => (i.kind === 'record' ? [i.record] : []));
}

async function fold(values: readonly unknown[]) {
  const f = new RunFold();
  for (const r of await records(values)) f.add(r, { file: FILE });
  return f.finish();
}

const codes = (run: Awaited<ReturnType<typeof fold>>) => run.findings.map((f) => `${f.code}@${f.line ?? '-'}`);

describe('RunFold outcome (spec §16)', () => {
  it('takes the outcome and final of run.end (TJ-RUNSEM-001)', async () => {
    const run = await fold([header(), start(), request(1), response(1), end('completed', { final: 'done' })]);
    expect(run).toMatchObject({ runId: RUN, sessionId: 'sess-1', outcome: 'completed', final: 'done' });
    expect(run.header?.started_at).toBe('2026-02-03T12:00:00.123Z');
    expect(run.findings).toEqual([]);
  });

  it('derives incomplete for a file without run.end (TJ-RUNSEM-001)', async () => {
    const run = await fold([header(), start(), agent(0)]);
    expect(run.outcome).toBe('incomplete');
    expect(run.final).toBeUndefined();
    expect(run.findings).toEqual([]);
  });

  it('derives incomplete with no run id for an empty file', async () => {
    const run = await fold([]);
    expect(run).toMatchObject({ runId: undefined, outcome: 'incomplete', llmCalls: [], agentEventCount: 0 });
    expect(run.findings).toEqual([]);
  });

  it('carries an unknown outcome unchanged (TJ-COMPAT-010)', async () => {
    const run = await fold([header(), end('timed_out')]);
    expect(run.outcome).toBe('timed_out');
    expect(run.findings).toEqual([]);
  });

  it('accepts unknown run.status values and keeps the last one (TJ-COMPAT-009)', async () => {
    const run = await fold([
      header(),
      rec('run.status', { status: 'running' }),
      rec('run.status', { status: 'paused_by_policy' }),
    ]);
    expect(run.lastStatus).toBe('paused_by_policy');
    expect(run.findings).toEqual([]);
  });

  it('reports each record after the first run.end and ignores it for the outcome (TJ-RUNSEM-002)', async () => {
    const run = await fold([
      header(),
      end('cancelled'),
      end('completed', { final: 'late' }),
      agent(0),
      rec('x.acme.note', { note: 1 }),
    ]);
    expect(run).toMatchObject({ outcome: 'cancelled', final: undefined, agentEventCount: 0 });
    expect(codes(run)).toEqual(['record_after_run_end@3', 'record_after_run_end@4']);
  });
});

describe('RunFold header and run id (spec §7.1, §4.4, §9.4)', () => {
  it('reports missing_header at the first record and reads the file as version 1 (TJ-RUN-005)', async () => {
    const run = await fold([start(), request(3), response(3), end('completed')]);
    expect(run).toMatchObject({ runId: RUN, header: undefined, outcome: 'completed' });
    expect(codes(run)).toEqual(['missing_header@1']);
  });

  it('reports missing_header when the header fails its schema, since it is not accepted (TJ-RUN-005)', async () => {
    const { started_at: _, ...noStart } = header();
    const run = await fold([noStart, start()]);
    expect(run.header).toBeUndefined();
    expect(codes(run)).toEqual(['missing_header@2']);
  });

  it('takes the session id from run.start when the header has none', async () => {
    const { session_id: _, ...anonymous } = header();
    const run = await fold([anonymous, rec('run.start', { input: { type: 'text', text: 'x' }, session_id: 's9' })]);
    expect(run.sessionId).toBe('s9');
  });

  it('skips every record under an unsupported header and reports it once (TJ-COMPAT-012)', async () => {
    const run = await fold([header({ schema_version: 2 }), start(), request(1), agent(5), agent(1), end('completed')]);
    expect(run).toMatchObject({
      runId: RUN,
      unsupportedVersion: 2,
      outcome: 'incomplete',
      llmCalls: [],
      agentEventCount: 0,
    });
    expect(codes(run)).toEqual(['unsupported_version@1']);
  });

  it('reports a record naming another run and still derives it (TJ-FAM-019)', async () => {
    const run = await fold([header(), { ...agent(0), run_id: 'other' }, end('completed')]);
    expect(run.agentEventCount).toBe(1);
    expect(codes(run)).toEqual(['run_id_mismatch@2']);
    expect(run.findings[0]?.run_id).toBe(RUN);
  });

  it('takes the run id from the first record without a header (TJ-FAM-019)', async () => {
    const run = await fold([start(), { ...end('completed'), run_id: 'other' }]);
    expect(run.runId).toBe(RUN);
    expect(codes(run)).toEqual(['missing_header@1', 'run_id_mismatch@2']);
  });

  it('reports a record of another family once and ignores it (TJ-FAM-006, TJ-FAM-007)', async () => {
    const turn = { version: 1, event: 'worker_started', turn_id: 't', created_at: 1 };
    const run = await fold([header(), turn, turn, end('completed')]);
    expect(codes(run)).toEqual(['mixed_families@2']);
  });
});

describe('RunFold llm pairing (spec §16)', () => {
  it('pairs requests and responses by seq, starting anywhere (TJ-RUNSEM-003, TJ-RUNSEM-009)', async () => {
    const run = await fold([header(), request(41), response(41), request(42), response(42), end('completed')]);
    expect(run.llmCalls.map((c) => [c.seq, c.request?.seq, c.response?.seq])).toEqual([
      [41, 41, 41],
      [42, 42, 42],
    ]);
    expect(run.findings).toEqual([]);
  });

  it('reports an unanswered request of an ended run (TJ-RUNSEM-004)', async () => {
    const run = await fold([header(), request(1), request(2), response(2), end('error')]);
    expect(codes(run)).toEqual(['unpaired_llm_request@2']);
    expect(run.llmCalls[0]?.seq).toBe(1);
    expect(run.llmCalls[0]).not.toHaveProperty('response');
  });

  it('exempts the last request of a run without run.end, but no earlier one (TJ-RUNSEM-004)', async () => {
    expect(codes(await fold([header(), request(1), response(1), request(2)]))).toEqual([]);
    expect(codes(await fold([header(), request(1), request(2)]))).toEqual(['unpaired_llm_request@2']);
  });

  it('reports a response without a request (TJ-RUNSEM-005)', async () => {
    const run = await fold([header(), response(7), end('completed')]);
    expect(codes(run)).toEqual(['unpaired_llm_response@2']);
    expect(run.llmCalls.map((c) => [c.seq, 'request' in c, 'response' in c])).toEqual([[7, false, true]]);
  });

  it('reports a second response to one request as unpaired: pairing is one to one (TJ-RUNSEM-003, TJ-RUNSEM-005)', async () => {
    const run = await fold([header(), request(1), response(1), response(1), end('completed')]);
    expect(codes(run)).toEqual(['unpaired_llm_response@4']);
  });

  it('reports a repeated request seq as seq_duplicate and keeps the first (TJ-RUNSEM-006)', async () => {
    const first = { ...request(5), ts: 'first' };
    const run = await fold([header(), first, request(5), response(5), response(5), end('completed')]);
    expect(codes(run)).toEqual(['seq_duplicate@3']);
    expect(run.llmCalls).toHaveLength(1);
    expect(run.llmCalls[0]?.request?.ts).toBe('first');
  });

  it('pairs regardless of the order of request and response in the file (TJ-RUNSEM-003)', async () => {
    const run = await fold([header(), response(1), request(1), end('completed')]);
    expect(run.findings).toEqual([]);
  });
});

describe('RunFold agent events (spec §16)', () => {
  it('allows gaps between agent.event seq values (TJ-RUNSEM-008)', async () => {
    const run = await fold([header(), agent(0), agent(3), agent(10), end('completed')]);
    expect(run.agentEventCount).toBe(3);
    expect(run.findings).toEqual([]);
  });

  it('reports a seq not greater than the previous agent.event seq (TJ-RUNSEM-007)', async () => {
    const run = await fold([header(), agent(0), agent(5), agent(5), agent(2), agent(3), end('completed')]);
    expect(run.agentEventCount).toBe(5);
    expect(codes(run)).toEqual(['agent_event_seq_regression@4', 'agent_event_seq_regression@5']);
  });

  it('ignores invalid agent events for order checks (TJ-COMPAT-017)', async () => {
    const run = await fold([header(), agent(4), { ...agent(1), seq: 'one' }, agent(5)]);
    expect(run.agentEventCount).toBe(2);
    expect(run.findings).toEqual([]);
  });
});
