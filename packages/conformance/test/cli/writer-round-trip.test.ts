import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openEventLog, openRunWriter, openTurnJournal, writeStateDocument } from '@turnjournal/writer';
import { describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '../../../..');
const bin = join(repo, 'packages/conformance/dist/cli/main.js');

describe('writer round trip: everything the writer produces passes `turnjournal check` with no findings', () => {
  it('for the turn, event, run and state families in one store (TJ-FAM-005, TJ-TURN-015)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-round-trip-'));
    const sessionId = 'sess-1';

    const journal = await openTurnJournal({ dir: join(root, '_turn_journal'), sessionId, shard: '41' });
    const { turnId } = await journal.submit({
      content: 'Summarise the attached report.',
      attachments: [{ name: 'q2.pdf', path: '/uploads/q2.pdf', mime: 'application/pdf', size: 48213 }],
      streamId: 'stream-1',
      workspace: '/workspace',
      model: 'openai/gpt-5',
      modelProvider: 'openai',
      extra: { x_host_note: 'kept by every reader' },
    });
    await journal.workerStarted(turnId);
    await journal.assistantStarted(turnId, { assistantMessageIndex: 1 });
    await journal.complete(turnId, { assistantMessageIndex: 1 });
    const second = await journal.submit({ content: 'And the risks?\u2028(two lines)', streamId: 'stream-2' });
    await journal.interrupt(second.turnId, 'cancelled');
    await journal.close();

    const log = await openEventLog({ root, sessionId, checkpointInterval: 4 });
    await log.appendMessage({ role: 'user', content: 'Summarise the attached report.' });
    await log.chatStarted({ requestId: 'req-1', model: 'gpt-5', content: 'Summarise the attached report.' });
    await log.segmentStarted({ requestId: 'req-1', messageId: 'm-1' });
    await log.delta({ requestId: 'req-1', messageId: 'm-1', text: 'The report ' });
    await log.delta({ requestId: 'req-1', messageId: 'm-1', text: 'says…' });
    await log.toolStart({ requestId: 'req-1', toolCallId: 'call-1', tool: 'read_file', args: { path: 'q2.pdf' } });
    await log.toolResult({ requestId: 'req-1', toolCallId: 'call-1', output: '…' });
    await log.toolEnd({ requestId: 'req-1', toolCallId: 'call-1' });
    await log.appendMessage({ role: 'assistant', content: 'The report says…' });
    await log.chatDone({ requestId: 'req-1' });
    await log.ack('req-1');
    await log.append('x.example.note', { text: 'an extension record' });
    await log.close();

    const run = await openRunWriter({
      root,
      runId: 'run-1',
      header: { startedAt: '2026-02-03T12:00:00.123Z', sessionId, model: { provider: 'openai', name: 'gpt-5' } },
    });
    await run.runStart({ type: 'text', text: 'list files' }, { sessionId });
    const request = await run.llmRequest({ input: { messages: [{ role: 'user', content: 'list files' }] } });
    await run.llmResponse({ seq: request.seq, output: { messages: [{ role: 'assistant', content: 'ls' }] } });
    await run.agentEvent({ type: 'final', content: 'done' });
    await run.toolOutput({ tool: 'exec_command', toolCallId: 'call-1', resultRaw: 'a\nb\n' });
    await run.end({ outcome: 'completed', final: 'done' });
    await run.close();

    await writeStateDocument({
      root,
      sessionId,
      state: { messages: [{ role: 'user', content: 'list files' }], run_id: 'run-1', invoke_seq: request.seq },
    });

    const result = spawnSync(process.execPath, [bin, 'check', '--format', 'json', root], { encoding: 'utf8' });
    const report = JSON.parse(result.stdout);
    expect(report.findings).toEqual([]);
    expect(result.status).toBe(0);
    const families = report.files.map((f: { family: string }) => f.family).sort();
    expect(families).toEqual(['event', 'run', 'state', 'turn']);
    expect(report.sessions[0].turns.map((t: { state: string }) => t.state).sort()).toEqual([
      'completed',
      'interrupted',
    ]);
  });
});
