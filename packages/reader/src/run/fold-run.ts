import {
  type Finding,
  type FindingCode,
  type FindingLocation,
  makeFinding,
  type RunHeader,
  type RunLlmRequest,
  type RunLlmResponse,
} from '@turnjournal/schema';
import type { JournalRecord } from '../framing/read-journal.js';

/** Where a run record came from. */
export interface RunRecordSource {
  /** The run file the record was read from; every finding names it (TJ-AUDIT-003). */
  readonly file: string;
}

/**
 * How a run ended (TJ-RUNSEM-001): the `outcome` of its first `run.end`, or `incomplete` when the file has none. An
 * outcome v1 does not know is carried unchanged (TJ-COMPAT-010), hence the open `string`.
 */
export type RunOutcome = 'completed' | 'cancelled' | 'error' | 'incomplete' | (string & {});

/** One model invocation of a run: the `llm.request` and `llm.response` of one `seq` (TJ-RUNSEM-003). */
export interface LlmCall {
  /** The invocation number shared by request and response; it may count across a session (TJ-RUNSEM-009). */
  readonly seq: number;
  /** The first `llm.request` with this `seq`; absent when only a response was written. */
  readonly request?: RunLlmRequest;
  /** The first `llm.response` with this `seq`; absent when the call never got one (or the run was cut off). */
  readonly response?: RunLlmResponse;
}

/** What one run file says about its run (spec §7, §16). */
export interface DerivedRun {
  /** The run id: the header's, or without a header the first run record's (TJ-FAM-019); absent for an empty file. */
  readonly runId: string | undefined;
  /** The header's `session_id`, else the first `run.start`'s. */
  readonly sessionId: string | undefined;
  /** The header, when the file's first accepted run record is one (TJ-RUN-005); unknown members are kept. */
  readonly header: RunHeader | undefined;
  /**
   * The header's `schema_version` when it is an integer other than 1 (TJ-COMPAT-012). The whole file was then skipped:
   * the outcome is `incomplete` because no `run.end` was read, and nothing else was derived.
   */
  readonly unsupportedVersion: number | undefined;
  /** The outcome of the first `run.end`, or `incomplete` without one (TJ-RUNSEM-001). */
  readonly outcome: RunOutcome;
  /** The `final` answer of the first `run.end`, when it has one. */
  readonly final: string | undefined;
  /** The `status` of the last `run.status` before the end; unknown statuses are kept as written (TJ-COMPAT-010). */
  readonly lastStatus: string | undefined;
  /** Every model invocation, in the file order of its first record. */
  readonly llmCalls: readonly LlmCall[];
  /** The number of `agent.event` records derived (regressions included: they are reported, not dropped). */
  readonly agentEventCount: number;
  /** Derivation findings in file order (by byte offset): header, run id, end, pairing and order anomalies. */
  readonly findings: readonly Finding[];
}

interface Where {
  readonly file: string;
  readonly line: number;
  readonly offset: number;
}

interface CallAccumulator {
  readonly seq: number;
  request?: RunLlmRequest;
  response?: RunLlmResponse;
  /** Every `llm.request` with this seq, in file order, with its ordinal among all requests of the file. */
  readonly requests: { readonly where: Where; readonly ordinal: number }[];
  readonly responses: Where[];
}

