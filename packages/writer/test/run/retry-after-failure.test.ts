// After a failed fdatasync the writer cannot know what reached stable storage (TJ-DUR-021): every later call is
// refused with `writer_poisoned`, a call queued behind the failing one is never answered as written, nothing hangs,
// and a reopen goes on from what the file holds. The same cases as test/turn/retry-after-failure.test.ts, for RunWriter.
import { readFileSync } from 'node:fs';
import { readRunFile } from '@turnjournal/reader';
import { allWithin, outcomeOf } from '@turnjournal/test-support';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import { nodeFileSystem, openRunWriter, type RunHeaderInput, type RunWriter } from '../support/internals.js';
import { findingCodes, tempDir } from '../support/temp.js';

const HEADER: RunHeaderInput = { startedAt: '2026-02-03T12:00:00.000Z', sessionId: 'sess-1' };

/** Every kind of append a RunWriter makes, each refused once the writer is poisoned. */
function everyCall(writer: RunWriter): Record<string, () => Promise<unknown>> {
  return {
    runStart: () => writer.runStart('go'),
    context: () => writer.context(50),
    agentEvent: () => writer.agentEvent({ type: 'after' }),
    toolOutput: () => writer.toolOutput({ tool: 'search', toolCallId: 'c1', resultRaw: 'x' }),
    llmRequest: () => writer.llmRequest({ input: { messages: [] } }),
    llmResponse: () => writer.llmResponse({ seq: 0, output: { messages: [] } }),
    status: () => writer.status('busy'),
    error: () => writer.error({ name: 'Error', message: 'boom' }),
    end: () => writer.end({ outcome: 'error' }),
    append: () => writer.append('x.custom', {}),
  };
}

function types(path: string): string[] {
  return (
    readFileSync(path, 'utf8')
      .split('\n')
      // A writer closed while poisoned leaves its pre-allocated space (NUL bytes, spec §3.8) after the last line.
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line).type as string)
  );
}

describe('RunWriter: calls after a failed sync (TJ-DUR-021, TJ-DUR-030)', () => {
  it('refuses the calls queued behind a failing sync, answers none of them, and keeps none of them (bug found)', async () => {
    const root = tempDir();
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await openRunWriter({ root, runId: 'queued', header: HEADER, fs });
    await writer.agentEvent({ type: 'acknowledged' });
    const seq = writer.nextLlmSeq;
    fs.inject({ op: 'fdatasync', errno: 'EIO' });
    // Issued together, before the first one's sync fails: a request, a second one, the first one's answer and the end.
    const outcomes = await allWithin([
      outcomeOf(writer.llmRequest({ input: { messages: [] } })),
      outcomeOf(writer.llmRequest({ input: { messages: [] } })),
      outcomeOf(writer.llmResponse({ seq, output: { messages: [] } })),
      outcomeOf(writer.end({ outcome: 'completed' })),
    ]);
    expect(outcomes).toEqual([
      'rejected: write_failed',
      'rejected: writer_poisoned',
      'rejected: writer_poisoned',
      'rejected: writer_poisoned',
    ]);
    // The writer's state holds nothing that was not acknowledged: it said `ended` and listed two open requests, from
    // the reservations of calls the file refused.
    expect(writer.ended).toBe(false);
    expect(writer.openLlmRequests).toEqual([]);
    expect(writer.nextLlmSeq).toBe(seq);
    await writer.close();
    expect(await findingCodes([root])).toEqual([]);
  });

  it('refuses every kind of call with writer_poisoned, the retry of the failed one included', async () => {
    const root = tempDir();
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await openRunWriter({ root, runId: 'every', header: HEADER, fs });
    await writer.agentEvent({ type: 'acknowledged' });
    fs.inject({ op: 'fdatasync', errno: 'EIO' });
    expect(await outcomeOf(writer.llmRequest({ input: { messages: [] } }))).toBe('rejected: write_failed');
    // The retry is refused, not numbered after a record that was never acknowledged.
    expect(await outcomeOf(writer.llmRequest({ input: { messages: [] } }))).toBe('rejected: writer_poisoned');
    const outcomes = await allWithin(Object.values(everyCall(writer)).map((call) => outcomeOf(call())));
    expect(outcomes).toEqual(Object.keys(everyCall(writer)).map(() => 'rejected: writer_poisoned'));
    expect(writer.ended).toBe(false);
    await writer.close();
  });

  it('reopens on what the file holds after a failed sync, and numbers on from it', async () => {
    const root = tempDir();
    const fs = faultyFileSystem(nodeFileSystem);
    const writer = await openRunWriter({ root, runId: 'reopen', header: HEADER, fs });
    await writer.agentEvent({ type: 'acknowledged' });
    const first = writer.nextLlmSeq;
    fs.inject({ op: 'fdatasync', errno: 'EIO' });
    expect(await outcomeOf(writer.llmRequest({ input: { messages: [] } }))).toBe('rejected: write_failed');
    await writer.close();
    // What the file holds, whole lines only: the unsynced request may be there (it reached the page cache here).
    const held = types(writer.path);
    expect(held.slice(0, 2)).toEqual(['header', 'agent.event']);
    expect(held.length).toBeLessThanOrEqual(3);

    const reopened = await openRunWriter({ root, runId: 'reopen', header: HEADER });
    expect(reopened.opened.headerWritten).toBe(false);
    const request = await reopened.llmRequest({ input: { messages: [] } });
    // Numbered after what the file holds: after the unsynced request when it reached the file.
    expect(request.seq).toBe(held.includes('llm.request') ? first + 1 : first);
    await reopened.llmResponse({ seq: request.seq, output: { messages: [] } });
    await reopened.end({ outcome: 'completed' });
    await reopened.close();
    const run = await readRunFile(reopened.path);
    expect(run.outcome).toBe('completed');
    // The unsynced request that reached the file has no response: the reader says so, and nothing else.
    expect(run.findings.map((finding) => finding.code)).toEqual(
      held.includes('llm.request') ? ['unpaired_llm_request'] : [],
    );
  });
});
