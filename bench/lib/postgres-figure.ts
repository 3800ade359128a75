/**
 * The throwaway PostgreSQL server of the figures that measure the PostgreSQL store (`@turnjournal/postgres`): started
 * from Debian's binaries as the binding's tests start it (`fsync` and `synchronous_commit` on), with the store package
 * and node-postgres loaded as the store resolves it, so subject and floor use one client library. A server that
 * cannot start makes the figure's rows say why (skipped), and the run goes on.
 */
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type PostgresServer, startPostgres } from '@turnjournal/test-support/postgres-server';
import type { BenchContext, FigureRow } from './types.js';

/** The built PostgreSQL store package. */
export type Postgres = typeof import('../../packages/postgres/dist/index.js');
/** node-postgres, as the store package loads it. */
export type Pg = typeof import('../../packages/postgres/node_modules/@types/pg/index.js');

/** What a figure measuring PostgreSQL is given: the running server, the store package and node-postgres. */
export interface PostgresFigureServer {
  readonly server: PostgresServer;
  readonly postgres: Postgres;
  readonly pg: Pg;
}

/**
 * Starts the server, runs `measure` on it and stops it; when it cannot start, logs why and answers `skipped(reason)`.
 */
export async function withPostgresServer(
  context: BenchContext,
  skipped: (reason: string) => FigureRow[],
  measure: (database: PostgresFigureServer) => Promise<FigureRow[]>,
): Promise<FigureRow[]> {
  let server: PostgresServer;
  try {
    server = startPostgres();
  } catch (error) {
    const reason = `skipped: ${error instanceof Error ? error.message : String(error)}`;
    context.log(`  ${reason}`);
    return skipped(reason);
  }
  try {
    const postgres: Postgres = await import(
      pathToFileURL(join(context.root, 'packages', 'postgres', 'dist', 'index.js')).href
    );
    const pg = createRequire(join(context.root, 'packages', 'postgres', 'package.json'))('pg') as Pg;
    return await measure({ server, postgres, pg });
  } finally {
    server.stop();
  }
}