/**
 * The fold of one run file (spec §7, §16). Feed the file's records in file order with {@link RunFold.add}, then call
 * {@link RunFold.finish}. Framing and schema findings (`invalid_record`, `unknown_record`, …) are the framing layer's;
 * this fold adds the run-level ones:
 *
 * - `missing_header` when the first accepted run record is not a `header` (TJ-RUN-005). An invalid header is not
 *   accepted, so a file whose header fails its schema also gets `missing_header` at its next record. A `header` later
 *   in the file (which TJ-RUN-004 forbids writers to write) does not govern anything and is otherwise ignored.
 * - `unsupported_version` once, at the header, when its `schema_version` is an unsupported integer; every record of
 *   the file is then skipped (TJ-COMPAT-012).
 * - `run_id_mismatch` for a record naming another run than the file's (TJ-FAM-019); the record is still derived.
 * - `record_after_run_end` for each accepted record after the first `run.end` (TJ-RUNSEM-002). Such records are
 *   ignored for every derivation, not only the outcome: the run had ended. Extension records (`x.<org>.<name>`) are
 *   ignored silently there as everywhere (TJ-COMPAT-006).
 * - `seq_duplicate` for a second `llm.request` of one `seq` (TJ-RUNSEM-006). Pairing is one to one by `seq`
 *   (TJ-RUNSEM-003) whatever the order of request and response in the file: of n requests and m responses of one `seq`,
 *   min(n, m) pair; the surplus requests are `unpaired_llm_request` (TJ-RUNSEM-004), except the file's last
 *   `llm.request` when there is no `run.end`, and the surplus responses are `unpaired_llm_response` (TJ-RUNSEM-005).
 * - `agent_event_seq_regression` for an `agent.event` whose `seq` is not greater than the immediately previous
 *   `agent.event`'s (TJ-RUNSEM-007): "previous" is read literally, so one stray high `seq` is reported once rather than
 *   flagging every event after it. Gaps are never reported (TJ-RUNSEM-008).
 * - `mixed_families` once, at the first record of another family, which is then ignored (TJ-FAM-006, TJ-FAM-007,
 *   TJ-FAM-009): whoever feeds this fold has decided the file is a run file.
 *
 * Unknown `run.status` and `run.end.outcome` values are accepted and carried unchanged (TJ-COMPAT-009, TJ-COMPAT-010).
 * Memory follows the derived state: the header, the end, the llm records kept in {@link DerivedRun.llmCalls}, and a
 * location per llm record.
 */
export class RunFold {
  readonly #findings: Finding[] = [];
  readonly #calls = new Map<number, CallAccumulator>();
  #runId: string | undefined;
  #sessionId: string | undefined;
  #header: RunHeader | undefined;
  #unsupportedVersion: number | undefined;
  #started = false;
  #ended = false;
  #outcome: RunOutcome = 'incomplete';
  #final: string | undefined;
  #lastStatus: string | undefined;
  #agentEventCount = 0;
  #previousAgentSeq: number | undefined;
  #requestCount = 0;
  #mixedReported = false;

