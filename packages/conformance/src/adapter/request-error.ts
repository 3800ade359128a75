import type { AdapterErrorCode } from './protocol.js';

/**
 * Thrown by an adapter's implementation to answer a request with a protocol error code (adapter.md §3): `refused` for
 * a lifecycle or live operation a rule of the spec forbids (TJ-CONF-040), `bad_request` for a request it cannot take,
 * `journal_locked` when another live writer holds the file. `runAdapter` answers `failed` for any other error.
 */
export class AdapterRequestError extends Error {
  /** The protocol error code the adapter answers with. */
  readonly code: AdapterErrorCode;

  /**
   * @param code the protocol error code.
   * @param message the error response's message.
   */
  constructor(code: AdapterErrorCode, message: string) {
    super(message);
    this.name = 'AdapterRequestError';
    this.code = code;
  }
}

/**
 * Runs `call`; an error that `isRefusal` recognises (a rule of the spec forbids what was asked) is answered `refused`
 * (TJ-CONF-040) instead of `failed`.
 */
export async function refusingWhen<T>(isRefusal: (error: unknown) => boolean, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isRefusal(error)) throw new AdapterRequestError('refused', (error as Error).message);
    throw error;
  }
}
