// The load test, small: a few simulated clients (no browser) reconnecting at random for a few seconds. The full-size
// run is `node examples/resumable-chat/test/load.mjs` (defaults: 40 clients, 8 sessions, 15 s).
import { rmSync } from 'node:fs';
import { expect, it } from 'vitest';
import { checkStore, eventRecords } from './harness.js';
import { runLoad } from './load.mjs';

it('simulated clients reconnecting at random all end with exactly the committed transcript', async () => {
  const report = await runLoad({ clients: 16, sessions: 4, seconds: 5, tokenMs: 5, seed: 7, keep: true });
  console.log(`resumable-chat load: ${JSON.stringify(report)}`);
  try {
    expect(report.mismatches).toEqual([]);
    expect(report.gaps).toBe(0);
    expect(report.duplicates).toBe(0);
    expect(report.errors).toEqual([]);
    expect(report.accepted).toBeGreaterThan(0);
    expect(report.replays).toBeGreaterThan(0);
    const check = await checkStore(report.root);
    expect(check.clean).toBe(true);
    // One turn per accepted send: every turn of the turn journals has exactly one run in its session's event log.
    for (const session of check.sessions) {
      const starts = eventRecords(report.root, session.session_id).filter((r) => r.type === 'chat.started');
      const runIds = starts.map((r) => String(r.payload?.request_id)).sort();
      expect(runIds).toEqual(session.turns.map((turn) => turn.turn_id).sort());
      expect(session.turns.every((turn) => turn.state === 'completed')).toBe(true);
    }
  } finally {
    rmSync(report.root, { recursive: true, force: true });
  }
});
