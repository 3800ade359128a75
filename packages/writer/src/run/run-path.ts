import { join } from 'node:path';
import { storePathSegments } from '@turnjournal/reader/store-format';
import { WriterError } from '../errors.js';
import { requireIdentifier } from '../require-identifier.js';

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** A timestamp as the run writer writes it: RFC 3339 in UTC, and the UTC calendar date that places the run file. */
export interface UtcTimestamp {
  /** The same instant in UTC, `YYYY-MM-DDTHH:MM:SS[.fraction]Z`; the fraction is kept digit for digit. */
  readonly text: string;
  /** UTC year, four digits. */
  readonly year: string;
  /** UTC month, two digits. */
  readonly month: string;
  /** UTC day of month, two digits. */
  readonly day: string;
}

const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31] as const;

function daysInMonth(year: number, month: number): number {
  return month === 2 && isLeap(year) ? 29 : (DAYS_IN_MONTH[month - 1] ?? 0);
}

function isLeap(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/**
 * Parses an RFC 3339 timestamp (any offset, any number of fraction digits) or a `Date`, and returns the same instant
 * in UTC (TJ-FAM-021) with its UTC date. The date of a run's `started_at` decides the directory of the run file
 * (spec §4.4: `sessions/YYYY/MM/DD` in UTC), so `2026-02-03T23:30:00-05:00` is written as `2026-02-04T04:30:00Z` and
 * filed under `2026/02/04`. The fraction is copied, not rounded to milliseconds, so no precision is lost. Anything
 * else (a free-form date, an out-of-range field, a year outside 0000–9999 after conversion) is rejected with
 * `invalid_record`: the writer must know the UTC date to place the file, and it does not guess.
 */
export function toUtcTimestamp(value: string | Date, what = 'timestamp'): UtcTimestamp {
  if (value instanceof Date) {
    const ms = value.getTime();
    if (!Number.isFinite(ms)) throw new WriterError('invalid_record', `the ${what} is an invalid Date`);
    return fromInstant(ms, undefined, what, String(value));
  }
  const match = typeof value === 'string' ? RFC3339.exec(value) : null;
  if (match === null)
    throw new WriterError(
      'invalid_record',
      `the ${what} ${JSON.stringify(String(value)).slice(0, 80)} is not an RFC 3339 timestamp (e.g. 2026-02-03T12:34:56.789Z)`,
    );
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offsetSign = match[9] === '-' ? -1 : 1;
  const offsetHours = match[8] === undefined ? Number(match[10]) : 0;
  const offsetMinutes = match[8] === undefined ? Number(match[11]) : 0;
  if (
    month < 1 ||
    month > 12 ||
    day < 1 ||
    day > daysInMonth(year, month) ||
    hour > 23 ||
    minute > 59 ||
    second > 60 ||
    offsetHours > 23 ||
    offsetMinutes > 59
  )
    throw new WriterError('invalid_record', `the ${what} ${JSON.stringify(value)} has a field out of range`);
  const base = new Date(0);
  base.setUTCFullYear(year, month - 1, day);
  // A leap second (":60") is the last second of the minute once more: it is filed under the minute's date.
  base.setUTCHours(hour, minute, Math.min(second, 59), 0);
  const ms = base.getTime() - offsetSign * (offsetHours * 60 + offsetMinutes) * 60_000;
  return fromInstant(ms, { fraction: match[7] ?? '', leap: second === 60 }, what, value);
}

function fromInstant(
  ms: number,
  exact: { fraction: string; leap: boolean } | undefined,
  what: string,
  shown: string,
): UtcTimestamp {
  const date = new Date(ms);
  const year = date.getUTCFullYear();
  if (year < 0 || year > 9999)
    throw new WriterError('invalid_record', `the ${what} ${JSON.stringify(shown)} is outside the years 0000-9999`);
  const iso = date.toISOString();
  // toISOString gives YYYY-MM-DDTHH:MM:SS.sssZ for years 0000-9999.
  const seconds = exact?.leap === true ? `${iso.slice(0, 17)}60` : iso.slice(0, 19);
  const text = exact === undefined ? iso : `${seconds}${exact.fraction}Z`;
  return { text, year: iso.slice(0, 4), month: iso.slice(5, 7), day: iso.slice(8, 10) };
}

/**
 * The recommended path of a run file (spec §4.4): `<root>/sessions/YYYY/MM/DD/<runId>.jsonl`, where `YYYY/MM/DD` is
 * the UTC date of `startedAt` (see `toUtcTimestamp`). The run id is checked before the path is built
 * (TJ-FAM-010).
 */
export function runFilePath(root: string, runId: string, startedAt: string | Date): string {
  requireIdentifier(runId, 'run id');
  const { year, month, day } = toUtcTimestamp(startedAt, 'started_at');
  return join(root, ...storePathSegments({ family: 'run', runId, date: { year, month, day } }));
}
