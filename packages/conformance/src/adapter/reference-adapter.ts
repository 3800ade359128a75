import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { LiveError } from '@turnjournal/live';
import { WriterError } from '@turnjournal/writer';
import { Compile } from 'typebox/compile';
import type { AdapterImplementation, AdapterWriter, LifecycleOperations } from './adapter-implementation.js';
import { type AdapterErrorCode, AdapterRequest } from './protocol.js';
import { referenceImplementation } from './reference-implementation.js';
import type { LiveOperations } from './reference-live.js';
import { AdapterRequestError } from './request-error.js';

// The adapter protocol's loop (adapter.md): one JSON request per line on stdin, one response per line on stdout, served
// by an AdapterImplementation (the reference one unless a test swaps parts of it).

/** Writer errors about what the request asked for: an invalid record, or an id no path may be built from (TJ-FAM-010). */
const BAD_REQUESTS = new Set(['invalid_record', 'invalid_identifier']);

/** One `lifecycle` request (adapter.md §5.4) served by `lifecycle`, with the protocol's names mapped to its own. */
async function lifecycleCall(
  lifecycle: LifecycleOperations,
  request: Extract<AdapterRequest, { op: 'turn_submit' | 'turn_event' | 'event_append' | 'run_step' | 'state_write' }>,
): Promise<Record<string, unknown>> {
  switch (request.op) {
    case 'turn_submit':
      return lifecycle.turnSubmit({
        root: request.root,
        sessionId: request.session_id,
        turnId: request.turn_id,
        content: request.content,
      });
    case 'turn_event':
      await lifecycle.turnEvent({
        root: request.root,
        sessionId: request.session_id,
        turnId: request.turn_id,
        event: request.event,
        ...(request.reason === undefined ? {} : { reason: request.reason }),
      });
      return {};
    case 'event_append':
      return lifecycle.eventAppend({ file: request.file, type: request.type, payload: request.payload });
    case 'state_write':
      await lifecycle.stateWrite({ root: request.root, sessionId: request.session_id, messages: request.messages });
      return {};
    case 'run_step':
      return lifecycle.runStep({
        file: request.file,
        runId: request.run_id,
        startedAt: request.started_at,
        step: request.step,
        ...(request.input === undefined ? {} : { input: request.input }),
        ...(request.event === undefined ? {} : { event: request.event }),
        ...(request.seq === undefined ? {} : { seq: request.seq }),
        ...(request.output === undefined ? {} : { output: request.output }),
        ...(request.outcome === undefined ? {} : { outcome: request.outcome }),
      });
  }
}

type LiveRequest = Extract<
  AdapterRequest,
  { op: 'live_open' | 'live_send' | 'live_step' | 'live_snapshot' | 'live_ack' | 'live_subscribe' }
>;

/** Serves one `live_*` request (adapter.md §5.7). */
async function serveLive(live: LiveOperations, request: LiveRequest): Promise<Record<string, unknown>> {
  const ref = { root: request.root, sessionId: request.session_id };
  switch (request.op) {
    case 'live_open': {
      const opened = await live.open(ref, request.tokens, {
        ...(request.max_open_sessions === undefined ? {} : { maxOpenSessions: request.max_open_sessions }),
        ...(request.window_bytes === undefined ? {} : { windowBytes: request.window_bytes }),
      });
      return {
        last_seq: opened.lastSeq,
        ...(opened.clientIdMax === undefined ? {} : { client_id_max: opened.clientIdMax }),
        ...(opened.maxOpenSessions === undefined ? {} : { max_open_sessions: opened.maxOpenSessions }),
        ...(opened.windowBytes === undefined ? {} : { window_bytes: opened.windowBytes }),
      };
    }
    case 'live_send':
      return await live.send(ref, request.request_id, request.content);
    case 'live_step':
      await live.step(ref, request.request_id, {
        step: request.step,
        ...(request.text === undefined ? {} : { text: request.text }),
        ...(request.tool_call_id === undefined ? {} : { toolCallId: request.tool_call_id }),
        ...(request.tool === undefined ? {} : { tool: request.tool }),
        ...(request.args === undefined ? {} : { args: request.args }),
        ...(request.is_error === undefined ? {} : { isError: request.is_error }),
        ...(request.output === undefined ? {} : { output: request.output }),
        ...(request.message === undefined ? {} : { message: request.message }),
        ...(request.reason === undefined ? {} : { reason: request.reason }),
      });
      return {};
    case 'live_snapshot':
      return { ...(await live.snapshot(ref, request.client_id)) };
    case 'live_ack':
      await live.ack(ref, request.request_id, {
        ...(request.client_id === undefined ? {} : { clientId: request.client_id }),
        ...(request.through_seq === undefined ? {} : { throughSeq: request.through_seq }),
      });
      return {};
    case 'live_subscribe':
      return {
        events: await live.subscribe(ref, {
          after: request.after,
          ...(request.epoch === undefined ? {} : { epoch: request.epoch }),
          ...(request.until_seq === undefined ? {} : { untilSeq: request.until_seq }),
          timeoutMs: request.timeout_ms ?? 5000,
        }),
      };
  }
}

