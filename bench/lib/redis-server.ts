/**
 * A throwaway Redis server for the bench's peer rows (issue 39) and for anything else that needs a real one: Debian's
 * `redis-server` binary on a free 127.0.0.1 port, its files in a temporary directory, no RDB snapshots (`--save ''`)
 * and the append-only file on, synced as asked. Redis runs fine as root, so unlike PostgreSQL no user switch is needed.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A running server and how to reach it. */
export interface RedisServer {
  readonly host: string;
  readonly port: number;
  /** The server's version, e.g. `Redis 7.0.15`. */
  readonly version: string;
  /** Stops the server and removes its directory. */
  stop(): Promise<void>;
}

/** What the append-only file does per write: `always` syncs before the reply, `everysec` once a second. */
export interface RedisOptions {
  readonly appendfsync: 'always' | 'everysec';
}

const HOST = '127.0.0.1';
const READY_MS = 15_000;

/** The `redis-server` binary on PATH, or a clear one-line error when Debian's package is not installed. */
function redisBinary(): string {
  const found = spawnSync('sh', ['-c', 'command -v redis-server'], { encoding: 'utf8' });
  const path = found.stdout.trim();
  if (found.status !== 0 || path === '')
    throw new Error('cannot start Redis: no redis-server binary on PATH (apt-get install redis-server)');
  return path;
}

/** A port the kernel just handed out on 127.0.0.1; free unless another process takes it before Redis binds it. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, HOST, resolve);
  });
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('cannot start Redis: no free port on 127.0.0.1');
  return address.port;
}

/** Waits for the log line Redis prints once it accepts connections; rejects with the log's last line if it exits. */
function whenReady(child: ChildProcess): Promise<string> {
  return new Promise((resolve, reject) => {
    let output = '';
    let version = '';
    const timer = setTimeout(() => {
      finish();
      child.kill('SIGKILL');
      reject(new Error(`cannot start Redis: not ready after ${READY_MS} ms: ${lastLine(output)}`));
    }, READY_MS);
    const onData = (chunk: Buffer) => {
      output += chunk.toString('utf8');
      version ||= /Redis version=([\d.]+)/.exec(output)?.[1] ?? '';
      if (/Ready to accept connections/.test(output)) {
        finish();
        resolve(`Redis ${version || 'unknown version'}`);
      }
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) => {
      finish();
      reject(new Error(`cannot start Redis: redis-server exited (${signal ?? code}): ${lastLine(output)}`));
    };
    const onError = (error: Error) => {
      finish();
      reject(new Error(`cannot start Redis: ${error.message}`));
    };
    function finish() {
      clearTimeout(timer);
      child.stdout?.off('data', onData);
      child.stderr?.off('data', onData);
      child.off('exit', onExit);
      child.off('error', onError);
    }
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    child.once('error', onError);
  });
}

function lastLine(text: string): string {
  return text.trim().split('\n').at(-1) ?? '';
}

/** Starts a new server; rejects with one line saying why when it cannot. */
export async function startRedis(options: RedisOptions): Promise<RedisServer> {
  const binary = redisBinary();
  const dir = mkdtempSync(join(tmpdir(), 'tj-redis-'));
  // Another process can take the port between freePort and Redis's bind: try a few ports before giving up.
  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const child = spawn(
      binary,
      [
        '--bind',
        HOST,
        '--port',
        String(port),
        '--dir',
        dir,
        '--save',
        '',
        '--appendonly',
        'yes',
        '--appendfsync',
        options.appendfsync,
        '--daemonize',
        'no',
        '--logfile',
        '',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let version: string;
    try {
      version = await whenReady(child);
    } catch (error) {
      const inUse = error instanceof Error && /Address already in use/i.test(error.message);
      if (inUse && attempt < 5) continue;
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    // Drain the log so that a chatty server never blocks on a full pipe.
    child.stdout?.resume();
    child.stderr?.resume();
    const exited = new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve();
      else child.once('exit', () => resolve());
    });
    // A bench that dies on an uncaught error must not leave a server behind listening on the loopback.
    const killOnExit = () => {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    };
    process.once('exit', killOnExit);
    let stopping: Promise<void> | undefined;
    return {
      host: HOST,
      port,
      version,
      stop() {
        stopping ??= (async () => {
          process.off('exit', killOnExit);
          child.kill('SIGTERM');
          await exited;
          rmSync(dir, { recursive: true, force: true });
        })();
        return stopping;
      },
    };
  }
}
