/** Stable codes of {@link LiveError}. */
export type LiveErrorCode =
  | 'invalid_request'
  | 'run_active'
  | 'run_not_active'
  | 'unknown_run'
  | 'run_not_finished'
  | 'ack_before_finish'
  | 'ack_beyond_log'
  | 'session_closed'
  | 'session_failed'
  | 'request_id_conflict'
  | 'reserved_session_id'
  /**
   * The hub has `maxOpenSessions` sessions open and every one is busy (a run or a subscriber): the open is refused
   * until one is idle (TJ-LIVE-065).
   */
  | 'too_many_sessions'
  /** The session is served here as a follower: another process owns it and writes its records (TJ-LIVE-043). */
  | 'not_owner';

/** A refusal of the live layer, with a stable `code`; errors of the journals pass through as `WriterError`s. */
export class LiveError extends Error {
  /** The stable code. */
  readonly code: LiveErrorCode;

  /**
   * @param code the stable code
   * @param message what was refused and why
   * @param options the underlying cause, if any
   */
  constructor(code: LiveErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'LiveError';
    this.code = code;
  }
}
