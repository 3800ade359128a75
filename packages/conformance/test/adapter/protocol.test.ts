import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { writeStoreFixture } from '../../src/fixtures/run-store-fixtures.js';
import {
  AdapterFailure,
  AdapterProcess,
  referenceImplementation,
  runAdapter,
  runConformance,
} from '../support/internals.js';
import { fakeAdapter, fakeLoop, START } from './support.js';

async function failureOf(promise: Promise<unknown>): Promise<AdapterFailure> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AdapterFailure) return error;
    throw error;
  }
  throw new Error('expected the request to fail');
}

describe('AdapterProcess reports protocol violations clearly and never hangs', () => {
  it('garbage on stdout is a TJ-CONF-012 violation showing the offending line (TJ-CONF-018, TJ-CONF-028)', async () => {
    const adapter = AdapterProcess.spawn(fakeAdapter(fakeLoop(`() => 'hello, I am not JSON'`)), { timeoutMs: 5000 });
    try {
      const failure = await failureOf(adapter.request('start', { protocol: 1 }));
      expect(failure.kind).toBe('protocol');
      expect(failure.message).toContain('TJ-CONF-012');
      expect(failure.message).toContain('hello, I am not JSON');
      expect(adapter.usable).toBe(false);
    } finally {
      await adapter.dispose();
    }
  });

  it('a response with a wrong id is a TJ-CONF-012 violation (TJ-CONF-019)', async () => {
    const adapter = AdapterProcess.spawn(
      fakeAdapter(fakeLoop(`(r) => JSON.stringify({ id: r.id + 100, ok: true, result: {} })`)),
      { timeoutMs: 5000 },
    );
    try {
      const failure = await failureOf(adapter.request('start', { protocol: 1 }));
      expect(failure.message).toMatch(/response with id \d+ answers no pending request/);
    } finally {
      await adapter.dispose();
    }
  });

  it('a result that breaks its schema names the request and the problem (TJ-CONF-028)', async () => {
    const adapter = AdapterProcess.spawn(
      fakeAdapter(fakeLoop(`(r) => JSON.stringify({ id: r.id, ok: true, result: { name: 'x' } })`)),
      { timeoutMs: 5000 },
    );
    try {
      const failure = await failureOf(adapter.request('start', { protocol: 1 }));
      expect(failure.kind).toBe('protocol');
      expect(failure.message).toMatch(/^start \(id 1\): result breaks the protocol schema/);
    } finally {
      await adapter.dispose();
    }
  });

  it('an exit mid-request fails the request with the exit status and the stderr tail (TJ-CONF-015)', async () => {
    const adapter = AdapterProcess.spawn(
      fakeAdapter(fakeLoop(`() => { process.stderr.write('about to crash\\n'); process.exit(3); }`)),
      { timeoutMs: 5000 },
    );
    try {
      const failure = await failureOf(adapter.request('start', { protocol: 1 }));
      expect(failure.kind).toBe('exited');
      expect(failure.message).toContain('code 3');
      expect(failure.message).toContain('stderr: about to crash');
    } finally {
      await adapter.dispose();
    }
  });

  it('a hanging adapter times out instead of hanging the runner (TJ-CONF-029)', async () => {
    const adapter = AdapterProcess.spawn(fakeAdapter(fakeLoop('() => undefined')), { timeoutMs: 300 });
    try {
      const failure = await failureOf(adapter.request('start', { protocol: 1 }));
      expect(failure.kind).toBe('timeout');
      expect(failure.message).toContain('no response within 300 ms');
    } finally {
      await adapter.dispose();
    }
    expect(adapter.exitStatus).not.toBeNull();
  });

  it('the runner reports a hanging adapter as a failed start check that timed out, and returns (TJ-CONF-044)', async () => {
    const report = await runConformance({ adapter: fakeAdapter(fakeLoop('() => undefined')), timeoutMs: 300 });
    expect(report.ok).toBe(false);
    expect(report.checks.map((c) => [c.id, c.status, c.timed_out])).toEqual([['adapter/start', 'failed', true]]);
    expect(report.checks[0]?.details[0]).toMatch(/^timed out: .*not a wrong answer.*--timeout-scale/);
    expect(report.checks[0]?.details[1]).toContain('no response within 300 ms');
  });

  it('a slow adapter times out at scale 1 and passes with --timeout-scale; a hang fails at any scale (TJ-CONF-044)', async () => {
    // Answers start 600 ms late: a loaded machine, not a hang.
    const slow = fakeAdapter(
      fakeLoop(
        `(r) => { const end = Date.now() + 600; while (Date.now() < end); return JSON.stringify({ id: r.id, ok: true, result: ${START} }); }`,
      ),
    );
    const hasty = await runConformance({ adapter: slow, timeoutMs: 150, tier: 'reader', only: ['adapter/start'] });
    const start = (report: typeof hasty) => report.checks.find((c) => c.id === 'adapter/start');
    expect(start(hasty)?.timed_out).toBe(true);
    const scaled = await runConformance({
      adapter: slow,
      timeoutMs: 150,
      timeoutScale: 20,
      tier: 'reader',
      only: ['adapter/start'],
    });
    expect(start(scaled)?.status).toBe('passed');
    expect(scaled.options.timeout_ms).toBe(3000);
    expect(scaled.options.timeout_scale).toBe(20);
    const hang = await runConformance({
      adapter: fakeAdapter(fakeLoop('() => undefined')),
      timeoutMs: 150,
      timeoutScale: 4,
    });
    expect(start(hang)?.timed_out).toBe(true);
  });

  it('a wrong answer is a failure that did not time out (TJ-CONF-044)', async () => {
    const wrong = fakeAdapter(fakeLoop(`(r) => JSON.stringify({ id: r.id, ok: true, result: { name: 'x' } })`));
    const report = await runConformance({ adapter: wrong, timeoutMs: 5000 });
    expect(report.checks[0]?.status).toBe('failed');
    expect(report.checks[0]?.timed_out).toBeUndefined();
  });

  it('the runner survives an adapter that answers start and then crashes on read (TJ-CONF-015)', async () => {
    const command = fakeAdapter(
      fakeLoop(`(r) => r.op === 'start' ? JSON.stringify({ id: r.id, ok: true, result: ${START} })
        : r.op === 'read' ? process.exit(1)
        : JSON.stringify({ id: r.id, ok: false, error: { code: 'unsupported', message: 'no' } })`),
    );
    const report = await runConformance({ adapter: command, tier: 'reader', runs: 1, timeoutMs: 5000 });
    expect(report.ok).toBe(false);
    // The first fixture case meets the crash; after a few restarts the runner stops restarting (not tested here).
    const read = report.checks.find((c) => c.id.startsWith('reader/store/') && c.status !== 'skipped');
    expect(read?.status).toBe('failed');
    expect(read?.details[0]).toContain('adapter exited (code 1) before answering');
    expect(report.checks.find((c) => c.id === 'adapter/unknown-op')?.status).toBe('passed');
  }, 120_000);
});

