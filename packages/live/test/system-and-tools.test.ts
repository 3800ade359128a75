// A run's system messages (TJ-LIVE-062) and its tool calls in the view while they run (TJ-LIVE-063).
import { join } from 'node:path';
import { type LiveSession, openConversationHub, type TokenMode } from '@turnjournal/live';
import { afterEach, describe, expect, it } from 'vitest';
import { logLines, tempStore } from './support.js';

const hubs: { close(): Promise<void> }[] = [];
afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
});

async function open(tokens: TokenMode = 'durable'): Promise<{ session: LiveSession; log: string }> {
  const root = tempStore('tj-system-');
  const hub = openConversationHub({ root, retention: false, tokens, deltaFlushMs: 600_000 });
  hubs.push(hub);
  const session = (await hub.session('s1')) as LiveSession;
  return { session, log: join(root, 's1', 'events.jsonl') };
}

describe.each(['durable', 'segments'] as const)('run.system in %s mode (TJ-LIVE-062)', (mode) => {
  it('commits the open segment, then the system message, durable before it resolves; the next delta opens a new segment', async () => {
    const { session, log } = await open(mode);
    const sent = await session.send({ requestId: 'r1', content: 'go' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('Before.');
    await sent.run.system('The user switched to metric units.');
    // Durable when it resolved: the file holds it, after the segment's message.
    const messages = logLines(log)
      .filter((r) => r.type === 'message_append')
      .map((r) => r.payload.message);
    expect(messages.slice(1)).toEqual([
      { role: 'assistant', content: 'Before.', id: 'r1.a1', request_id: 'r1' },
      { role: 'system', content: 'The user switched to metric units.', id: 'r1.system1', request_id: 'r1' },
    ]);
    expect(session.snapshot().overlay).toBeNull();
    await sent.run.delta('After.');
    await sent.run.system('Second note.');
    await sent.run.done();
    expect(session.snapshot().messages.map((m) => [m.role, m.content, (m as { id?: string }).id])).toEqual([
      ['user', 'go', 'r1.user'],
      ['assistant', 'Before.', 'r1.a1'],
      ['system', 'The user switched to metric units.', 'r1.system1'],
      ['assistant', 'After.', 'r1.a2'],
      ['system', 'Second note.', 'r1.system2'],
    ]);
  });
});

describe('run.system refusals (TJ-LIVE-062)', () => {
  it('refuses a text that is not a string and a run that is not active, writing nothing', async () => {
    const { session, log } = await open();
    const sent = await session.send({ requestId: 'r1', content: 'go' });
    if (!sent.created) throw new Error('expected a new run');
    const before = logLines(log).length;
    await expect(sent.run.system(42 as unknown as string)).rejects.toMatchObject({ code: 'invalid_request' });
    expect(logLines(log).length).toBe(before);
    await sent.run.done();
    await expect(sent.run.system('late')).rejects.toMatchObject({ code: 'run_not_active' });
  });
});

describe('tool calls in the view while they run (TJ-LIVE-063)', () => {
  it('lists a started call as running, then ended, in the active run of every snapshot', async () => {
    const { session } = await open();
    const sent = await session.send({ requestId: 'r1', content: 'go' });
    if (!sent.created) throw new Error('expected a new run');
    expect(session.snapshot().activeRun?.tools).toEqual([]);
    await sent.run.toolStart({ toolCallId: 'c1', tool: 'search', args: { q: 'units' } });
    const running = session.snapshot().activeRun?.tools;
    expect(running).toEqual([
      { toolCallId: 'c1', tool: 'search', args: { q: 'units' }, startedAt: expect.any(String), endedAt: null },
    ]);
    await sent.run.toolResult({ toolCallId: 'c1', output: 'metric', isError: true });
    await sent.run.toolEnd({ toolCallId: 'c1', isError: true });
    await sent.run.toolStart({ toolCallId: 'c2', tool: 'convert' });
    const tools = session.snapshot().activeRun?.tools ?? [];
    expect(tools.map((t) => [t.toolCallId, t.endedAt === null, t.isError])).toEqual([
      ['c1', false, true],
      ['c2', true, undefined],
    ]);
    await sent.run.toolEnd({ toolCallId: 'c2' });
    await sent.run.done();
    expect(session.snapshot().activeRun).toBeNull();
    // The next run starts with none of the last run's calls.
    const next = await session.send({ requestId: 'r2', content: 'again' });
    if (!next.created) throw new Error('expected a new run');
    expect(session.snapshot().activeRun?.tools).toEqual([]);
    await next.run.done();
  });
});
