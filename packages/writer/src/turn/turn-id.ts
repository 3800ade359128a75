import { randomBytes } from 'node:crypto';

/**
 * A new turn id of the recommended form `YYYYMMDDTHHMMSSZ-<12 lowercase hex digits>` (TJ-TURN-004): it sorts by
 * creation time, is a valid identifier, and 48 random bits make a collision within a session and second negligible.
 */
export function newTurnId(nowMs: number = Date.now()): string {
  const stamp = new Date(nowMs)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
  return `${stamp}-${randomBytes(6).toString('hex')}`;
}
