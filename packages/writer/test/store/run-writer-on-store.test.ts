// The run writer on the record-store seam (spec §19): opened through a store, it writes the lines it writes to a file,
// and a reopened run continues its numbering instead of writing a second header (TJ-RUN-004), whichever backend holds
// it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RecordStore } from '@turnjournal/reader/record-store';
import { SimulatedBacking, SimulatedRecordStore } from '@turnjournal/test-support';
import { openRunWriter, type RunHeaderInput, runFilePath, writeStateDocument } from '@turnjournal/writer';
import { openFileRecordStore } from '@turnjournal/writer/file-store';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';

const HEADER: RunHeaderInput = { startedAt: '2026-11-29T01:02:03.004Z', sessionId: 's1' };

function clockFrom(start: number): () => number {
  let now = start;
  return () => (now += 10);
}

async function runOn(store: RecordStore): Promise<void> {
  const clock = clockFrom(Date.parse('2026-11-29T01:02:03.004Z'));
  const writer = await openRunWriter({ store, runId: 'r1', header: HEADER, durability: 'every', clock });
  expect(writer.opened.headerWritten).toBe(true);
  await writer.agentEvent({ type: 'tool_call', tool: 'exec_command', tool_call_id: 'c1' });
  const request = await writer.llmRequest({ input: { messages: [{ role: 'user', content: 'hello' }] } });
  await writer.close();
  const again = await openRunWriter({ store, runId: 'r1', header: HEADER, durability: 'every', clock });
  expect(again.opened).toMatchObject({ headerWritten: false, resumed: true });
  await again.llmResponse({ seq: request.seq, output: { messages: [{ role: 'assistant', content: 'hi' }] } });
  const event = await again.agentEvent({ type: 'final', content: 'done' });
  expect(event.seq, 'numbering continues after the reopen').toBe(1);
  await again.end({ outcome: 'done', final: 'done' });
  await again.close();
}

describe('a run writer opened through a record store (spec §19)', () => {
  it('writes byte for byte the file’s lines on the simulated store, and resumes a reopened run', async () => {
    const root = tempDir();
    const backing = new SimulatedBacking();
    await runOn(openFileRecordStore({ root }));
    await runOn(new SimulatedRecordStore(backing));
    const journal = backing.journals.get('sessions/2026/11/29/r1.jsonl');
    expect(journal, 'the run is at its dated location').toBeDefined();
    expect(Buffer.concat(journal?.lines ?? []).toString('utf8')).toBe(
      readFileSync(runFilePath(root, 'r1', HEADER.startedAt), 'utf8'),
    );
  });

  it('refuses a store given with a root', async () => {
    await expect(
      openRunWriter({
        store: new SimulatedRecordStore(),
        root: '/tmp',
        runId: 'r1',
        header: HEADER,
      } as unknown as Parameters<typeof openRunWriter>[0]),
    ).rejects.toMatchObject({ code: 'invalid_option' });
  });
});

describe('a state document written through a record store (spec §19)', () => {
  it('is the document writeStateDocument writes to a file, replaced whole, on any backend', async () => {
    const root = tempDir();
    const file = openFileRecordStore({ root });
    const simulated = new SimulatedRecordStore();
    const state = { updated_at: '2026-11-29T01:02:03.004Z', run_id: 'r1', messages: [{ role: 'user', content: 'hi' }] };
    for (const store of [file, simulated]) {
      await writeStateDocument({ store, sessionId: 's1', state: { ...state, run_id: 'r0' } });
      await writeStateDocument({ store, sessionId: 's1', state });
    }
    const onDisk = readFileSync(join(root, 'sessions', 'state', 's1.json'), 'utf8');
    const written = await writeStateDocument({ root: tempDir(), sessionId: 's1', state });
    expect(onDisk).toBe(readFileSync(written.file, 'utf8'));
    const bytes = await simulated.readDocument({ family: 'state', sessionId: 's1' });
    expect(Buffer.from(bytes ?? []).toString('utf8')).toBe(onDisk);
    await expect(writeStateDocument({ store: simulated, sessionId: '../x', state })).rejects.toMatchObject({
      code: 'invalid_identifier',
    });
  });
});
