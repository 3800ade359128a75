// Bounds on open sessions (TJ-LIVE-065): past maxOpenSessions the hub closes the idle session used least recently,
// never one with a run or a subscriber, and refuses the open with `too_many_sessions` when every one is busy; a
// session it closed opens again, recovered, on its next use. The last case runs a flood of 1,500 sessions in a child
// process under `ulimit -n 256`.
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ConversationHub, type HubSession, LiveError, openConversationHub } from '@turnjournal/live';
import { afterEach, describe, expect, it } from 'vitest';
import { TestClock, tempStore } from './support.js';

const here = dirname(fileURLToPath(import.meta.url));
const CHILD = join(here, 'fixtures', 'open-sessions-child.mjs');
const BUILT = join(here, '..', 'dist');
/** Far above the 15 s the flood takes on a loaded 2-core machine. */
const CHILD_GUARD_MS = 100_000;

const hubs: ConversationHub[] = [];
afterEach(async () => {
  for (const hub of hubs.splice(0)) await hub.close();
});

function hubOf(maxOpenSessions: number, clock = new TestClock('2026-11-29T00:00:00Z')): ConversationHub {
  const hub = openConversationHub({ root: tempStore('tj-live-open-'), retention: false, maxOpenSessions, clock });
  hubs.push(hub);
  return hub;
}

async function writeRun(session: HubSession, requestId: string): Promise<void> {
  if (session.role !== 'owner') throw new Error('expected the owner');
  const sent = await session.send({ requestId, content: requestId });
  if (!sent.created) throw new Error(`${requestId} was not created`);
  await sent.run.delta('text');
  await sent.run.done();
}

describe('maxOpenSessions (TJ-LIVE-065)', () => {
  it('closes the idle session used least recently to make room, and reopens it with its records on next use', async () => {
    const clock = new TestClock('2026-11-29T00:00:00Z');
    const hub = hubOf(3, clock);
    for (const id of ['a', 'b', 'c']) {
      await writeRun(await hub.session(id), `${id}-1`);
      clock.pass(1000);
    }
    // `a` is used again: `b` is now the one used least recently.
    await hub.session('a');
    clock.pass(1000);
    const before = (await hub.session('b')).durableSeq;
    clock.pass(1000);
    await hub.session('c');
    clock.pass(1000);
    await hub.session('a');
    clock.pass(1000);
    await writeRun(await hub.session('d'), 'd-1');
    expect(hub.openSessions().sort()).toEqual(['a', 'c', 'd']);
    expect(hub.metrics().evictions).toBe(1);
    const reopened = await hub.session('b');
    expect(reopened.durableSeq).toBe(before);
    expect(reopened.statusOf('b-1')).toBe('done');
    await writeRun(reopened, 'b-2');
    expect(reopened.durableSeq).toBeGreaterThan(before);
    expect(hub.openSessions()).toHaveLength(3);
  });

  it('never closes a session with a subscriber or an active run, and refuses the open when every one is busy', async () => {
    const hub = hubOf(2);
    const watched = await hub.session('watched');
    const subscription = watched.subscribe({ after: -1 });
    const streaming = await hub.session('streaming');
    if (streaming.role !== 'owner') throw new Error('expected the owner');
    const sent = await streaming.send({ requestId: 'r1', content: 'long' });
    if (!sent.created) throw new Error('expected a new run');
    const refused = await hub.session('third').then(
      () => null,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(LiveError);
    expect(refused).toMatchObject({ code: 'too_many_sessions' });
    expect(hub.metrics().refusedOpens).toBe(1);
    // Both busy sessions went on unharmed.
    await sent.run.delta('still ');
    await sent.run.done();
    expect(streaming.statusOf('r1')).toBe('done');
    expect(watched.closed).toBe(false);
    // Once the run ended, `streaming` is idle: the next open takes its room; `watched` keeps its subscriber.
    await writeRun(await hub.session('third'), 't-1');
    expect(hub.openSessions().sort()).toEqual(['third', 'watched']);
    subscription.close();
  });

  it('counts opens still under way: a burst past the bound is refused, not opened beyond it', async () => {
    const hub = hubOf(4);
    const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => hub.session(`burst-${i}`)));
    const opened = results.filter((result) => result.status === 'fulfilled').length;
    const codes = results.flatMap((result) =>
      result.status === 'rejected' ? [(result.reason as { code?: unknown }).code] : [],
    );
    expect(opened).toBe(4);
    expect(codes).toEqual(Array(6).fill('too_many_sessions'));
    expect(hub.openSessions()).toHaveLength(4);
  });

  it('under ulimit -n 256, a flood of 1,500 sessions is served and the sessions already open keep writing', async () => {
    const root = tempStore('tj-live-flood-');
    const child = spawn('sh', ['-c', 'ulimit -n 256 && exec "$0" "$@"', process.execPath, CHILD, BUILT, root, '64'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve, reject) => {
      const guard = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the flood child did not finish in ${CHILD_GUARD_MS} ms; stderr: ${stderr}`));
      }, CHILD_GUARD_MS);
      child.on('close', (exit) => {
        clearTimeout(guard);
        resolve(exit);
      });
    });
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const report = JSON.parse(stdout.trim()) as Record<string, unknown>;
    console.info(`flood under ulimit -n 256: ${stdout.trim()}`);
    // The child really ran under the limit.
    expect(report.limit).toBe(256);
    expect(report).toMatchObject({
      // Every session of the flood opened and wrote: idle ones were closed for room, none failed for lack of handles.
      flood: { ok: 1500, errors: {} },
      // The run that streamed through the flood, the kept sessions' subscribers, replays and writes: all unharmed.
      streamed: { ok: 151, errors: {} },
      replayed: { ok: 3, errors: {} },
      keptAfter: { ok: 3, errors: {} },
      gapFree: true,
      keptStillOpen: true,
      idle: { ok: true },
      open: 64,
    });
    const idle = report.idle as { before: number; after: number };
    expect(idle.after).toBeGreaterThan(idle.before);
    expect(report.evictions).toBeGreaterThan(1000);
    expect(report.fdsAfterFlood).toBeLessThan(256);
  }, 120_000);
});
