// Coverage of TJ-RUN-012 (spec §7.2) against the reference run writer: private data goes into `meta`.
import { readFileSync } from 'node:fs';
import { RECORD_DEFINITIONS } from '@turnjournal/schema';
import { describe, expect, it } from 'vitest';
import { openRunWriter } from '../support/internals.js';
import { tempDir } from '../support/temp.js';

const META = { x_acme: { trace: 'abc', attempt: 2 } };

describe('run writer: private data (spec §7.2)', () => {
  it('writes the caller’s private data of every typed record as meta, never as new top-level members (TJ-RUN-012)', async () => {
    const root = tempDir();
    const writer = await openRunWriter({
      root,
      runId: 'r1',
      header: { startedAt: '2026-05-11T00:00:00Z', meta: META },
    });
    await writer.runStart('list files', { sessionId: 's1', meta: META });
    await writer.context(80, { meta: META });
    await writer.agentEvent({ type: 'message', content: 'hi' }, { meta: META });
    await writer.toolOutput({ tool: 'exec_command', toolCallId: 'call_1', resultRaw: 'a\nb', meta: META });
    const request = await writer.llmRequest({ input: { messages: [{ role: 'user', content: 'x' }] }, meta: META });
    await writer.llmResponse({
      seq: request.seq,
      output: { messages: [{ role: 'assistant', content: 'y' }] },
      meta: META,
    });
    await writer.status('running', { meta: META });
    await writer.error({ name: 'ProviderError', message: 'rate limited' }, { meta: META });
    await writer.end({ outcome: 'completed', meta: META });
    await writer.close();
    const records = readFileSync(writer.path, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(records).toHaveLength(10);
    for (const record of records) {
      const definition = RECORD_DEFINITIONS.find((d) => d.family === 'run' && d.type === record.type);
      expect(definition, `no v1 definition of ${String(record.type)}`).toBeDefined();
      const members = Object.keys((definition?.schema as { properties?: object } | undefined)?.properties ?? {});
      expect(members).toContain('meta');
      // Every member written is one the spec defines for the type; the private data is under meta, unchanged.
      for (const key of Object.keys(record)) expect(members, `${String(record.type)}.${key}`).toContain(key);
      expect(record.meta, String(record.type)).toEqual(META);
    }
  });
});
