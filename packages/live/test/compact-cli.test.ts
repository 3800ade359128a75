// `turnjournal compact` on a store a live server is using (issue 15): the event log whose lock the live session holds
// is skipped with a message naming the holder, the run exits 0, and the log is untouched.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openConversationHub } from '@turnjournal/live';
import { describe, expect, it } from 'vitest';
import { tempStore } from './support.js';

const CLI = resolve(__dirname, '../../conformance/dist/cli/main.js');

describe('turnjournal compact next to a live session', () => {
  it('skips the event log a live process holds, says so, and exits 0', async () => {
    const root = tempStore('tj-live-cli-');
    const hub = openConversationHub({ root, retention: false });
    const session = await hub.session('s1');
    const sent = await session.send({ requestId: 'r1', content: 'hi' });
    if (sent.created) await sent.run.done();
    const file = join(root, 's1', 'events.jsonl');
    const before = readFileSync(file);
    const run = spawnSync(process.execPath, [CLI, 'compact', root], { encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`${file}: skipped, held by pid ${process.pid}`);
    expect(Buffer.compare(readFileSync(file), before)).toBe(0);
    await hub.close();
    // Once the server is gone, the same command compacts (or reports why it kept everything).
    const after = spawnSync(process.execPath, [CLI, 'compact', root], { encoding: 'utf8' });
    expect(after.status).toBe(0);
    expect(after.stdout).not.toContain('skipped');
  });
});
