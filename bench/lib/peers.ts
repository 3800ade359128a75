/**
 * Peers (issue 14): what a team would otherwise persist chat turns with, measured in the same run on the same disk as
 * the subject. SQLite in WAL mode with `synchronous=FULL` through better-sqlite3 (an optional root dependency whose
 * native build is opt-in: `pnpm bench:peers`), and a hermes-style Python writer (`flock` + `write` + `fsync` per
 * record, `bench/peers/hermes_peer.py`). A peer that cannot run makes its rows say "peer unavailable", never fails the
 * run.
 */
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The parts of better-sqlite3's API the figures use. */
export interface SqliteStatement {
  run(...params: unknown[]): unknown;
  get(...params: unknown[]): unknown;
}
export interface SqliteDatabase {
  pragma(source: string, options?: { simple?: boolean }): unknown;
  exec(source: string): void;
  prepare(source: string): SqliteStatement;
  close(): void;
}
type SqliteConstructor = new (file: string) => SqliteDatabase;

/** A loaded peer, or why it is not there. */
export type Peer<T> =
  | { readonly ok: true; readonly value: T; readonly version: string }
  | { readonly ok: false; readonly reason: string };

const root = fileURLToPath(new URL('../..', import.meta.url));

let sqlite: Peer<SqliteConstructor> | undefined;

/** better-sqlite3, when installed and built. */
export function loadSqlite(): Peer<SqliteConstructor> {
  if (sqlite !== undefined) return sqlite;
  try {
    const require = createRequire(join(root, 'package.json'));
    const Database = require('better-sqlite3') as SqliteConstructor;
    const probe = new Database(':memory:');
    const version = String((probe.prepare('select sqlite_version() as v').get() as { v: string }).v);
    probe.close();
    sqlite = { ok: true, value: Database, version: `SQLite ${version}` };
  } catch (error) {
    const message = error instanceof Error ? error.message.split('\n')[0] : String(error);
    sqlite = {
      ok: false,
      reason: `peer unavailable: better-sqlite3 is not built (run \`npx pnpm@10.34.8 bench:peers\`): ${message}`,
    };
  }
  return sqlite;
}

/**
 * Opens a SQLite database as the durable peer: WAL journal, `synchronous=FULL` (every commit fsyncs the WAL), a table
 * of lines; returns the statement that inserts one line, each call its own transaction (autocommit).
 */
export function openSqlitePeer(
  Database: SqliteConstructor,
  file: string,
): { db: SqliteDatabase; insert: SqliteStatement } {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.exec('CREATE TABLE IF NOT EXISTS records (session TEXT NOT NULL, line TEXT NOT NULL)');
  return { db, insert: db.prepare('INSERT INTO records (session, line) VALUES (?, ?)') };
}

/** The hermes-style Python peer's answer (see `bench/peers/hermes_peer.py`). */
export interface PythonPeerResult {
  readonly python: string;
  /** `latency`: per-record milliseconds of the peer and of its own raw write + fdatasync floor, alternated. */
  readonly peerMs?: number[];
  readonly floorMs?: number[];
  /** `sessions`: wall time of each round of 64 threads. */
  readonly roundsMs?: number[];
}

/** Runs the Python peer in a child process; a missing `python3` or a failure is reported, not thrown. */
export function runPythonPeer(args: readonly string[]): Peer<PythonPeerResult> {
  const script = join(root, 'bench', 'peers', 'hermes_peer.py');
  const child = spawnSync('python3', [script, ...args], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (child.error !== undefined) return { ok: false, reason: `peer unavailable: python3: ${child.error.message}` };
  if (child.status !== 0)
    return {
      ok: false,
      reason: `peer unavailable: python peer exited ${child.status}: ${child.stderr.trim().slice(0, 200)}`,
    };
  const value = JSON.parse(child.stdout) as PythonPeerResult;
  return { ok: true, value, version: value.python };
}