const requestValidator = Compile(AdapterRequest);

/**
 * Runs an adapter over `input` (requests, one JSON object a line) and `output` (responses): the protocol of
 * spec/v1/adapter.md. Requests are handled as they arrive, so pipelined appends reach the writer in order and group
 * commit can batch them; each response is written only when its operation is done (an append once durable,
 * TJ-CONF-014). Nothing but responses goes to `output` (TJ-CONF-012); diagnostics go to `diagnostics` (TJ-CONF-013).
 * Resolves after `stop` (or the end of input) with every file closed.
 */
export async function runAdapter(
  input: Readable,
  output: Writable,
  implementation: AdapterImplementation = referenceImplementation,
  diagnostics: Writable = process.stderr,
): Promise<void> {
  const writers = new Map<string, AdapterWriter>();
  const live = implementation.live?.();
  let nextHandle = 1;
  let stopping: (() => void) | null = null;
  const stopped = new Promise<void>((resolve) => {
    stopping = resolve;
  });
  const respond = (value: unknown) => output.write(`${JSON.stringify(value)}\n`);
  // At stop, a close that fails cannot be answered to anyone (the harness asked to stop): it goes to the diagnostics
  // stream (TJ-CONF-013), and every other writer is still closed.
  const reportCloseFailure = (what: string) => (error: unknown) => {
    diagnostics.write(`adapter: closing ${what} at stop failed: ${(error as Error).stack ?? String(error)}\n`);
  };
  const closeAll = async () => {
    for (const [handle, writer] of writers) {
      writers.delete(handle);
      await writer.close().catch(reportCloseFailure(`writer ${handle}`));
    }
    await live?.close().catch(reportCloseFailure('the live sessions'));
  };

  const handle = async (request: AdapterRequest): Promise<Record<string, unknown>> => {
    const claims = implementation.capabilities;
    switch (request.op) {
      case 'start':
        return { ...claims };
      case 'read':
        if (!claims.levels.includes('reader')) throw new AdapterRequestError('unsupported', 'not a reader');
        if (request.audit === true && !(claims.features ?? []).includes('audit'))
          throw new AdapterRequestError('unsupported', 'feature audit is not supported');
        return await implementation.read(
          request.paths,
          request.mode ?? 'tolerant',
          request.audit === true,
          request.max_line_bytes,
          // An adapter that does not claim the feature ignores the member, as any member it does not know (TJ-CONF-021).
          request.representatives === true && (claims.features ?? []).includes('representatives'),
        );
      case 'replay':
        if (!(claims.features ?? []).includes('replay'))
          throw new AdapterRequestError('unsupported', 'feature replay is not supported');
        return await implementation.replay(request.file, request.after, request.epoch);
      case 'open': {
        if (!claims.levels.includes('writer')) throw new AdapterRequestError('unsupported', 'not a writer');
        if (!claims.durability.includes(request.durability))
          throw new AdapterRequestError('unsupported', `durability ${request.durability} is not supported`);
        const writer = await implementation.open(request.file, request.durability);
        const id = `h${nextHandle++}`;
        writers.set(id, writer);
        return { handle: id };
      }
      case 'append': {
        const writer = writers.get(request.handle);
        if (writer === undefined) throw new AdapterRequestError('bad_request', `no open handle ${request.handle}`);
        await writer.append(request.record);
        return {};
      }
      case 'close': {
        const writer = writers.get(request.handle);
        if (writer === undefined) throw new AdapterRequestError('bad_request', `no open handle ${request.handle}`);
        writers.delete(request.handle);
        await writer.close();
        return {};
      }
      case 'lines': {
        if (!(claims.features ?? []).includes('store-lines') || implementation.lines === undefined)
          throw new AdapterRequestError('unsupported', 'feature store-lines is not supported');
        const lines = await implementation.lines(request.file);
        return { lines: lines.map((line) => Buffer.from(line).toString('base64')) };
      }
      case 'turn_submit':
      case 'turn_event':
      case 'event_append':
      case 'run_step':
      case 'state_write': {
        const lifecycle = implementation.lifecycle;
        if (!(claims.features ?? []).includes('lifecycle') || lifecycle === undefined)
          throw new AdapterRequestError('unsupported', 'feature lifecycle is not supported');
        return await lifecycleCall(lifecycle, request);
      }
      case 'recover': {
        if (!(claims.features ?? []).includes('recovery') || implementation.recover === undefined)
          throw new AdapterRequestError('unsupported', 'feature recovery is not supported');
        const recovered = await implementation.recover(request.root);
        return { recovered: recovered.map((turn) => ({ session_id: turn.sessionId, turn_id: turn.turnId })) };
      }
      case 'sweep':
      case 'compact': {
        const retention = implementation.retention;
        if (!(claims.features ?? []).includes('retention') || retention === undefined)
          throw new AdapterRequestError('unsupported', 'feature retention is not supported');
        if (request.op === 'sweep') {
          const swept = await retention.sweep({
            root: request.root,
            now: request.now,
            windowSeconds: request.window_s,
          });
          return { sessions: swept.map((s) => ({ session_id: s.sessionId, pruned: s.pruned })) };
        }
        const compacted = await retention.compact({
          file: request.file,
          now: request.now,
          windowSeconds: request.window_s,
          deliveryWindowSeconds: request.delivery_window_s,
        });
        return { removed_records: compacted.removedRecords, expired: compacted.expired };
      }
      case 'live_open':
      case 'live_send':
      case 'live_step':
      case 'live_snapshot':
      case 'live_ack':
      case 'live_subscribe':
        if (!(claims.features ?? []).includes('live') || live === undefined)
          throw new AdapterRequestError('unsupported', 'feature live is not supported');
        return await serveLive(live, request);
      case 'stop':
        await closeAll();
        return {};
    }
  };

  /** Requests being served: a `stop` waits for them. */
  const inFlight = new Set<Promise<unknown>>();
  const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', (line) => {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      diagnostics.write(`adapter: ignoring a line that is not JSON: ${line.slice(0, 200)}\n`);
      return;
    }
    const id = typeof (message as { id?: unknown })?.id === 'number' ? (message as { id: number }).id : 0;
    if (!requestValidator.Check(message)) {
      const op = (message as { op?: unknown })?.op;
      const known = [
        'start',
        'read',
        'replay',
        'open',
        'append',
        'close',
        'lines',
        'turn_submit',
        'turn_event',
        'event_append',
        'run_step',
        'state_write',
        'recover',
        'sweep',
        'compact',
        'live_open',
        'live_send',
        'live_step',
        'live_snapshot',
        'live_ack',
        'live_subscribe',
        'stop',
      ].includes(op as string);
      const errors = requestValidator
        .Errors(message)
        .slice(0, 3)
        .map((e) => `${e.instancePath || '(root)'} ${e.message}`)
        .join('; ');
      // An unknown op is answered, never by exiting (TJ-CONF-015).
      respond({
        id,
        ok: false,
        error: known
          ? { code: 'bad_request', message: errors }
          : { code: 'unsupported', message: `unknown op ${JSON.stringify(op)}` },
      });
      return;
    }
    const request = message as AdapterRequest;
    // Every request is answered (TJ-CONF-019): a `stop` pipelined behind others is served once they are, so that its
    // answer, after which the harness may close the streams, is the last.
    const earlier = request.op === 'stop' ? Promise.allSettled([...inFlight]) : undefined;
    const served = earlier === undefined ? handle(request) : earlier.then(() => handle(request));
    inFlight.add(served);
    served.then(
      () => inFlight.delete(served),
      () => inFlight.delete(served),
    );
    served.then(
      (result) => {
        respond({ id: request.id, ok: true, result });
        if (request.op === 'stop') stopping?.();
      },
      (error: unknown) => {
        const code: AdapterErrorCode =
          error instanceof AdapterRequestError
            ? error.code
            : // A record store's owner refusal is a WriterError of that code, not the file lock's JournalLockedError.
              error instanceof WriterError && error.code === 'journal_locked'
              ? 'journal_locked'
              : (error instanceof WriterError && BAD_REQUESTS.has(error.code)) ||
                  (error instanceof LiveError &&
                    (error.code === 'invalid_request' || error.code === 'reserved_session_id'))
                ? 'bad_request'
                : 'failed';
        diagnostics.write(`adapter: ${request.op} failed: ${(error as Error).stack ?? String(error)}\n`);
        respond({ id: request.id, ok: false, error: { code, message: (error as Error).message ?? String(error) } });
      },
    );
  });
  lines.on('close', () => {
    closeAll().then(() => stopping?.());
  });
  await stopped;
  lines.close();
}
