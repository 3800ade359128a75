// A throwaway PostgreSQL server for the tests and the bench: Debian's binaries (the `postgresql` package), a cluster
// initialised in a temporary directory and served on a Unix socket in that directory only (no TCP port to collide on
// or expose). PostgreSQL refuses to run as root, and CI runs as root: the cluster then belongs to `nobody`.
import { execFileSync, spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running server and how to reach it. */
export interface PostgresServer {
  /** The directory of the server's Unix socket: node-postgres's `host`. */
  readonly socketDir: string;
  /** The superuser the cluster was created with (trust authentication on the socket). */
  readonly user: string;
  /** A `postgresql://` URL of the `postgres` database over the socket. */
  readonly connectionString: string;
  /**
   * Crashes the server (`pg_ctl stop -m immediate`: every process quits at once, no checkpoint; the next start
   * replays the WAL), keeping its directory for {@link PostgresServer.restart}.
   */
  crash(): void;
  /** Starts the server again on the same directory and socket, after a crash. */
  restart(): void;
  /** Stops the server (`pg_ctl stop -m fast`) and removes its directory. */
  stop(): void;
}

const USER = 'turnjournal';
const UNPRIVILEGED = 'nobody';

/** The `bin` directory of the newest PostgreSQL Debian installs under /usr/lib/postgresql. */
function binDir(): string {
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((name) => /^\d+$/.test(name) && existsSync(join(base, name, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error(
      'cannot start the throwaway PostgreSQL: no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql)',
    );
  return join(base, versions[0] as string, 'bin');
}

/** Starts a new server; throws one line saying why when it cannot. */
export function startPostgres(): PostgresServer {
  const bin = binDir();
  const dir = mkdtempSync(join(tmpdir(), 'tj-pg-'));
  const asRoot = process.getuid?.() === 0;
  // As root, every command runs as `nobody`, which must own the directory (data, socket and log all live in it).
  const run = (command: string, args: string[], what = 'start') => {
    const [file, argv] = asRoot ? ['runuser', ['-u', UNPRIVILEGED, '--', command, ...args]] : [command, args];
    const result = spawnSync(file, argv, { encoding: 'utf8', timeout: 60_000 });
    if (result.status !== 0) {
      const log = existsSync(join(dir, 'server.log')) ? readFileSync(join(dir, 'server.log'), 'utf8') : '';
      const why = `${result.stderr ?? ''}${result.error?.message ?? ''}${log}`.trim().split('\n').at(-1) ?? '';
      throw new Error(`cannot ${what} the throwaway PostgreSQL: ${command.split('/').at(-1)} failed: ${why}`);
    }
    return result.stdout;
  };
  if (asRoot) {
    const uid = Number(execFileSync('id', ['-u', UNPRIVILEGED], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', UNPRIVILEGED], { encoding: 'utf8' }).trim());
    chownSync(dir, uid, gid);
  }
  const data = join(dir, 'data');
  // --no-sync: initdb's own files need no fsync for a throwaway cluster; the server itself runs with fsync on.
  run(join(bin, 'initdb'), ['-D', data, '-U', USER, '--auth=trust', '--no-sync', '-E', 'UTF8', '--locale=C']);
  const settings = [
    "-c listen_addresses=''",
    `-k ${dir}`,
    '-c fsync=on',
    '-c synchronous_commit=on',
    '-c max_connections=200',
    '-c shared_buffers=16MB',
  ].join(' ');
  const start = () =>
    run(join(bin, 'pg_ctl'), ['-D', data, '-w', '-t', '30', '-l', join(dir, 'server.log'), '-o', settings, 'start']);
  start();
  let stopped = false;
  return {
    socketDir: dir,
    user: USER,
    connectionString: `postgresql://${USER}@${encodeURIComponent(dir)}/postgres`,
    crash() {
      run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop'], 'crash');
    },
    restart() {
      start();
    },
    stop() {
      if (stopped) return;
      stopped = true;
      // A pool's end() resolves before the server has seen its connections close: stopping at once would send their
      // sockets a "terminating connection" error that no listener waits for any more. Give them a moment to go.
      const psql = (sql: string) =>
        spawnSync(join(bin, 'psql'), ['-h', dir, '-U', USER, '-d', 'postgres', '-XAtq', '-c', sql], {
          encoding: 'utf8',
        }).stdout.trim();
      for (const deadline = Date.now() + 3_000; Date.now() < deadline; ) {
        const others = psql(
          "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()",
        );
        if (others === '0') break;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
      }
      try {
        run(join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop'], 'stop');
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}
