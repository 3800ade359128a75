// Steps of the wall clock (issue 34, finding 5; spec §18.6): a forward step expires nothing the process has not waited
// for (TJ-LIVE-031), a step back makes no record look older than those before it (TJ-LIVE-032), and the idle close
// follows the monotonic clock whichever way the wall clock steps (TJ-LIVE-033).
import { join } from 'node:path';
import { type HubSession, openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { logLines, TestClock, tempStore } from './support.js';

const HOUR = 3_600_000;

/** Waits `ms` of real time: the hub's idle check is a real timer (every second at least). */
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `requestId` to its end without acknowledging it: an answer the client has not received yet. */
async function undeliveredAnswer(session: HubSession, requestId: string): Promise<void> {
  const sent = await session.send({ requestId, content: `q ${requestId}` });
  if (!sent.created) throw new Error('expected a new run');
  await sent.run.delta('the answer');
  await sent.run.done();
}

describe('a step of the wall clock (spec §18.6)', () => {
  it('a forward step of 49 h expires no undelivered answer before 48 h have passed (TJ-LIVE-031, TJ-LIVE-015)', async () => {
    const root = tempStore('tj-live-clock-');
    const clock = new TestClock('2026-06-19T00:00:00Z');
    const hub = openConversationHub({ root, clock, checkpointInterval: 4, retention: { windowMs: HOUR } });
    const session = await hub.session('s1');
    await undeliveredAnswer(session, 'answer');
    const undelivered = () => session.snapshot().undelivered.map((run) => run.requestId);

    clock.step(49 * HOUR);
    let report = await hub.runRetention();
    expect(report.sessions[0]?.expiredRuns).toEqual([]);
    expect(undelivered()).toEqual(['answer']);
    const starts = () =>
      logLines(join(root, 's1', 'events.jsonl'))
        .filter((record) => record.type === 'chat.started')
        .map((record) => record.payload.request_id);
    expect(starts()).toEqual(['answer']);

    // The delivery window is time that passes: 47 h on, still undelivered; 48 h and a little on, expired.
    clock.pass(47 * HOUR);
    report = await hub.runRetention();
    expect(report.sessions[0]?.expiredRuns).toEqual([]);
    expect(undelivered()).toEqual(['answer']);
    clock.pass(HOUR + 1000);
    report = await hub.runRetention();
    expect(report.sessions[0]?.expiredRuns).toEqual(['answer']);
    expect(undelivered()).toEqual([]);
    await hub.close();
  });

  it('a step back of 3 h stamps no record earlier than the ones before it (TJ-LIVE-032)', async () => {
    const root = tempStore('tj-live-clock-');
    const clock = new TestClock('2026-06-19T12:00:00Z');
    const hub = openConversationHub({ root, clock, retention: false });
    const session = await hub.session('s1');
    await undeliveredAnswer(session, 'before');
    clock.step(-3 * HOUR);
    clock.pass(1000);
    await undeliveredAnswer(session, 'after');
    const stamps = logLines(join(root, 's1', 'events.jsonl')).map((record) => Date.parse(record.ts));
    expect(stamps.length).toBeGreaterThan(6);
    expect(stamps).toEqual([...stamps].sort((a, b) => a - b));
    // Once the wall clock is past the last stamp again, records carry it.
    clock.pass(3 * HOUR);
    await undeliveredAnswer(session, 'later');
    const last = logLines(join(root, 's1', 'events.jsonl')).at(-1);
    expect(Date.parse(last?.ts ?? '')).toBe(clock.wall);
    await hub.close();
  });

  it('the idle close follows the monotonic clock: on time after a step back, not early after a step forward (TJ-LIVE-033)', async () => {
    const root = tempStore('tj-live-clock-');
    const clock = new TestClock('2026-06-19T00:00:00Z');
    const hub = openConversationHub({ root, clock, retention: false, idleCloseMs: 1000 });
    const early = await hub.session('s1');
    // Three hours forward in a moment: the session has not been idle for its idle time.
    clock.step(3 * HOUR);
    await sleep(1300);
    expect(early.closed).toBe(false);
    // Three hours back, then idle for longer than the idle time: closed (and its locks released) on time.
    clock.step(-3 * HOUR);
    clock.pass(1500);
    await sleep(1300);
    expect(early.closed).toBe(true);
    expect(hub.openSessions()).toEqual([]);
    await hub.close();
  }, 15_000);
});
