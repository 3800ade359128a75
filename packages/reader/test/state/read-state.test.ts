import { describe, expect, it, vi } from 'vitest';
import { ReaderError } from '../../src/errors.js';
import { readStateDocument } from '../../src/state/read-state.js';
import { tempFile } from '../support/temp.js';

const state = {
  schema_version: 1,
  session_id: 'f6d2c6d5',
  updated_at: '2026-02-03T12:00:02.900Z',
  run_id: 'run-1',
  invoke_seq: 1,
  messages: [{ role: 'user', content: 'list files' }],
};
const doc = (content: string | Uint8Array) => tempFile(content, 'f6d2c6d5.json');
const codes = (result: { findings: readonly { code: string }[] }) => result.findings.map((f) => f.code);

describe('readStateDocument (spec §8)', () => {
  it('parses a pretty-printed document with a BOM and surrounding whitespace (TJ-STATE-002)', async () => {
    const result = await readStateDocument(doc(`\uFEFF\n  ${JSON.stringify(state, null, 2)}\r\n\n`));
    expect(result).toMatchObject({ status: 'valid', state, findings: [] });
  });

  it('keeps unknown members (TJ-COMPAT-003)', async () => {
    const result = await readStateDocument(doc(JSON.stringify({ ...state, x_future: [1] })));
    expect(result.status === 'valid' && result.state).toMatchObject({ x_future: [1] });
  });

  it.each([
    ['not UTF-8', Buffer.from([0x7b, 0xff, 0x7d])],
    ['not JSON', '{"schema_version":1,'],
    ['empty', ''],
    ['an array', '[]'],
    ['a string', '"state"'],
    ['null', 'null'],
    ['a BOM not at offset 0', ` \uFEFF${JSON.stringify(state)}`],
  ])(
    'reports a document that is %s as malformed_document and does not throw (TJ-STATE-003, TJ-STATE-004)',
    async (_, content) => {
      const result = await readStateDocument(doc(content));
      expect(result.status).toBe('malformed_document');
      expect(result.findings).toMatchObject([{ code: 'malformed_document', severity: 'error' }]);
    },
  );

  it('reports a document over the configured limit as malformed_document (TJ-STATE-003)', async () => {
    const text = JSON.stringify(state);
    const path = doc(text);
    expect((await readStateDocument(path, { maxDocumentBytes: text.length - 1 })).status).toBe('malformed_document');
    expect((await readStateDocument(path, { maxDocumentBytes: text.length })).status).toBe('valid');
  });

  it('reports a document missing required members as invalid_record, naming the member (TJ-STATE-001)', async () => {
    const { messages: _, ...noMessages } = state;
    const result = await readStateDocument(doc(JSON.stringify(noMessages)));
    expect(result.status).toBe('invalid_record');
    expect(result.findings[0]?.message).toContain('messages');
  });

  it('reports a document without schema_version as invalid_record (spec §9.4)', async () => {
    const { schema_version: _, ...noVersion } = state;
    const result = await readStateDocument(doc(JSON.stringify(noVersion)));
    expect(codes(result)).toEqual(['invalid_record']);
    expect(result.findings[0]?.message).toContain('schema_version');
  });

  it('reports a document of another family as invalid_record (TJ-FAM-008)', async () => {
    const run = { type: 'run.status', run_id: 'r', ts: 't', status: 'running' };
    expect(codes(await readStateDocument(doc(JSON.stringify(run))))).toEqual(['invalid_record']);
  });

  it('reports an unsupported schema_version without failing (TJ-COMPAT-011)', async () => {
    const result = await readStateDocument(doc(JSON.stringify({ ...state, schema_version: 2 })), { mode: 'strict' });
    expect(result.status).toBe('unsupported_version');
    expect(codes(result)).toEqual(['unsupported_version']);
  });

  it('throws ReaderError in strict mode for malformed and invalid documents (TJ-STATE-004, TJ-FRAME-022)', async () => {
    await expect(readStateDocument(doc('{'), { mode: 'strict' })).rejects.toMatchObject({
      code: 'malformed_document',
    });
    await expect(
      readStateDocument(doc(JSON.stringify({ ...state, messages: 'none' })), { mode: 'strict' }),
    ).rejects.toBeInstanceOf(ReaderError);
  });

  it('throws the file system error for a missing document', async () => {
    await expect(readStateDocument('/nonexistent/turnjournal/state.json')).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

describe('readStateDocument: failures that say nothing about the document (issue 34)', () => {
  it('throws a failure of the parse other than a SyntaxError instead of calling the document malformed', async () => {
    const path = doc(JSON.stringify(state));
    const parse = vi.spyOn(JSON, 'parse').mockImplementationOnce(() => {
      throw new RangeError('out of memory, simulated');
    });
    try {
      await expect(readStateDocument(path)).rejects.toThrow(RangeError);
    } finally {
      parse.mockRestore();
    }
    expect(await readStateDocument(path)).toMatchObject({ status: 'valid' });
  });
});
