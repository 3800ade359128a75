import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AdapterProcess } from '../../process.js';
import { expectOk, recordsOf } from './answers.js';
import { type WriterContext, withAdapter } from './context.js';
import { inFreshStore } from './lifecycle.js';
import { claimsFeature } from './support.js';
import { answerAt, traceSteps } from './trace-steps.js';
import { withTracedAdapter } from './traced-adapter.js';
import { unsafeReplace } from './traced-store-ops.js';

// The checks of the run writer and the state-document writer (feature `lifecycle`, families `run` and `state`): what
// they decide — the header, the numbering of agent events, the pairing of model responses — and how a state document
// is replaced.

type Json = Record<string, unknown>;
const RUN_FILE = join('sessions', '2026', '01', '01', 'r1.jsonl');
const claims = (context: WriterContext, family: 'run' | 'state') =>
  claimsFeature(context.claims, 'lifecycle') && context.claims.families.includes(family);

/**
 * `writer/run-steps` (TJ-RUN-003, TJ-RUN-004, TJ-RUNSEM-010, TJ-RUNSEM-011): a run written one `run_step` at a time,
 * so that each step reopens the file: one header, first; agent events numbered from 0 and increasing across reopens;
 * two model requests answered in the opposite order, each response carrying its request's seq.
 */
async function runStepsCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/run-steps',
    "a run written step by step has one header, first; agent events numbered from 0 upward; each response its request's seq",
    'writer',
    ['TJ-RUN-003', 'TJ-RUN-004', 'TJ-RUNSEM-010', 'TJ-RUNSEM-011', 'TJ-CONF-032'],
    async () => {
      if (!claims(context, 'run')) return { skip: 'feature lifecycle or family run not claimed' };
      return inFreshStore(
        context,
        'run',
        (root) => join(root, RUN_FILE),
        (_root, file) =>
          withAdapter(context, async (process) => {
            const failures: string[] = [];
            const step = (name: string, params: Json, what: string) =>
              expectOk(
                process,
                'run_step',
                { file, run_id: 'r1', started_at: '2026-01-01T00:00:00Z', step: name, ...params },
                what,
                failures,
              );
            const agentEvent = async (n: number) =>
              (await step('agent_event', { event: { type: 'thinking', n } }, `agent event ${n}`))?.seq;
            const request = (text: string) => ({ input: { messages: [{ role: 'user', content: text }] } });
            const answer = (text: string) => ({ output: { messages: [{ role: 'assistant', content: text }] } });
            await step('start', { input: { type: 'text', text: 'hi' } }, 'start');
            const agentSeqs = [await agentEvent(0), await agentEvent(1)];
            const first = (await step('llm_request', request('one'), 'first llm_request'))?.seq;
            agentSeqs.push(await agentEvent(2));
            const second = (await step('llm_request', request('two'), 'second llm_request'))?.seq;
            await step('llm_response', { seq: second, ...answer('two') }, 'the response to the second request');
            await step('llm_response', { seq: first, ...answer('one') }, 'the response to the first request');
            agentSeqs.push(await agentEvent(3));
            await step('end', { outcome: 'completed' }, 'end');
            if (failures.length > 0) return failures;
            return runFileFailures(recordsOf(file, failures), agentSeqs, [first, second]).concat(failures);
          }),
      );
    },
  );
}

/** What the run file written by `writer/run-steps` must show, given the seqs the adapter answered. */
export function runFileFailures(records: readonly Json[], agentSeqs: unknown[], requestSeqs: unknown[]): string[] {
  const failures: string[] = [];
  const headers = records.filter((r) => r.type === 'header').length;
  if (records[0]?.type !== 'header')
    failures.push(
      `the run file starts with ${JSON.stringify(records[0]?.type ?? 'nothing')}, not a header (TJ-RUN-003)`,
    );
  if (headers !== 1) failures.push(`the run file holds ${headers} header records, not 1 (TJ-RUN-004)`);
  const events = records.filter((r) => r.type === 'agent.event').map((r) => r.seq);
  const increasing = events.every(
    (seq, i) => typeof seq === 'number' && (i === 0 ? seq === 0 : seq > (events[i - 1] as number)),
  );
  if (!increasing || events.length !== 4)
    failures.push(`the agent events have seqs ${JSON.stringify(events)}: not 4 increasing from 0 (TJ-RUNSEM-010)`);
  if (JSON.stringify(events) !== JSON.stringify(agentSeqs))
    failures.push(
      `the agent events were answered seqs ${JSON.stringify(agentSeqs)}, the file holds ${JSON.stringify(events)}`,
    );
  const requests = records.filter((r) => r.type === 'llm.request').map((r) => r.seq);
  if (JSON.stringify(requests) !== JSON.stringify(requestSeqs) || requestSeqs[0] === requestSeqs[1])
    failures.push(
      `the requests were answered seqs ${JSON.stringify(requestSeqs)}, the file holds ${JSON.stringify(requests)}`,
    );
  const responses = records.filter((r) => r.type === 'llm.response').map((r) => r.seq);
  const expected = [requestSeqs[1], requestSeqs[0]];
  if (JSON.stringify(responses) !== JSON.stringify(expected))
    failures.push(
      `the responses to the second, then the first request carry seqs ${JSON.stringify(responses)}, not their requests' ${JSON.stringify(expected)} (TJ-RUNSEM-011)`,
    );
  return failures;
}

/**
 * `writer/state-replace` (strace; TJ-STATE-005, TJ-DUR-009): the second `state_write` of a session replaces its
 * document by a synced temporary file of the same directory, renamed over it, and a directory sync; the document then
 * holds the second message list.
 */
async function stateReplaceCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/state-replace',
    'a state document is replaced by temporary file, fsync, rename and directory fsync (strace), and holds the new messages',
    'writer',
    // Replacing by rename is how the file binding makes a document's replacement atomic (TJ-STORE-006).
    ['TJ-STATE-005', 'TJ-DUR-009', 'TJ-STORE-006'],
    async () => {
      if (!claims(context, 'state')) return { skip: 'feature lifecycle or family state not claimed' };
      return withTracedAdapter(context, async ({ process, dir, trace }) => {
        const root = join(dir, 'store');
        mkdirSync(root);
        const document = join(root, 'sessions', 'state', 's1.json');
        const write = async (adapter: AdapterProcess, content: string) =>
          (
            await adapter.requestWithId('state_write', {
              root,
              session_id: 's1',
              messages: [{ role: 'user', content }],
            })
          ).id;
        const firstId = await write(process, 'first');
        const secondId = await write(process, 'second');
        await process.stop();
        const failures: string[] = [];
        try {
          const messages = (JSON.parse(readFileSync(document, 'utf8')) as Json).messages;
          if (JSON.stringify(messages) !== '[{"role":"user","content":"second"}]')
            failures.push(`after the second state_write the document holds messages ${JSON.stringify(messages)}`);
        } catch (error) {
          failures.push(`the state document ${document} cannot be read back: ${String(error)}`);
        }
        const steps = traceSteps(trace());
        const after = answerAt(steps, firstId);
        const before = answerAt(steps, secondId);
        if (after === undefined || before === undefined)
          return [...failures, 'the answers to state_write are not in the trace'];
        return [...failures, ...unsafeReplace(steps, document, before, { after, lock: false })];
      });
    },
  );
}

/** The run-writer and state-document checks of feature `lifecycle`. */
export async function runAndStateChecks(context: WriterContext): Promise<void> {
  await runStepsCheck(context);
  await stateReplaceCheck(context);
}