  /** Adds the next record of the file, in file order; records of other families, invalid or extension records are ignored. */
  add(record: JournalRecord, source: RunRecordSource): void {
    if (this.#unsupportedVersion !== undefined) return;
    const { validation, value } = record;
    const classification = validation.classification;
    const where: Where = { file: source.file, line: record.line, offset: record.offset };
    if (classification.family === 'none' || classification.family === 'unknown') return;
    if (classification.family !== 'run') {
      if (!this.#mixedReported) {
        this.#mixedReported = true;
        this.#report(
          'mixed_families',
          `a ${classification.family} record in a run file; it and any later record of another family are ignored`,
          where,
        );
      }
      return;
    }
    const type = classification.type;
    if (validation.status === 'unsupported_version') {
      // Only a header carries a version in the run family. A later one is skipped on its own (TJ-COMPAT-011), which
      // the framing layer reports.
      if (this.#started || type !== 'header') return;
      this.#unsupportedVersion = validation.version;
      if (typeof value.run_id === 'string') this.#runId = value.run_id;
      this.#report(
        'unsupported_version',
        `the run header declares schema_version ${validation.version}; every record of the file is skipped`,
        where,
      );
      return;
    }
    if (validation.status !== 'valid' && validation.status !== 'unknown') return;
    const runId = value.run_id as string;

    if (!this.#started) {
      this.#started = true;
      this.#runId = runId;
      if (type === 'header') {
        this.#header = value as RunHeader;
        if (typeof value.session_id === 'string') this.#sessionId = value.session_id;
        return;
      }
      this.#report(
        'missing_header',
        `the first record is "${type}", not a header; the file is read as version 1`,
        where,
      );
    }
    if (this.#ended) {
      this.#report('record_after_run_end', `"${type}" follows the run's first run.end; ignored`, where);
      return;
    }
    if (runId !== this.#runId) {
      this.#report(
        'run_id_mismatch',
        `"${type}" names run ${JSON.stringify(runId)}, not the file's run ${JSON.stringify(this.#runId)}`,
        where,
      );
    }
    if (validation.status === 'valid') this.#derive(type, value, where);
  }

  /** Derives the run from the records added and returns it with the derivation findings. */
  finish(): DerivedRun {
    const findings = [...this.#findings];
    const llmCalls: LlmCall[] = [];
    const lastRequest = this.#requestCount - 1;
    for (const call of this.#calls.values()) {
      llmCalls.push({
        seq: call.seq,
        ...(call.request === undefined ? {} : { request: call.request }),
        ...(call.response === undefined ? {} : { response: call.response }),
      });
      for (const request of call.requests.slice(call.responses.length)) {
        // A run cut off mid-call leaves its last request unanswered; that is no anomaly (TJ-RUNSEM-004).
        if (!this.#ended && request.ordinal === lastRequest) continue;
        findings.push(
          this.#finding(
            'unpaired_llm_request',
            `llm.request seq ${call.seq} has no matching llm.response`,
            request.where,
          ),
        );
      }
      for (const response of call.responses.slice(call.requests.length)) {
        findings.push(
          this.#finding('unpaired_llm_response', `llm.response seq ${call.seq} has no matching llm.request`, response),
        );
      }
    }
    // Array.prototype.sort is stable, so findings of one record keep the order they were made in.
    findings.sort((x, y) => (x.offset ?? Number.POSITIVE_INFINITY) - (y.offset ?? Number.POSITIVE_INFINITY));
    return {
      runId: this.#runId,
      sessionId: this.#sessionId,
      header: this.#header,
      unsupportedVersion: this.#unsupportedVersion,
      outcome: this.#outcome,
      final: this.#final,
      lastStatus: this.#lastStatus,
      llmCalls,
      agentEventCount: this.#agentEventCount,
      findings,
    };
  }

  #derive(type: string, value: Record<string, unknown>, where: Where): void {
    switch (type) {
      case 'run.start':
        if (this.#sessionId === undefined && typeof value.session_id === 'string') this.#sessionId = value.session_id;
        return;
      case 'run.status':
        this.#lastStatus = value.status as string;
        return;
      case 'run.end':
        this.#ended = true;
        this.#outcome = value.outcome as string;
        if (typeof value.final === 'string') this.#final = value.final;
        return;
      case 'agent.event':
        this.#agentEvent(value.seq as number, where);
        return;
      case 'llm.request':
        this.#request(value as RunLlmRequest, where);
        return;
      case 'llm.response':
        this.#response(value as RunLlmResponse, where);
        return;
      default:
        // header (repeated), run.context, tool.output, run.error: nothing in DerivedRun depends on them.
        return;
    }
  }

  #agentEvent(seq: number, where: Where): void {
    this.#agentEventCount += 1;
    const previous = this.#previousAgentSeq;
    if (previous !== undefined && seq <= previous) {
      this.#report(
        'agent_event_seq_regression',
        `agent.event seq ${seq} is not greater than the previous agent.event seq ${previous}`,
        where,
      );
    }
    this.#previousAgentSeq = seq;
  }

  #request(request: RunLlmRequest, where: Where): void {
    const call = this.#call(request.seq);
    if (call.requests.length > 0) {
      this.#report('seq_duplicate', `a second llm.request with seq ${request.seq}; the first one is kept`, where);
    } else {
      call.request = request;
    }
    call.requests.push({ where, ordinal: this.#requestCount });
    this.#requestCount += 1;
  }

  #response(response: RunLlmResponse, where: Where): void {
    const call = this.#call(response.seq);
    if (call.response === undefined) call.response = response;
    call.responses.push(where);
  }

  #call(seq: number): CallAccumulator {
    let call = this.#calls.get(seq);
    if (call === undefined) {
      call = { seq, requests: [], responses: [] };
      this.#calls.set(seq, call);
    }
    return call;
  }

  #finding(code: FindingCode, message: string, where: Where): Finding {
    const location: FindingLocation = { ...where, ...(this.#runId === undefined ? {} : { run_id: this.#runId }) };
    return makeFinding(code, message, location);
  }

  #report(code: FindingCode, message: string, where: Where): void {
    this.#findings.push(this.#finding(code, message, where));
  }
}
