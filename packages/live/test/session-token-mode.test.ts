// A token mode per session (TJ-LIVE-066): `hub.session(id, { tokens })` overrides the hub's mode for that session's
// runs, is kept when the session is closed for room and opened again, and a run keeps the mode it started in.
import { join } from 'node:path';
import { type ConversationHub, type HubSession, LiveError, openConversationHub } from '@turnjournal/live';
import { afterEach, describe, expect, it } from 'vitest';
import { logLines, tempStore } from './support.js';

const hubs: ConversationHub[] = [];
afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
});

function hubOf(options: Partial<Parameters<typeof openConversationHub>[0]> = {}): {
  hub: ConversationHub;
  root: string;
} {
  const root = tempStore('tj-live-session-tokens-');
  const hub = openConversationHub({ root, retention: false, ...options });
  hubs.push(hub);
  return { hub, root };
}

/** Streams ten tokens of one paragraph-less line on a new run of `session`, then ends it. */
async function tenTokens(session: HubSession, requestId: string): Promise<void> {
  if (session.role !== 'owner') throw new Error('expected the owner');
  const sent = await session.send({ requestId, content: requestId });
  if (!sent.created) throw new Error(`${requestId} was not created`);
  for (let n = 0; n < 10; n += 1) await sent.run.delta(`t${n} `);
  await sent.run.done();
}

/** The `chat.delta` records of `requestId` in the session's log. */
function deltasOf(root: string, sessionId: string, requestId: string): number {
  return logLines(join(root, sessionId, 'events.jsonl')).filter(
    (record) => record.type === 'chat.delta' && record.payload.request_id === requestId,
  ).length;
}

describe('hub.session(id, { tokens }) (TJ-LIVE-066)', () => {
  it("overrides the hub's mode for that session only", async () => {
    const { hub, root } = hubOf({ tokens: 'durable' });
    const quiet = await hub.session('quiet', { tokens: 'segments' });
    const chatty = await hub.session('chatty');
    expect(quiet.role === 'owner' && quiet.tokens).toBe('segments');
    expect(chatty.role === 'owner' && chatty.tokens).toBe('durable');
    await tenTokens(quiet, 'q1');
    await tenTokens(chatty, 'c1');
    expect(deltasOf(root, 'quiet', 'q1')).toBe(0);
    expect(deltasOf(root, 'chatty', 'c1')).toBe(10);
  });

  it('keeps the mode when the session is closed for room and opened again by a caller that names none', async () => {
    const { hub, root } = hubOf({ tokens: 'durable', maxOpenSessions: 1 });
    await tenTokens(await hub.session('quiet', { tokens: 'segments' }), 'q1');
    await tenTokens(await hub.session('other'), 'o1');
    expect(hub.openSessions()).toEqual(['other']);
    // A transport opens it again without options: the session's mode comes back with it.
    const reopened = await hub.session('quiet');
    expect(reopened.role === 'owner' && reopened.tokens).toBe('segments');
    await tenTokens(reopened, 'q2');
    expect(deltasOf(root, 'quiet', 'q2')).toBe(0);
    expect(deltasOf(root, 'other', 'o1')).toBe(10);
  });

  it('lets a run keep the mode it started in; a new mode applies from the next run', async () => {
    const { hub, root } = hubOf({ tokens: 'segments' });
    const session = await hub.session('s');
    if (session.role !== 'owner') throw new Error('expected the owner');
    const sent = await session.send({ requestId: 'r1', content: 'first' });
    if (!sent.created) throw new Error('expected a new run');
    await sent.run.delta('before ');
    expect(await hub.session('s', { tokens: 'durable' })).toBe(session);
    expect(session.tokens).toBe('durable');
    for (let n = 0; n < 5; n += 1) await sent.run.delta(`t${n} `);
    await sent.run.done();
    expect(deltasOf(root, 's', 'r1')).toBe(0);
    await tenTokens(session, 'r2');
    expect(deltasOf(root, 's', 'r2')).toBe(10);
  });

  it('refuses a mode that is neither durable nor segments, and leaves the session as it was', async () => {
    const { hub } = hubOf();
    const refused = await hub.session('s', { tokens: 'fast' as never }).then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(LiveError);
    expect(refused).toMatchObject({ code: 'invalid_request' });
    expect(hub.openSessions()).toEqual([]);
    const session = await hub.session('s');
    expect(session.role === 'owner' && session.tokens).toBe('durable');
  });
});
