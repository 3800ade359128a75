// The hub's retention job (spec §14, TJ-LIVE-015, TJ-RET-018): one pass compacts each open session's event log —
// acknowledged runs and runs whose delivery expired go, records inside the retention window stay — and sweeps the
// store's turn journals; the snapshot stops listing an expired run as undelivered.
import { join } from 'node:path';
import { openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { logLines, TestClock, tempStore } from './support.js';

const HOUR = 3_600_000;

/** The request ids of the `chat.started` records the session's event log still holds (open or closed). */
function starts(root: string): string[] {
  return logLines(join(root, 's1', 'events.jsonl'))
    .filter((record) => record.type === 'chat.started')
    .map((record) => record.payload.request_id as string);
}

/** A hub with the retention job's one-hour window on a fresh store, its clocks in `clock`, and session s1. */
async function retainingSession() {
  const root = tempStore('tj-live-retention-');
  const clock = new TestClock('2026-05-11T00:00:00.000Z');
  const hub = openConversationHub({
    root,
    clock,
    checkpointInterval: 4,
    retention: { windowMs: HOUR },
  });
  return { root, clock, hub, session: await hub.session('s1') };
}

describe('retention job (TJ-LIVE-015, TJ-RET-018)', () => {
  it('compacts past acknowledged and expired runs, keeps the window, and reports what it did', async () => {
    const { root, clock, hub, session } = await retainingSession();
    for (const id of ['acked', 'never-acked']) {
      const sent = await session.send({ requestId: id, content: `q ${id}` });
      if (!sent.created) throw new Error('expected a new run');
      await sent.run.delta('answer');
      await sent.run.done();
    }
    await session.ack('acked', { clientId: 'c1' });
    clock.pass(2 * HOUR);
    const recent = await session.send({ requestId: 'recent', content: 'q recent' });
    if (!recent.created) throw new Error('expected a new run');
    await recent.run.done();
    await session.flush();

    // Two hours on: outside the retention window, but "never-acked" is inside its 48 h delivery window.
    let report = await hub.runRetention();
    expect(report.sessions).toEqual([{ sessionId: 's1', removedRecords: expect.any(Number), expiredRuns: [] }]);
    expect(session.snapshot({ clientId: 'c1' }).undelivered.map((r) => r.requestId)).toEqual(['never-acked', 'recent']);
    expect(starts(root)).toContain('never-acked');

    // 49 hours after it finished, "never-acked" expired: compaction goes past it; "recent" too is now old.
    clock.pass(49 * HOUR);
    report = await hub.runRetention();
    expect(report.sessions[0]?.expiredRuns).toEqual(['never-acked', 'recent']);
    expect(report.sessions[0]?.removedRecords).toBeGreaterThan(0);
    expect(session.snapshot({ clientId: 'c1' }).undelivered).toEqual([]);
    expect(starts(root)).toEqual([]);
    // The request ids of removed runs are still refused as new turns (the checkpoint's run index, TJ-EVENT-019).
    expect(await session.send({ requestId: 'never-acked', content: 'q never-acked' })).toMatchObject({
      created: false,
    });
    // The turn-journal sweep ran (the live session's own journal is skipped while it holds it, TJ-RET-009).
    expect('error' in report.turns).toBe(false);
    await hub.close();
  });

  it('leaves a session whose run is streaming to the next pass, which compacts it whatever streams then', async () => {
    // A compaction holds the session's calls while it copies the log: at the hourly pass, a streaming run stalled.
    const { root, clock, hub, session } = await retainingSession();
    const old = await session.send({ requestId: 'old', content: 'q old' });
    if (!old.created) throw new Error('expected a new run');
    await old.run.done();
    await session.ack('old', { clientId: 'c1' });
    clock.pass(2 * HOUR);
    const streaming = await session.send({ requestId: 'streaming', content: 'q streaming' });
    if (!streaming.created) throw new Error('expected a new run');
    await streaming.run.delta('tok');
    let report = await hub.runRetention();
    expect(report.sessions).toEqual([{ sessionId: 's1', deferredFor: 'streaming' }]);
    expect(starts(root)).toEqual(['old', 'streaming']);
    // Still streaming at the next pass: compacted all the same, so a busy session waits one interval at most.
    report = await hub.runRetention();
    expect(report.sessions).toEqual([{ sessionId: 's1', removedRecords: expect.any(Number), expiredRuns: [] }]);
    expect(starts(root)).toEqual(['streaming']);
    await streaming.run.delta(' more');
    await streaming.run.done();
    // Idle again: the pass after compacts at once.
    report = await hub.runRetention();
    expect(report.sessions[0]?.deferredFor).toBeUndefined();
    await hub.close();
  });
});
