/**
 * How a call ended, as text a test can compare: `ok` for an answer, `rejected: <code>` for a rejection (the error's
 * `code`, as the writers' errors carry one).
 */
export function outcomeOf(promise: Promise<unknown>): Promise<string> {
  return promise.then(
    () => 'ok',
    (error: { code?: string }) => `rejected: ${error?.code}`,
  );
}

/**
 * The outcomes of `calls` in order, or `still waiting after <ms> ms` when they have not all ended by then: a hang
 * then fails the test's expectation with a message, not its timeout.
 */
export function allWithin(calls: readonly Promise<string>[], ms = 3000): Promise<string[] | string> {
  const timeout = new Promise<string>((resolve) =>
    setTimeout(() => resolve(`still waiting after ${ms} ms`), ms).unref(),
  );
  return Promise.race([Promise.all(calls), timeout]);
}
