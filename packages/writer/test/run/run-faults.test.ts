import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { readRunFile } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import {
  JournalWriteError,
  nodeFileSystem,
  openRunWriter,
  type RunHeaderInput,
  WriterPoisonedError,
} from '../support/internals.js';
import { findingCodes, tempDir } from '../support/temp.js';

const HEADER: RunHeaderInput = { startedAt: '2026-02-03T12:00:00.000Z', sessionId: 'sess-1' };

function types(path: string): unknown[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line).type);
}

describe('RunWriter under injected faults (spec §11.5)', () => {
  it('rejects an append that hits ENOSPC with write_failed, writes nothing of it and gives its seq back (TJ-DUR-022, TJ-DUR-023)', async () => {
    const root = tempDir();
    const faulty = faultyFileSystem(nodeFileSystem);
    const writer = await openRunWriter({ root, runId: 'enospc', header: HEADER, fs: faulty });
    await writer.agentEvent({ type: 'first' });
    faulty.inject({ op: 'write', errno: 'ENOSPC', torn: 7 });
    const failure = await writer.agentEvent({ type: 'lost' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(JournalWriteError);
    expect(failure).toMatchObject({ code: 'write_failed', operation: 'write', errno: 'ENOSPC', file: writer.path });
    expect((failure as Error).message).toContain('ENOSPC');
    // The short write was truncated back: the file ends on a line boundary and the seq is reused.
    expect((await writer.agentEvent({ type: 'second' })).seq).toBe(1);
    faulty.inject({ op: 'write', errno: 'ENOSPC' });
    await expect(writer.llmRequest({ input: { messages: [] } })).rejects.toMatchObject({ code: 'write_failed' });
    expect(writer.openLlmRequests).toEqual([]);
    expect((await writer.llmRequest({ input: { messages: [] } })).seq).toBe(1);
    faulty.inject({ op: 'write', errno: 'ENOSPC' });
    await expect(writer.end({ outcome: 'completed' })).rejects.toMatchObject({ code: 'write_failed' });
    expect(writer.ended).toBe(false);
    await writer.llmResponse({ seq: 1, output: { messages: [] } });
    await writer.end({ outcome: 'completed' });
    await writer.close();
    expect(types(writer.path)).toEqual([
      'header',
      'agent.event',
      'agent.event',
      'llm.request',
      'llm.response',
      'run.end',
    ]);
    expect(await findingCodes([root])).toEqual([]);
    const run = await readRunFile(writer.path);
    expect(run).toMatchObject({ outcome: 'completed', agentEventCount: 2, findings: [] });
  });

  it('poisons the writer after a failed fdatasync and the reopen continues after what reached the file (TJ-DUR-021, TJ-DUR-024)', async () => {
    const root = tempDir();
    const faulty = faultyFileSystem(nodeFileSystem);
    const writer = await openRunWriter({ root, runId: 'eio', header: HEADER, fs: faulty });
    await writer.agentEvent({ type: 'acknowledged' });
    faulty.inject({ op: 'fdatasync', errno: 'EIO' });
    await expect(writer.agentEvent({ type: 'unsure' })).rejects.toMatchObject({
      code: 'write_failed',
      operation: 'fdatasync',
      errno: 'EIO',
    });
    const poisoned = await writer.agentEvent({ type: 'refused' }).catch((error: unknown) => error);
    expect(poisoned).toBeInstanceOf(WriterPoisonedError);
    expect(poisoned).toMatchObject({ code: 'writer_poisoned' });
    await expect(writer.end({ outcome: 'error' })).rejects.toMatchObject({ code: 'writer_poisoned' });
    await writer.close();
    // Whatever reached the file is whole lines: the store checks clean.
    expect(await findingCodes([root])).toEqual([]);

    const reopened = await openRunWriter({ root, runId: 'eio', header: HEADER });
    expect(reopened.opened.headerWritten).toBe(false);
    // The unsynced record did reach the page cache here, so numbering continues after it.
    expect(reopened.lastAgentSeq).toBe(1);
    expect((await reopened.agentEvent({ type: 'after' })).seq).toBe(2);
    await reopened.end({ outcome: 'completed' });
    await reopened.close();
    expect(types(reopened.path)).toEqual(['header', 'agent.event', 'agent.event', 'agent.event', 'run.end']);
    expect(await findingCodes([root])).toEqual([]);
  });

  it('leaves at most a torn tail when a short write cannot be truncated back, and the next open repairs it (TJ-DUR-004, TJ-DUR-005)', async () => {
    const root = tempDir();
    const faulty = faultyFileSystem(nodeFileSystem);
    const writer = await openRunWriter({ root, runId: 'torn', header: HEADER, fs: faulty });
    await writer.runStart('go');
    faulty.inject({ op: 'write', errno: 'EIO', torn: 20 });
    faulty.inject({ op: 'ftruncate', errno: 'EIO' });
    await expect(writer.agentEvent({ type: 'torn' })).rejects.toMatchObject({ code: 'write_failed', errno: 'EIO' });
    await expect(writer.agentEvent({ type: 'refused' })).rejects.toMatchObject({ code: 'writer_poisoned' });
    await writer.close();
    expect(await findingCodes([root])).toEqual(['torn_tail']);

    const reopened = await openRunWriter({ root, runId: 'torn', header: HEADER });
    expect(reopened.opened.tornTail).not.toBeNull();
    expect(reopened.opened.headerWritten).toBe(false);
    expect((await reopened.agentEvent({ type: 'clean' })).seq).toBe(0);
    await reopened.end({ outcome: 'completed' });
    await reopened.close();
    expect(types(reopened.path)).toEqual(['header', 'run.start', 'agent.event', 'run.end']);
    // The torn bytes were moved aside (`<file>.<offset>.torn`), which check ignores (TJ-FAM-020).
    expect(readdirSync(dirname(reopened.path)).some((name) => name.endsWith('.torn'))).toBe(true);
    expect(await findingCodes([root])).toEqual([]);
  });

  it('fails the open when the header cannot be written, and the next open writes it into the empty file (TJ-RUN-003)', async () => {
    const root = tempDir();
    const faulty = faultyFileSystem(nodeFileSystem);
    // The first write is the lock file's; the second is the header, the third the header again without the
    // pre-allocated space after it (spec §11.6): the disk is still full.
    faulty.inject({ op: 'write', errno: 'ENOSPC', nth: 2, times: 2 });
    await expect(openRunWriter({ root, runId: 'nohead', header: HEADER, fs: faulty })).rejects.toMatchObject({
      code: 'write_failed',
      errno: 'ENOSPC',
    });
    const writer = await openRunWriter({ root, runId: 'nohead', header: HEADER });
    expect(writer.opened).toMatchObject({ created: false, headerWritten: true });
    expect(existsSync(`${writer.path}.lock`)).toBe(true);
    await writer.close();
    expect(existsSync(`${writer.path}.lock`)).toBe(false);
    expect(types(writer.path)).toEqual(['header']);
    expect(await findingCodes([root])).toEqual([]);
  });
});
