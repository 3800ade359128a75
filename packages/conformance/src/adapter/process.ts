import { AsyncLocalStorage } from 'node:async_hooks';
import { type ChildProcess, spawn } from 'node:child_process';
import { Compile } from 'typebox/compile';
import { processGroupMembers } from './process-group.js';
import { type AdapterOp, AdapterResponse, RESULT_SCHEMAS } from './protocol.js';

/**
 * Default time an adapter has to answer one request: generous, so that a loaded machine (a CI runner with two busy
 * cores) is not taken for a hang; `--timeout-scale` multiplies it (TJ-CONF-029, TJ-CONF-044).
 */
export const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;

/**
 * Counts the requests left unanswered within their time limit by whatever runs inside `run` (a check's body), through
 * the async context the request was made in: a check whose count rose timed out, which the report says apart from a
 * wrong answer (TJ-CONF-044). Runs of the kit side by side in one process (test suites) do not count each other's.
 */
export const requestTimeouts = new AsyncLocalStorage<{ count: number }>();

/** Kinds of protocol failure the client distinguishes. */
export type AdapterFailureKind = 'protocol' | 'timeout' | 'exited' | 'error_response';

/**
 * A request the adapter did not answer as the protocol says: garbage or a malformed line on stdout (TJ-CONF-012), a
 * timeout, an exit mid-request (TJ-CONF-015), or an error response. The message names the request and shows the
 * offending line, truncated, and the last lines of stderr.
 */
export class AdapterFailure extends Error {
  /** What went wrong. */
  readonly kind: AdapterFailureKind;
  /** For `error_response`: the adapter's error code. */
  readonly code: string | undefined;

  constructor(kind: AdapterFailureKind, message: string, code?: string) {
    super(message);
    this.name = 'AdapterFailure';
    this.kind = kind;
    this.code = code;
  }
}

/** Options of {@link AdapterProcess.spawn}. */
export interface AdapterProcessOptions {
  /** Per-request timeout in milliseconds (default 30,000). */
  readonly timeoutMs?: number;
  /** Wrap the command, e.g. `['strace', '-f', '-o', 'trace', '--']`; the command runs as `sh -c <command>` after it. */
  readonly wrapper?: readonly string[];
  /** Lines of stderr kept for failure messages (default 20). */
  readonly stderrLines?: number;
}

interface Waiting {
  readonly op: string;
  readonly resolve: (result: Record<string, unknown>) => void;
  readonly reject: (error: AdapterFailure) => void;
  readonly timer: NodeJS.Timeout;
}

const responseValidator = Compile(AdapterResponse);
const resultValidators = Object.fromEntries(
  Object.entries(RESULT_SCHEMAS).map(([op, schema]) => [op, Compile(schema)]),
) as Record<AdapterOp, ReturnType<typeof Compile>>;

/** Shortens a line for a failure message. */
export function truncate(text: string, max = 200): string {
  return text.length <= max ? text : `${text.slice(0, max)}… (${text.length} chars)`;
}

/**
 * The harness side of one adapter process (spec/v1/adapter.md): spawns `sh -c <command>`, frames stdout into lines,
 * correlates responses by id (they may arrive in any order), validates each against the protocol schemas, and never
 * hangs: every request has a timeout and an exit fails every pending request.
 */
export class AdapterProcess {
  /** The command as given. */
  readonly command: string;
  readonly #child: ChildProcess;
  readonly #timeoutMs: number;
  readonly #waiting = new Map<number, Waiting>();
  readonly #stderr: string[] = [];
  readonly #stderrLines: number;
  #nextId = 1;
  #lastId = 0;
  #buffer = '';
  #exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  #exited: Promise<void>;
  #violation: AdapterFailure | null = null;
  #stderrPartial = '';

