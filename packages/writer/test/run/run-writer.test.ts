import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStore, readRunFile } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import {
  openRunWriter,
  openTurnJournal,
  type RunHeaderInput,
  runFilePath,
  toUtcTimestamp,
} from '../support/internals.js';
import { readLinesOf } from '../support/space.js';
import { findingCodes, tempDir } from '../support/temp.js';

const HEADER: RunHeaderInput = {
  startedAt: '2026-02-03T12:00:00.123Z',
  sessionId: 'f6d2c6d5-4a12-4cc4-bbc9-9a0c0d2b5af1',
  client: { name: 'tui', version: '0.1.0' },
  server: { name: 'runtime', version: '0.1.0' },
  model: { provider: 'openai', name: 'gpt-4.1-mini', reasoning: 'medium' },
  prompts: { system: 'You are a coding assistant.' },
  tools: { definitions: [{ type: 'function', function: { name: 'exec_command' } }], source: 'builtin' },
  runtime: { cwd: '/home/user/project', os: 'linux', arch: 'x64', version: '20.20.0' },
};

/** A clock that advances 10 ms per reading, from 2026-02-03T12:00:00.000Z. */
function steppingClock(): () => number {
  let now = Date.UTC(2026, 1, 3, 12, 0, 0);
  return () => {
    now += 10;
    return now;
  };
}

