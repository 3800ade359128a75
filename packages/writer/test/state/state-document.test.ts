import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { checkStaleState, checkStore, readRunFile, readStateDocument } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { faultyFileSystem } from '../support/faulty-fs.js';
import {
  acquireLock,
  nodeFileSystem,
  openRunWriter,
  stateDocumentPath,
  writeStateDocument,
} from '../support/internals.js';
import { tempDir } from '../support/temp.js';

const SESSION = 'f6d2c6d5-4a12-4cc4-bbc9-9a0c0d2b5af1';
const CLOCK = () => Date.UTC(2026, 1, 3, 12, 0, 2, 900);

const V1 = {
  run_id: 'run-1',
  invoke_seq: 1,
  messages: [
    { role: 'system', content: 'You are a coding assistant.' },
    { role: 'user', content: 'list files' },
  ],
};
const V2 = {
  ...V1,
  invoke_seq: 2,
  messages: [...V1.messages, { role: 'assistant', content: 'Here are the files.', tool_calls: [] }],
  meta: { origin: 'test' },
};

function stateDir(root: string): string[] {
  return readdirSync(join(root, 'sessions', 'state')).sort();
}

describe('writeStateDocument: session state snapshots (spec §8)', () => {
  it('writes the document at sessions/state/<session_id>.json with defaults filled in, and replaces it with the next one (TJ-STATE-001, TJ-STATE-005)', async () => {
    const root = tempDir();
    const first = await writeStateDocument({ root, sessionId: SESSION, state: V1, clock: CLOCK });
    expect(first.file).toBe(join(root, 'sessions', 'state', `${SESSION}.json`));
    expect(first.file).toBe(stateDocumentPath(root, SESSION));
    expect(first.state).toEqual({
      ...V1,
      schema_version: 1,
      session_id: SESSION,
      updated_at: '2026-02-03T12:00:02.900Z',
    });
    const read1 = await readStateDocument(first.file);
    expect(read1.status).toBe('valid');
    expect(read1.status === 'valid' && read1.state).toEqual(first.state);

    const second = await writeStateDocument({
      root,
      sessionId: SESSION,
      state: { ...V2, updated_at: '2026-02-03T12:00:05.000Z' },
    });
    const read2 = await readStateDocument(second.file);
    expect(read2.status === 'valid' && read2.state).toEqual(second.state);
    expect(second.state.invoke_seq).toBe(2);
    expect(second.state.updated_at).toBe('2026-02-03T12:00:05.000Z');
    // Only the document is left: no temporary file, no lock file.
    expect(stateDir(root)).toEqual([`${SESSION}.json`]);
    expect((await checkStore([root])).findings).toEqual([]);
  });

  it('leaves the old document intact and no temporary file when the rename fails (TJ-DUR-009, TJ-STATE-005)', async () => {
    const root = tempDir();
    await writeStateDocument({ root, sessionId: SESSION, state: V1, clock: CLOCK });
    const before = readFileSync(stateDocumentPath(root, SESSION));
    const faulty = faultyFileSystem(nodeFileSystem);
    faulty.inject({ op: 'rename', errno: 'EIO' });
    await expect(writeStateDocument({ root, sessionId: SESSION, state: V2, fs: faulty })).rejects.toMatchObject({
      code: 'write_failed',
      operation: 'rename',
      errno: 'EIO',
    });
    expect(readFileSync(stateDocumentPath(root, SESSION))).toEqual(before);
    expect(stateDir(root)).toEqual([`${SESSION}.json`]);
    // The same for a failed fsync of the temporary file, and for ENOSPC while writing it.
    faulty.inject({ op: 'fsync', errno: 'EIO', nth: 2 }); // the first fsync is the lock file's
    await expect(writeStateDocument({ root, sessionId: SESSION, state: V2, fs: faulty })).rejects.toMatchObject({
      code: 'write_failed',
      operation: 'fsync',
    });
    faulty.inject({ op: 'write', errno: 'ENOSPC', nth: 2, torn: 5 }); // the first write is the lock file's
    await expect(writeStateDocument({ root, sessionId: SESSION, state: V2, fs: faulty })).rejects.toMatchObject({
      code: 'write_failed',
      errno: 'ENOSPC',
    });
    expect(readFileSync(stateDocumentPath(root, SESSION))).toEqual(before);
    expect(stateDir(root)).toEqual([`${SESSION}.json`]);
    // The next write goes through.
    await writeStateDocument({ root, sessionId: SESSION, state: V2, fs: faulty });
    const read = await readStateDocument(stateDocumentPath(root, SESSION));
    expect(read.status === 'valid' && read.state.invoke_seq).toBe(2);
  });

  it('removes a temporary file left by an earlier crashed replace (TJ-DUR-010)', async () => {
    const root = tempDir();
    await writeStateDocument({ root, sessionId: SESSION, state: V1, clock: CLOCK });
    const stale = join(root, 'sessions', 'state', `.${SESSION}.json.0123456789ab.tmp`);
    writeFileSync(stale, '{"schema_version":1,"session_id":"half-writ');
    // A temporary of another document is not ours to remove.
    const other = join(root, 'sessions', 'state', '.other.json.0123456789ab.tmp');
    writeFileSync(other, '{');
    await writeStateDocument({ root, sessionId: SESSION, state: V2, clock: CLOCK });
    expect(existsSync(stale)).toBe(false);
    expect(existsSync(other)).toBe(true);
    const read = await readStateDocument(stateDocumentPath(root, SESSION));
    expect(read.status === 'valid' && read.state.messages).toHaveLength(3);
  });

  it('refuses a schema-invalid state with invalid_record and writes nothing (TJ-STATE-001, TJ-COMPAT-018)', async () => {
    const root = tempDir();
    const invalid: unknown[] = [
      { run_id: 'r' },
      { messages: [{ content: 'no role' }] },
      { messages: 'not an array' },
      { messages: [], schema_version: 2 },
      { messages: [], invoke_seq: -1 },
      { messages: [], invoke_seq: 1.5 },
      { messages: [], run_id: '' },
      { messages: [], updated_at: '' },
      { messages: [], session_id: 'another-session' },
      { messages: [], type: 'header' },
      { messages: [{ role: 'user', content: 1n }] },
      [],
      null,
    ];
    for (const state of invalid) {
      await expect(
        writeStateDocument({ root, sessionId: SESSION, state: state as never }),
        JSON.stringify(state, (_k, v) => (typeof v === 'bigint' ? `${v}n` : v)),
      ).rejects.toMatchObject({ code: 'invalid_record' });
    }
    // The explicit-file form takes the session from the document, which must then have one.
    await expect(writeStateDocument({ file: join(root, 'state.json'), state: { messages: [] } })).rejects.toMatchObject(
      { code: 'invalid_record', message: expect.stringContaining('session_id') },
    );
    expect(readdirSync(root)).toEqual([]);
  });

  it('rejects hostile session ids before any file or directory is created (TJ-FAM-010)', async () => {
    const root = tempDir();
    for (const sessionId of ['../x', 'a/b', '..', '.', '', 'x'.repeat(129), 'nul\u0000', '~', 'a~b', 'a\\b']) {
      await expect(writeStateDocument({ root, sessionId, state: V1 }), JSON.stringify(sessionId)).rejects.toMatchObject(
        { code: 'invalid_identifier' },
      );
      expect(() => stateDocumentPath(root, sessionId)).toThrow(/not a valid identifier/);
    }
    await expect(writeStateDocument({ root, sessionId: undefined as never, state: V1 })).rejects.toMatchObject({
      code: 'invalid_identifier',
    });
    expect(readdirSync(root)).toEqual([]);
  });

  it('writes to an explicit file, taking the session from the document', async () => {
    const dir = tempDir();
    const file = join(dir, 'nested', 'state', 'resume.json');
    const written = await writeStateDocument({ file, state: { ...V1, session_id: 'any session id' }, clock: CLOCK });
    expect(written.file).toBe(file);
    const read = await readStateDocument(file);
    expect(read.status === 'valid' && read.state.session_id).toBe('any session id');
  });

  it('replaces under the document lock: another live holder makes it fail with journal_locked; calls in one process queue (spec §11.4)', async () => {
    const root = tempDir();
    await writeStateDocument({ root, sessionId: SESSION, state: V1, clock: CLOCK });
    const path = stateDocumentPath(root, SESSION);
    const before = readFileSync(path);
    const held = await acquireLock(nodeFileSystem, `${path}.lock`, path);
    await expect(writeStateDocument({ root, sessionId: SESSION, state: V2 })).rejects.toMatchObject({
      code: 'journal_locked',
    });
    expect(readFileSync(path)).toEqual(before);
    await held.release();

    const writes = [1, 2, 3, 4, 5].map((n) =>
      writeStateDocument({ root, sessionId: SESSION, state: { ...V1, invoke_seq: n } }),
    );
    await Promise.all(writes);
    const read = await readStateDocument(path);
    expect(read.status === 'valid' && read.state.invoke_seq).toBe(5);
    expect(stateDir(root)).toEqual([`${SESSION}.json`]);
  });

  it('a snapshot written after the run reports no stale_state, one written before the last request does (TJ-STATE-006)', async () => {
    const root = tempDir();
    const run = await openRunWriter({
      root,
      runId: 'run-1',
      header: { startedAt: '2026-02-03T12:00:00.123Z', sessionId: SESSION },
    });
    await run.runStart('list files');
    for (let i = 0; i < 2; i++) {
      const { seq } = await run.llmRequest({ input: { messages: V1.messages } });
      await run.llmResponse({ seq, output: { messages: [{ role: 'assistant', content: `answer ${seq}` }] } });
    }
    await run.end({ outcome: 'completed', final: 'answer 2' });
    await run.close();

    const { file } = await writeStateDocument({ root, sessionId: SESSION, state: V2 });
    const state = await readStateDocument(file);
    expect(state.status).toBe('valid');
    const derived = await readRunFile(run.path);
    if (state.status === 'valid') {
      expect(checkStaleState(state.state, [derived], { file })).toEqual([]);
      // The check is real: the snapshot that reflects only the first request is stale.
      expect(checkStaleState({ ...state.state, invoke_seq: 1 }, [derived]).map((f) => f.code)).toEqual(['stale_state']);
    }
    expect((await checkStore([root])).findings).toEqual([]);
  });
});