describe('the reference adapter in process', () => {
  async function exchange(lines: unknown[]): Promise<Record<string, unknown>[]> {
    const input = new PassThrough();
    const output = new PassThrough();
    const diagnostics = new PassThrough();
    diagnostics.resume();
    let text = '';
    output.setEncoding('utf8').on('data', (c: string) => {
      text += c;
    });
    const done = runAdapter(input, output, undefined, diagnostics);
    for (const line of lines) input.write(`${typeof line === 'string' ? line : JSON.stringify(line)}\n`);
    await done;
    return text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);
  }

  it('answers every request pipelined before a stop, and the stop last (TJ-CONF-019)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-pipelined-'));
    try {
      writeStoreFixture(root, {
        files: [
          {
            path: '_turn_journal/s1.jsonl',
            text: '{"version":1,"event":"submitted","turn_id":"t1","session_id":"s1","created_at":1770000001}\n',
          },
        ],
      });
      const answers = await exchange([
        { id: 1, op: 'read', paths: [root] },
        { id: 2, op: 'read', paths: [root] },
        { id: 3, op: 'stop' },
      ]);
      expect(answers.map((answer) => [answer.id, answer.ok])).toEqual([
        [1, true],
        [2, true],
        [3, true],
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('answers start with every level, family, durability and feature, and stop with an empty result (TJ-CONF-001, TJ-CONF-024)', async () => {
    const [start, stop] = await exchange([
      { id: 1, op: 'start', protocol: 1 },
      { id: 2, op: 'stop' },
    ]);
    expect(start).toMatchObject({
      id: 1,
      ok: true,
      result: {
        protocol: 1,
        levels: ['reader', 'writer'],
        families: ['turn', 'event', 'run', 'state'],
        durability: ['every', 'group', 'none'],
        features: ['audit', 'replay', 'lifecycle', 'recovery', 'retention', 'live', 'representatives'],
      },
    });
    expect(stop).toEqual({ id: 2, ok: true, result: {} });
  });

  it('answers the representative records of a read only when asked: the smallest bytes of conflicting shards (TJ-CONF-050, TJ-DERIVE-013)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-representatives-'));
    try {
      const submitted = (createdAt: number, content: string) =>
        `{"version":1,"event":"submitted","turn_id":"t1","session_id":"s1","created_at":${createdAt},"role":"user","content":"${content}"}\n`;
      // The shard read first holds the larger record: a reader keeping the first record it meets names it.
      writeStoreFixture(root, {
        files: [
          { path: '_turn_journal/s1.jsonl', text: submitted(1770000001, 'b') },
          { path: '_turn_journal/s1~w1.jsonl', text: submitted(1770000001, 'a') },
        ],
      });
      const adapter = sequential();
      const plain = await adapter.send({ id: 1, op: 'read', paths: [root] });
      const asked = await adapter.send({ id: 2, op: 'read', paths: [root], representatives: true });
      await adapter.send({ id: 3, op: 'stop' });
      await adapter.done;
      expect((plain.result as Record<string, unknown>).representatives).toBeUndefined();
      expect((asked.result as Record<string, unknown>).representatives).toEqual({
        s1: { t1: { submitted: JSON.parse(submitted(1770000001, 'a')) } },
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('answers an unknown op with unsupported and a malformed request with bad_request, not by exiting (TJ-CONF-015, TJ-CONF-022)', async () => {
    const responses = await exchange([
      { id: 1, op: 'teleport' },
      { id: 2, op: 'read', paths: 'not an array' },
      { id: 3, op: 'append', handle: 'h9', record: {} },
      { id: 4, op: 'stop' },
    ]);
    expect(responses.map((r) => [r.id, (r.error as { code?: string } | undefined)?.code ?? 'ok'])).toEqual([
      [1, 'unsupported'],
      [2, 'bad_request'],
      [3, 'bad_request'],
      [4, 'ok'],
    ]);
  });

  /** Runs an adapter and sends requests one at a time, each after the previous answer (lifecycle ops lock files). */
  function sequential(implementation = referenceImplementation) {
    const input = new PassThrough();
    const output = new PassThrough();
    const waiting: ((line: string) => void)[] = [];
    let buffered = '';
    output.setEncoding('utf8').on('data', (c: string) => {
      buffered += c;
      for (let lf = buffered.indexOf('\n'); lf >= 0; lf = buffered.indexOf('\n')) {
        const line = buffered.slice(0, lf);
        buffered = buffered.slice(lf + 1);
        waiting.shift()?.(line);
      }
    });
    const done = runAdapter(input, output, implementation, new PassThrough().resume());
    return {
      send: (request: unknown) =>
        new Promise<Record<string, unknown>>((resolve) => {
          waiting.push((line) => resolve(JSON.parse(line) as Record<string, unknown>));
          input.write(`${JSON.stringify(request)}\n`);
        }),
      done,
    };
  }

  it('serves feature lifecycle: a retry answers created false, a refusal is refused, and an adapter without the feature answers unsupported (TJ-CONF-032)', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-lifecycle-'));
    const submit = (id: number, content: string) => ({
      id,
      op: 'turn_submit',
      root,
      session_id: 's1',
      turn_id: 't1',
      content,
    });
    const adapter = sequential();
    const answers: unknown[] = [];
    for (const request of [
      submit(1, 'hi'),
      submit(2, 'hi'),
      submit(3, 'other'),
      {
        id: 4,
        op: 'event_append',
        file: join(root, 's1', 'events.jsonl'),
        type: 'chat.started',
        payload: { request_id: 'r1' },
      },
      { id: 5, op: 'stop' },
    ]) {
      const r = await adapter.send(request);
      answers.push([r.id, r.ok ? r.result : (r.error as { code: string }).code]);
    }
    await adapter.done;
    expect(answers).toEqual([
      [1, { created: true }],
      [2, { created: false }],
      [3, 'refused'],
      [4, { seq: 0 }],
      [5, {}],
    ]);
    const { lifecycle: _unused, ...withoutLifecycle } = referenceImplementation;
    const plain = sequential({
      ...withoutLifecycle,
      capabilities: { ...referenceImplementation.capabilities, features: ['audit', 'replay'] },
    });
    expect(await plain.send(submit(1, 'hi'))).toMatchObject({ id: 1, ok: false, error: { code: 'unsupported' } });
    await plain.send({ id: 2, op: 'stop' });
    await plain.done;
    rmSync(root, { recursive: true, force: true });
  });

  it('ignores request members this version does not define (TJ-CONF-021)', async () => {
    const responses = await exchange([
      { id: 1, op: 'start', protocol: 1, x_future_option: { anything: true } },
      { id: 2, op: 'stop', reason: 'a member v1 does not define' },
    ]);
    expect(responses.map((r) => [r.id, r.ok])).toEqual([
      [1, true],
      [2, true],
    ]);
  });
});

describe('the harness ignores response members this version does not define (TJ-CONF-021)', () => {
  it('accepts a start result with extra members', async () => {
    const adapter = AdapterProcess.spawn(
      fakeAdapter(
        fakeLoop(`(r) => JSON.stringify({ id: r.id, ok: true, x_trace: 'abc', result: { ...${START}, x_build: 7 } })`),
      ),
      { timeoutMs: 5000 },
    );
    try {
      const result = (await adapter.request('start', { protocol: 1 })) as { name?: string };
      expect(result.name).toBe('fake');
    } finally {
      await adapter.dispose();
    }
  });
});