function lines(path: string): Record<string, unknown>[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

const REQUEST_INPUT = {
  messages: [
    { role: 'system', content: 'You are a coding assistant.' },
    { role: 'user', content: 'list files' },
  ],
  tools: [{ type: 'function', function: { name: 'exec_command', parameters: { type: 'object' } } }],
  tool_choice: null,
  model: 'gpt-4.1-mini',
};

describe('openRunWriter: a full run reads back as written (spec §7, §16)', () => {
  it('writes header, run.start, context, events, tool output, paired llm calls and run.end that check and readRunFile derive exactly (TJ-RUN-003, TJ-RUNSEM-001, TJ-RUNSEM-003, TJ-RUNSEM-010, TJ-RUNSEM-011)', async () => {
    const root = tempDir();
    const writer = await openRunWriter({ root, runId: 'run-1', header: HEADER, clock: steppingClock() });
    expect(writer.durability).toBe('every');
    expect(writer.opened).toMatchObject({ created: true, headerWritten: true, resumed: false });
    expect(writer.path).toBe(join(root, 'sessions', '2026', '02', '03', 'run-1.jsonl'));

    await writer.runStart('list files', { sessionId: HEADER.sessionId, uiContext: { cwd: '/home/user/project' } });
    await writer.context(87.5);
    const request1 = await writer.llmRequest({
      model: { provider: 'openai', name: 'gpt-4.1-mini' },
      input: REQUEST_INPUT,
    });
    expect(request1.seq).toBe(1);
    expect(writer.openLlmRequests).toEqual([1]);
    await writer.llmResponse({
      seq: 1,
      output: {
        messages: [{ role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function' }] }],
        usage: { model: 'gpt-4.1-mini', input_tokens: 120, output_tokens: 15, total_tokens: 135 },
        stop_reason: 'tool_use',
      },
    });
    expect(writer.openLlmRequests).toEqual([]);
    const event0 = await writer.agentEvent({ type: 'tool_call', tool: 'exec_command', tool_call_id: 'call_1' });
    await writer.toolOutput({
      tool: 'exec_command',
      toolCallId: 'call_1',
      resultRaw: 'AGENTS.md\nRULES.md\npackages\n',
      isError: false,
      outputRef: { id: 'call_1', byteSize: 28, lineCount: 3 },
    });
    const request2 = await writer.llmRequest({ input: REQUEST_INPUT, meta: { attempt: 1 } });
    await writer.llmResponse({ seq: request2.seq, output: { messages: [{ role: 'assistant', content: 'Done.' }] } });
    const event1 = await writer.agentEvent({ type: 'final', content: 'Here are the files.' });
    await writer.status('completed', { message: 'ok' });
    await writer.append('x.acme.note', { note: 'extension records are silent' });
    await writer.end({ outcome: 'completed', final: 'Here are the files.' });
    expect(writer.ended).toBe(true);
    await writer.close();
    expect([event0.seq, event1.seq, request2.seq]).toEqual([0, 1, 2]);

    const records = lines(writer.path);
    expect(records.map((r) => r.type)).toEqual([
      'header',
      'run.start',
      'run.context',
      'llm.request',
      'llm.response',
      'agent.event',
      'tool.output',
      'llm.request',
      'llm.response',
      'agent.event',
      'run.status',
      'x.acme.note',
      'run.end',
    ]);
    expect(records[0]).toEqual({
      type: 'header',
      schema_version: 1,
      run_id: 'run-1',
      session_id: HEADER.sessionId,
      started_at: '2026-02-03T12:00:00.123Z',
      client: HEADER.client,
      server: HEADER.server,
      model: HEADER.model,
      prompts: HEADER.prompts,
      tools: HEADER.tools,
      runtime: HEADER.runtime,
    });
    expect(records[0]).not.toHaveProperty('ts');
    for (const record of records.slice(1)) {
      expect(record.run_id).toBe('run-1');
      expect(record.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    expect(records[1]).toMatchObject({
      input: { type: 'text', text: 'list files' },
      ui_context: { cwd: '/home/user/project' },
    });
    expect(records[6]).toMatchObject({
      tool_call_id: 'call_1',
      is_error: false,
      output_ref: { byte_size: 28, line_count: 3 },
    });

    const check = await checkStore([root]);
    expect(check.findings).toEqual([]);
    const run = await readRunFile(writer.path);
    expect(run.findings).toEqual([]);
    expect(run).toMatchObject({
      runId: 'run-1',
      sessionId: HEADER.sessionId,
      outcome: 'completed',
      final: 'Here are the files.',
      lastStatus: 'completed',
      agentEventCount: 2,
    });
    expect(run.llmCalls.map((call) => [call.seq, call.request?.seq, call.response?.seq])).toEqual([
      [1, 1, 1],
      [2, 2, 2],
    ]);
    expect(run.header?.started_at).toBe('2026-02-03T12:00:00.123Z');
  });

  it('files the run under the UTC date of started_at and writes started_at in UTC, near midnight with a non-UTC offset (TJ-FAM-021)', async () => {
    const root = tempDir();
    // 23:30 on 3 February in New York is 04:30 on 4 February in UTC.
    const late = await openRunWriter({
      root,
      runId: 'late',
      header: { startedAt: '2026-02-03T23:30:00.123456-05:00' },
    });
    expect(late.path).toBe(join(root, 'sessions', '2026', '02', '04', 'late.jsonl'));
    expect(late.header?.started_at).toBe('2026-02-04T04:30:00.123456Z');
    await late.end({ outcome: 'cancelled' });
    await late.close();
    // 02:00 on 1 March in India is 20:30 on 28 February in UTC (2026 is no leap year).
    const early = await openRunWriter({ root, runId: 'early', header: { startedAt: '2026-03-01T02:00:00+05:30' } });
    expect(early.path).toBe(join(root, 'sessions', '2026', '02', '28', 'early.jsonl'));
    await early.close();
    const fromDate = await openRunWriter({
      root,
      runId: 'date',
      header: { startedAt: new Date(Date.UTC(2024, 1, 29, 23, 59, 59, 999)) },
    });
    expect(fromDate.path).toBe(join(root, 'sessions', '2024', '02', '29', 'date.jsonl'));
    expect(fromDate.header?.started_at).toBe('2024-02-29T23:59:59.999Z');
    await fromDate.close();
    expect(lines(late.path)[0]?.started_at).toBe('2026-02-04T04:30:00.123456Z');
    expect((await readRunFile(late.path)).outcome).toBe('cancelled');
    // A run without run.end reads as incomplete, and check reports nothing about it.
    expect((await readRunFile(early.path)).outcome).toBe('incomplete');
    expect(await findingCodes([root])).toEqual([]);
  });

  it('parses RFC 3339 timestamps strictly and refuses what cannot place the file (spec §4.4)', () => {
    expect(toUtcTimestamp('2024-02-29t00:00:00z').text).toBe('2024-02-29T00:00:00Z');
    expect(toUtcTimestamp('2026-12-31T23:59:60Z').text).toBe('2026-12-31T23:59:60Z');
    expect(toUtcTimestamp('2027-01-01T00:30:00+01:00')).toMatchObject({ year: '2026', month: '12', day: '31' });
    for (const bad of [
      'yesterday',
      '2026-02-30T00:00:00Z',
      '2025-02-29T00:00:00Z',
      '2026-02-03T24:00:00Z',
      '2026-02-03T12:00:00',
      '2026-13-01T00:00:00Z',
      '2026-02-03T12:00:00+24:00',
    ]) {
      expect(() => toUtcTimestamp(bad), bad).toThrow(expect.objectContaining({ code: 'invalid_record' }));
    }
    expect(() => toUtcTimestamp(new Date(Number.NaN))).toThrow(/invalid Date/);
    expect(runFilePath('/store', 'r1', '2026-02-03T12:00:00Z')).toBe(
      join('/store', 'sessions', '2026', '02', '03', 'r1.jsonl'),
    );
  });

  it('numbers overlapping agent events in call order, accepts gaps and refuses a seq that does not increase (TJ-RUNSEM-007, TJ-RUNSEM-008, TJ-RUNSEM-010)', async () => {
    const root = tempDir();
    const writer = await openRunWriter({ root, runId: 'seqs', header: HEADER });
    const acks = await Promise.all([
      writer.agentEvent({ type: 'a' }),
      writer.agentEvent({ type: 'b' }),
      writer.agentEvent({ type: 'c' }),
    ]);
    expect(acks.map((ack) => ack.seq)).toEqual([0, 1, 2]);
    expect((await writer.agentEvent({ type: 'jump' }, { seq: 10 })).seq).toBe(10);
    await expect(writer.agentEvent({ type: 'back' }, { seq: 10 })).rejects.toMatchObject({
      code: 'illegal_transition',
    });
    await expect(writer.agentEvent({ type: 'back' }, { seq: 3 })).rejects.toMatchObject({ code: 'illegal_transition' });
    await expect(writer.agentEvent({ type: 'neg' }, { seq: -1 })).rejects.toMatchObject({ code: 'invalid_record' });
    await expect(writer.agentEvent({ type: 'frac' }, { seq: 11.5 })).rejects.toMatchObject({ code: 'invalid_record' });
    expect((await writer.agentEvent({ type: 'next' })).seq).toBe(11);
    await writer.close();
    const seqs = lines(writer.path)
      .filter((r) => r.type === 'agent.event')
      .map((r) => [r.seq, (r.event as { type: string }).type]);
    expect(seqs).toEqual([
      [0, 'a'],
      [1, 'b'],
      [2, 'c'],
      [10, 'jump'],
      [11, 'next'],
    ]);
    expect(await findingCodes([root])).toEqual([]);
  });

  it('pairs llm.response with an open llm.request only, and refuses duplicate request seqs (TJ-RUNSEM-004, TJ-RUNSEM-005, TJ-RUNSEM-006, TJ-RUNSEM-009, TJ-RUNSEM-011)', async () => {
    const root = tempDir();
    const writer = await openRunWriter({ root, runId: 'pairs', header: HEADER, firstLlmSeq: 40 });
    const output = { messages: [{ role: 'assistant', content: 'x' }] };
    await expect(writer.llmResponse({ seq: 40, output })).rejects.toMatchObject({ code: 'illegal_transition' });
    expect((await writer.llmRequest({ input: REQUEST_INPUT })).seq).toBe(40);
    await expect(writer.llmRequest({ seq: 40, input: REQUEST_INPUT })).rejects.toMatchObject({
      code: 'illegal_transition',
    });
    // An explicit seq (a session-wide counter) moves the counter on.
    expect((await writer.llmRequest({ seq: 50, input: REQUEST_INPUT })).seq).toBe(50);
    expect(writer.nextLlmSeq).toBe(51);
    expect(writer.openLlmRequests).toEqual([40, 50]);
    await writer.llmResponse({ seq: 50, output });
    await expect(writer.llmResponse({ seq: 50, output })).rejects.toMatchObject({ code: 'illegal_transition' });
    await writer.llmResponse({ seq: 40, output });
    await expect(writer.llmRequest({ input: { messages: 'nope' } as never })).rejects.toMatchObject({
      code: 'invalid_record',
    });
    expect(writer.nextLlmSeq).toBe(51);
    await writer.end({ outcome: 'completed' });
    await writer.close();
    const run = await readRunFile(writer.path);
    expect(run.findings).toEqual([]);
    expect(run.llmCalls.map((call) => [call.seq, call.request !== undefined, call.response !== undefined])).toEqual([
      [40, true, true],
      [50, true, true],
    ]);
  });

  it('validates every record as written and writes nothing for an invalid one (TJ-COMPAT-018, TJ-RUN-007, TJ-RUN-008)', async () => {
    const root = tempDir();
    const writer = await openRunWriter({ root, runId: 'invalid', header: HEADER });
    const before = readFileSync(writer.path);
    await expect(writer.runStart({ type: 5 } as never)).rejects.toMatchObject({ code: 'invalid_record' });
    await expect(writer.context(Number.NaN)).rejects.toMatchObject({ code: 'invalid_record' });
    await expect(writer.agentEvent({ kind: 'no type' } as never)).rejects.toMatchObject({ code: 'invalid_record' });
    await expect(writer.toolOutput({ tool: 't', toolCallId: '', resultRaw: 'x' })).rejects.toMatchObject({
      code: 'invalid_record',
    });
    await expect(writer.status(7 as never)).rejects.toMatchObject({ code: 'invalid_record' });
    await expect(writer.error({ name: 'E' } as never)).rejects.toMatchObject({ code: 'invalid_record' });
    await expect(writer.end({ outcome: undefined } as never)).rejects.toMatchObject({ code: 'invalid_record' });
    // The generic append: dedicated types, other families and redefined envelope members are refused.
    for (const type of ['header', 'agent.event', 'llm.request', 'llm.response', 'run.end', 'message_append', '']) {
      await expect(writer.append(type, {}), type).rejects.toMatchObject({ code: 'invalid_record' });
    }
    await expect(writer.append('x.acme.note', { run_id: 'other' })).rejects.toMatchObject({ code: 'invalid_record' });
    await expect(writer.append('run.status', { status: 3 })).rejects.toMatchObject({ code: 'invalid_record' });
    expect(readFileSync(writer.path)).toEqual(before);
    // Nothing was reserved by the refused calls: numbering starts at 0.
    expect((await writer.agentEvent({ type: 'ok' })).seq).toBe(0);
    await writer.append('run.error', { error: { name: 'ProviderError', message: 'rate limited', status: 429 } });
    await writer.append('future.record', { detail: 1 });
    await writer.close();
    expect(lines(writer.path).map((r) => r.type)).toEqual(['header', 'agent.event', 'run.error', 'future.record']);
    // A type v1 does not define is accepted by readers and reported as unknown_record (info) (TJ-COMPAT-005).
    expect(await findingCodes([root])).toEqual(['unknown_record']);
  });
});

describe('openRunWriter: run.end is the last record (spec §16)', () => {
  it('rejects every call after run.end with run_ended and leaves the file unchanged (TJ-RUNSEM-002)', async () => {
    const root = tempDir();
    const writer = await openRunWriter({ root, runId: 'ended', header: HEADER });
    await writer.runStart('go');
    // end() reserves the end at once: a call made while run.end is being written is refused too.
    const ending = writer.end({ outcome: 'completed', final: 'done' });
    await expect(writer.agentEvent({ type: 'late' })).rejects.toMatchObject({ code: 'run_ended' });
    await ending;
    const after = readLinesOf(writer.path);
    const calls: Promise<unknown>[] = [
      writer.runStart('again'),
      writer.context(10),
      writer.agentEvent({ type: 'late' }),
      writer.toolOutput({ tool: 't', toolCallId: 'c', resultRaw: '' }),
      writer.llmRequest({ input: REQUEST_INPUT }),
      writer.llmResponse({ seq: 1, output: { messages: [] } }),
      writer.status('running'),
      writer.error({ name: 'E', message: 'm' }),
      writer.append('x.acme.note', {}),
      writer.end({ outcome: 'error' }),
    ];
    for (const call of calls) await expect(call).rejects.toMatchObject({ code: 'run_ended' });
    await writer.close();
    expect(readFileSync(writer.path)).toEqual(after);
    expect(await findingCodes([root])).toEqual([]);
    expect((await readRunFile(writer.path)).outcome).toBe('completed');
  });

  it('reopens a run without a second header and continues its numbering (TJ-RUN-004)', async () => {
    const root = tempDir();
    const first = await openRunWriter({ root, runId: 'resumed', header: HEADER });
    await first.runStart('go');
    await first.agentEvent({ type: 'a' });
    await first.agentEvent({ type: 'b' });
    await first.llmRequest({ input: REQUEST_INPUT });
    await first.close();

    // A restarted process passes the same header; only startedAt is used, to find the file.
    const second = await openRunWriter({
      root,
      runId: 'resumed',
      header: { ...HEADER, prompts: { system: 'changed' } },
    });
    expect(second.path).toBe(first.path);
    expect(second.opened).toMatchObject({ created: false, headerWritten: false, resumed: true, tornTail: null });
    expect(second.header?.prompts).toEqual(HEADER.prompts);
    expect(second.lastAgentSeq).toBe(1);
    expect(second.openLlmRequests).toEqual([1]);
    expect(second.nextLlmSeq).toBe(2);
    expect((await second.agentEvent({ type: 'c' })).seq).toBe(2);
    await second.llmResponse({ seq: 1, output: { messages: [{ role: 'assistant', content: 'hi' }] } });
    await second.end({ outcome: 'completed' });
    await second.close();

    const records = lines(first.path);
    expect(records.filter((r) => r.type === 'header')).toHaveLength(1);
    expect(records[0]?.type).toBe('header');
    expect(await findingCodes([root])).toEqual([]);
    const run = await readRunFile(first.path);
    expect(run).toMatchObject({ outcome: 'completed', agentEventCount: 3 });
    expect(run.llmCalls.map((c) => [c.seq, c.response !== undefined])).toEqual([[1, true]]);

    // Reopening after run.end works, but refuses every append.
    const size = readFileSync(first.path).length;
    const third = await openRunWriter({ root, runId: 'resumed', header: HEADER });
    expect(third.ended).toBe(true);
    await expect(third.agentEvent({ type: 'late' })).rejects.toMatchObject({ code: 'run_ended' });
    await expect(third.end({ outcome: 'completed' })).rejects.toMatchObject({ code: 'run_ended' });
    await third.close();
    expect(readFileSync(first.path).length).toBe(size);
  });

  it('writes the header into an existing empty file, and refuses a file of another run or family', async () => {
    const dir = tempDir();
    const empty = join(dir, 'empty.jsonl');
    writeFileSync(empty, '');
    const writer = await openRunWriter({ file: empty, runId: 'r-empty', header: HEADER });
    expect(writer.opened).toMatchObject({ created: false, headerWritten: true, resumed: false });
    await writer.close();
    expect(lines(empty).map((r) => r.type)).toEqual(['header']);

    const before = readFileSync(empty);
    await expect(openRunWriter({ file: empty, runId: 'r-other', header: HEADER })).rejects.toMatchObject({
      code: 'invalid_option',
      message: expect.stringContaining('r-empty'),
    });
    expect(readFileSync(empty)).toEqual(before);

    // A file without a header is continued under its first record's run id, never given a late header.
    const headless = join(dir, 'headless.jsonl');
    writeFileSync(
      headless,
      `${JSON.stringify({ type: 'run.start', run_id: 'r-h', ts: 't', input: { type: 'text', text: 'x' } })}\n`,
    );
    await expect(openRunWriter({ file: headless, runId: 'r-x', header: HEADER })).rejects.toMatchObject({
      code: 'invalid_option',
    });
    const continued = await openRunWriter({ file: headless, runId: 'r-h', header: HEADER });
    expect(continued.opened.headerWritten).toBe(false);
    await continued.end({ outcome: 'completed' });
    await continued.close();
    expect(lines(headless).map((r) => r.type)).toEqual(['run.start', 'run.end']);

    const turns = await openTurnJournal({ dir: join(dir, '_turn_journal'), sessionId: 's' });
    await turns.submit({ content: 'x' });
    await turns.close();
    await expect(
      openRunWriter({ file: join(dir, '_turn_journal', 's.jsonl'), runId: 's', header: HEADER }),
    ).rejects.toMatchObject({ code: 'invalid_option', message: expect.stringContaining('turn records') });

    const v2 = join(dir, 'v2.jsonl');
    writeFileSync(v2, `${JSON.stringify({ type: 'header', schema_version: 2, run_id: 'r2', started_at: 't' })}\n`);
    await expect(openRunWriter({ file: v2, runId: 'r2', header: HEADER })).rejects.toMatchObject({
      code: 'invalid_option',
      message: expect.stringContaining('schema_version 2'),
    });
  });

  it('refuses a second writer of the same run while the first holds the lock (TJ-DUR-017, TJ-DUR-018)', async () => {
    const root = tempDir();
    const writer = await openRunWriter({ root, runId: 'locked', header: HEADER });
    await expect(openRunWriter({ root, runId: 'locked', header: HEADER })).rejects.toMatchObject({
      code: 'journal_locked',
    });
    await writer.close();
    await expect(writer.agentEvent({ type: 'x' })).rejects.toMatchObject({ code: 'writer_closed' });
    const again = await openRunWriter({ root, runId: 'locked', header: HEADER });
    await again.close();
  });
});

describe('openRunWriter: identifiers (spec §4.3)', () => {
  const HOSTILE = ['../x', 'a/b', '..', '.', '', 'x'.repeat(129), 'nul\u0000', '~', 'a~b', 'a\\b', 'é'];

  it('rejects hostile run ids before any file or directory is created (TJ-FAM-010)', async () => {
    const root = tempDir();
    for (const runId of HOSTILE) {
      await expect(openRunWriter({ root, runId, header: HEADER }), JSON.stringify(runId)).rejects.toMatchObject({
        code: 'invalid_identifier',
      });
      await expect(
        openRunWriter({ file: join(root, 'sessions', 'x.jsonl'), runId, header: HEADER }),
      ).rejects.toMatchObject({ code: 'invalid_identifier' });
    }
    await expect(openRunWriter({ root, runId: 42 as never, header: HEADER })).rejects.toMatchObject({
      code: 'invalid_identifier',
    });
    // A header that cannot be written is refused before anything is created too.
    await expect(openRunWriter({ root, runId: 'ok', header: { startedAt: 'yesterday' } })).rejects.toMatchObject({
      code: 'invalid_record',
    });
    await expect(
      openRunWriter({ root, runId: 'ok', header: { ...HEADER, client: { name: 'x' } as never } }),
    ).rejects.toMatchObject({ code: 'invalid_record' });
    await expect(
      openRunWriter({ root, runId: 'ok', header: HEADER, durability: 'often' as never }),
    ).rejects.toMatchObject({
      code: 'invalid_option',
    });
    expect(() => runFilePath(root, '../x', '2026-02-03T12:00:00Z')).toThrow(
      expect.objectContaining({ code: 'invalid_identifier' }),
    );
    expect(readdirSync(root)).toEqual([]);
  });
});

describe('a caller-supplied ts (TJ-RUN-020)', () => {
  it('is written, in UTC, as the record’s ts instead of the time of writing; an invalid one writes nothing', async () => {
    const root = tempDir();
    const writer = await openRunWriter({ root, runId: 'observed', header: HEADER, durability: 'every' });
    const observed = new Date('2026-02-03T11:59:58.250+02:00');
    await writer.agentEvent({ type: 'final', content: 'done' }, { ts: observed });
    await writer.status('running', { ts: observed });
    await expect(writer.status('running', { ts: new Date(Number.NaN) })).rejects.toMatchObject({
      code: 'invalid_option',
    });
    await writer.close();
    const lines = readLinesOf(runFilePath(root, 'observed', HEADER.startedAt))
      .toString('utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((record) => record.type)).toEqual(['header', 'agent.event', 'run.status']);
    expect(lines[1].ts).toBe('2026-02-03T09:59:58.250Z');
    expect(lines[2].ts).toBe('2026-02-03T09:59:58.250Z');
    expect(lines[0].ts, 'the header keeps its own time').not.toBe(lines[1].ts);
  });
});
