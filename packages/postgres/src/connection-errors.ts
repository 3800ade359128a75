/**
 * True for the failures that mean the connection is gone or unusable, not that a statement was wrong: Node's socket
 * errors, node-postgres's own ("Connection terminated…", "Client has encountered a connection error…"), and the
 * server's SQLSTATE classes 08 (connection exception) and 57P (the server is shutting down or killed the backend).
 */
export function isConnectionLoss(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string') {
    if (/^(ECONNREFUSED|ECONNRESET|EPIPE|ENOENT|ETIMEDOUT|EHOSTUNREACH|ENOTCONN)$/.test(code)) return true;
    if (code.startsWith('08') || code.startsWith('57P')) return true;
  }
  const message = error instanceof Error ? error.message : '';
  return /Connection terminated|connection error|not queryable|Client was closed/i.test(message);
}

/**
 * Reports a failure of a clean-up (ending a connection) that no caller waits for: a lost connection is what such a
 * clean-up expects and is not reported; anything else is, as a process warning.
 */
export function reportCleanupFailure(what: string): (error: unknown) => void {
  return (error) => {
    if (isConnectionLoss(error)) return;
    process.emitWarning(
      `turnjournal postgres: ${what} failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  };
}