  private constructor(command: string, options: AdapterProcessOptions) {
    this.command = command;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.#stderrLines = options.stderrLines ?? 20;
    const [file, ...args] = [...(options.wrapper ?? []), 'sh', '-c', command];
    // Its own process group, so a kill reaches the adapter behind `sh -c` (and behind a wrapper), not only the shell.
    this.#child = spawn(file as string, args, { stdio: ['pipe', 'pipe', 'pipe'], detached: true });
    this.#exited = new Promise((resolve) => {
      this.#child.on('exit', (code, signal) => {
        this.#exit = { code, signal };
        // Let stdout drain the last responses before failing what is still pending; an orphaned grandchild may hold
        // the pipe open, so wait for its end only briefly.
        const stdout = this.#child.stdout;
        const drained =
          stdout === null || stdout.readableEnded
            ? Promise.resolve()
            : Promise.race([new Promise<void>((done) => stdout.once('end', () => done())), delay(200)]);
        void drained.then(() => {
          this.#failAll(new AdapterFailure('exited', `adapter exited (${signal ?? `code ${code}`}) before answering`));
          resolve();
        });
      });
      this.#child.on('error', (error) => {
        this.#exit ??= { code: null, signal: null };
        this.#failAll(new AdapterFailure('exited', `cannot start the adapter: ${error.message}`));
        resolve();
      });
    });
    this.#child.stdout?.setEncoding('utf8');
    this.#child.stdout?.on('data', (chunk: string) => this.#onStdout(chunk));
    this.#child.stderr?.setEncoding('utf8');
    this.#child.stderr?.on('data', (chunk: string) => this.#onStderr(chunk));
    this.#child.stdin?.on('error', () => undefined);
  }

  /** Starts the adapter command with `sh -c`. */
  static spawn(command: string, options: AdapterProcessOptions = {}): AdapterProcess {
    return new AdapterProcess(command, options);
  }

  /** The process id (of the wrapper when one is used). */
  get pid(): number | undefined {
    return this.#child.pid;
  }

  /** The id of the last request sent, so a caller can match it with what the adapter did (the strace check). */
  get lastRequestId(): number {
    return this.#lastId;
  }

  /** False once the process has exited or broke the protocol: a new session is needed. */
  get usable(): boolean {
    return this.#exit === null && this.#violation === null;
  }

  /** The exit status once the process has exited. */
  get exitStatus(): { code: number | null; signal: NodeJS.Signals | null } | null {
    return this.#exit;
  }

  /** The last lines the adapter wrote to stderr. */
  stderrTail(): string[] {
    return this.#stderrPartial === '' ? [...this.#stderr] : [...this.#stderr, this.#stderrPartial];
  }

  /**
   * Sends a request and resolves with its result; rejects with an {@link AdapterFailure}. Several requests may be
   * in flight (pipelining); `onSent` is not needed because writes are queued in order by the stream.
   */
  request(op: AdapterOp | string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = this.#nextId++;
    this.#lastId = id;
    if (this.#violation !== null) return Promise.reject(this.#violation);
    if (this.#exit !== null)
      return Promise.reject(this.#failure('exited', `${op} (id ${id}): the adapter has already exited`));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(id);
        const scope = requestTimeouts.getStore();
        if (scope !== undefined) scope.count++;
        const failure = this.#failure(
          'timeout',
          `${op} (id ${id}): timed out: no response within ${this.#timeoutMs} ms`,
        );
        // A late answer would no longer match a pending request: the session is broken, like after a violation.
        this.#violation ??= failure;
        reject(failure);
      }, this.#timeoutMs);
      this.#waiting.set(id, { op, resolve, reject, timer });
      this.#child.stdin?.write(`${JSON.stringify({ id, op, ...params })}\n`);
    });
  }

  /**
   * Sends a request like {@link request} and resolves, once it is answered, with its result and its id: a trace of the
   * adapter (strace) shows the answer as a write of `"id":<id>`.
   */
  async requestWithId(
    op: AdapterOp | string,
    params: Record<string, unknown> = {},
  ): Promise<{ id: number; result: Record<string, unknown> }> {
    const pending = this.request(op, params);
    const id = this.#lastId;
    return { id, result: await pending };
  }

  /** Sends `stop` and waits for the exit (killing the process if it does not exit in time); returns the exit code. */
  async stop(): Promise<number | null> {
    try {
      await this.request('stop');
      this.#child.stdin?.end();
    } finally {
      await this.#waitExit(this.#timeoutMs);
    }
    return this.#exit?.code ?? null;
  }

  /** Kills the process (SIGKILL by default) and waits for its exit. */
  async kill(signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
    const pid = this.#child.pid;
    // Kill the members under the group leader first, so that their parent (the shell) reaps them: an orphan lives on
    // as a zombie until init reaps it, and a writer's lock check takes a zombie holder for a live one.
    if (this.#exit === null && pid !== undefined && signal === 'SIGKILL') {
      const members = processGroupMembers(pid).filter((member) => member !== pid);
      for (const member of members) {
        try {
          process.kill(member, signal);
        } catch (error) {
          // ESRCH: the member ended since the listing.
          if (errnoOf(error) !== 'ESRCH') throw error;
        }
      }
      if (members.length > 0) await Promise.race([this.#exited, delay(2000)]);
    }
    if (this.#exit === null && pid !== undefined) {
      try {
        process.kill(-pid, signal);
      } catch (error) {
        // ESRCH: no group left to signal (the leader only); EPERM: not ours to signal. The child itself still is.
        const code = errnoOf(error);
        if (code !== 'ESRCH' && code !== 'EPERM') throw error;
        this.#child.kill(signal);
      }
    }
    await this.#exited;
    if (pid !== undefined && signal === 'SIGKILL') await waitGroupGone(pid);
  }

  /** Ends the session however it stands: kills the process if it is still running. Never throws. */
  async dispose(): Promise<void> {
    this.#child.stdin?.end();
    await this.kill().catch(() => undefined);
  }

  async #waitExit(ms: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([
      this.#exited.then(() => false),
      new Promise<boolean>((resolve) => {
        timer = setTimeout(() => resolve(true), ms);
      }),
    ]);
    clearTimeout(timer);
    if (timedOut) await this.kill();
  }

  #onStderr(chunk: string): void {
    const parts = (this.#stderrPartial + chunk).split('\n');
    this.#stderrPartial = (parts.pop() ?? '').slice(-2000);
    for (const line of parts) this.#stderr.push(line.slice(0, 2000));
    if (this.#stderr.length > this.#stderrLines) this.#stderr.splice(0, this.#stderr.length - this.#stderrLines);
  }

  #onStdout(chunk: string): void {
    this.#buffer += chunk;
    let at = this.#buffer.indexOf('\n');
    while (at >= 0) {
      const line = this.#buffer.slice(0, at);
      this.#buffer = this.#buffer.slice(at + 1);
      this.#onLine(line);
      at = this.#buffer.indexOf('\n');
    }
    if (this.#buffer.length > 64 * 1024 * 1024)
      this.#violate(`a stdout line longer than 64 MiB without LF: ${truncate(this.#buffer)}`);
  }

  #onLine(line: string): void {
    if (this.#violation !== null) return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      this.#violate(`stdout line is not JSON: ${JSON.stringify(truncate(line))}`);
      return;
    }
    if (!responseValidator.Check(message)) {
      const errors = responseValidator
        .Errors(message)
        .slice(0, 3)
        .map((e) => `${e.instancePath || '(root)'} ${e.message}`);
      this.#violate(`stdout line is not a response (${errors.join('; ')}): ${JSON.stringify(truncate(line))}`);
      return;
    }
    const response = message as AdapterResponse;
    const waiting = this.#waiting.get(response.id);
    if (waiting === undefined) {
      this.#violate(`response with id ${response.id} answers no pending request: ${JSON.stringify(truncate(line))}`);
      return;
    }
    this.#waiting.delete(response.id);
    clearTimeout(waiting.timer);
    if (!response.ok) {
      waiting.reject(
        new AdapterFailure(
          'error_response',
          `${waiting.op} (id ${response.id}): ${response.error.code}: ${response.error.message}`,
          response.error.code,
        ),
      );
      return;
    }
    const validator = resultValidators[waiting.op as AdapterOp] as (typeof resultValidators)[AdapterOp] | undefined;
    if (validator !== undefined && !validator.Check(response.result)) {
      const errors = validator
        .Errors(response.result)
        .slice(0, 3)
        .map((e) => `${e.instancePath || '(root)'} ${e.message}`);
      waiting.reject(
        this.#failure(
          'protocol',
          `${waiting.op} (id ${response.id}): result breaks the protocol schema (${errors.join('; ')}): ${JSON.stringify(truncate(line))}`,
        ),
      );
      return;
    }
    waiting.resolve(response.result);
  }

  // A line that is not a response breaks the session (TJ-CONF-012): every pending and later request fails with it.
  #violate(what: string): void {
    this.#violation = this.#failure('protocol', `protocol violation (TJ-CONF-012): ${what}`);
    this.#failAll(this.#violation);
  }

  #failAll(failure: AdapterFailure): void {
    for (const [id, waiting] of this.#waiting) {
      clearTimeout(waiting.timer);
      this.#waiting.delete(id);
      waiting.reject(
        failure.kind === 'exited' ? this.#failure('exited', `${waiting.op} (id ${id}): ${failure.message}`) : failure,
      );
    }
  }

  #failure(kind: AdapterFailureKind, message: string): AdapterFailure {
    const tail = this.stderrTail().slice(-5);
    return new AdapterFailure(kind, tail.length === 0 ? message : `${message}\n  stderr: ${tail.join('\n  stderr: ')}`);
  }
}

/**
 * Waits (up to 5 s) until no process of the group is left, reaped included: the shell exits first, and the adapter
 * behind it, orphaned, lives on as a zombie until init reaps it; a writer's lock check sees it alive until then.
 */
function errnoOf(error: unknown): string | undefined {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function waitGroupGone(pgid: number): Promise<void> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    try {
      process.kill(-pgid, 0);
    } catch (error) {
      // ESRCH: the group is gone; EPERM: the id now names a group of another user's, so ours is gone too.
      const code = errnoOf(error);
      if (code === 'ESRCH' || code === 'EPERM') return;
      throw error;
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
