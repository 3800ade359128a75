/** Stable codes of {@link ClientError}: the server's refusal codes (`run_active`, …) or the client's own. */
export type ClientErrorCode = string;

/** A refusal the server answered (its stable `code`), or the client's own `client_closed`. */
export class ClientError extends Error {
  /** The stable code: the server's `LiveError` or transport code, or `client_closed`. */
  readonly code: ClientErrorCode;
  /** The request id the refusal answers, when it answers one. */
  readonly requestId: string | undefined;

  /**
   * @param code the stable code
   * @param message what was refused
   * @param requestId the request it answers
   */
  constructor(code: ClientErrorCode, message: string, requestId?: string) {
    super(message);
    this.name = 'ClientError';
    this.code = code;
    this.requestId = requestId;
  }
}
