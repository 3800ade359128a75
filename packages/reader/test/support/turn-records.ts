/**
 * A turn record of session `sessionId` for the fold tests: `submitted` gets a user message (`hello <turn id>`, then
 * `padding` characters, so a test can make excerpts matter), `interrupted` a reason; `extra` members come last.
 */
export function turnRecord(
  sessionId: string,
  event: string,
  turnId: string,
  extra: Record<string, unknown> = {},
  padding = 0,
): Record<string, unknown> {
  return {
    version: 1,
    event,
    turn_id: turnId,
    session_id: sessionId,
    created_at: 1,
    ...(event === 'submitted'
      ? { role: 'user', content: `hello ${turnId}${padding > 0 ? ` ${'x'.repeat(padding)}` : ''}` }
      : {}),
    ...(event === 'interrupted' ? { reason: 'cancelled' } : {}),
    ...extra,
  };
}
