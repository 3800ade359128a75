#!/usr/bin/env node
// A deliberately broken adapter for the conformance kit's own tests: the reference adapter with one defect, named by
// the first argument. The kit must fail each one (the "proof of power" of issue 5).
import {
  closeSync,
  cpSync,
  existsSync,
  fdatasyncSync,
  fsyncSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdapterRequestError, referenceImplementation, runAdapter } from '@turnjournal/conformance';
import { currentBootId, currentPidNamespace, lockStatusOf, trailingNulCount } from '@turnjournal/reader/store-format';
import { isAcceptedRecord, validateRecord } from '@turnjournal/schema';
import { AppendFile, nodeFileSystem } from '@turnjournal/writer/file-system';
import { eventModeDefects } from './mutants/event-modes.mjs';
import { lifecycleDefects } from './mutants/lifecycle.mjs';
import { liveDefects } from './mutants/live.mjs';
import { recoveryDefects } from './mutants/recovery.mjs';
import { relocatedImplementation } from './mutants/relocated.mjs';
import { representativeDefects } from './mutants/representatives.mjs';
import { retentionDefects } from './mutants/retention.mjs';
import { spaceDefects } from './mutants/space.mjs';
import { storeLinesDefects, storeLinesImplementation } from './mutants/store-lines.mjs';
import { postgresDefects, postgresImplementation } from './mutants/store-postgres.mjs';

const defect = process.argv[2];
const TURN_EVENTS = ['submitted', 'worker_started', 'assistant_started', 'completed', 'interrupted'];
const KNOWN_MEMBERS = new Set([
  'version',
  'event',
  'turn_id',
  'session_id',
  'created_at',
  'role',
  'content',
  'assistant_message_index',
  'reason',
  'terminal',
  'removed_turn_ids',
  'removed_turns',
  'seq',
  'ts',
  'type',
  'payload',
  'request_id',
  'run_id',
  'data',
]);

function jsonlFiles(dir) {
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...jsonlFiles(path));
    else if (entry.name.endsWith('.jsonl')) out.push(path);
  }
  return out.sort();
}

// Reads a copy of the store whose journal texts went through `transform`, and maps the paths back.
// `latin1` maps each byte to one character and back, for a transform that must keep invalid UTF-8 as it is.
async function readTransformed(paths, mode, audit, transform, encoding = 'utf8') {
  const copies = paths.map((path) => {
    const copy = mkdtempSync(join(tmpdir(), 'tj-broken-'));
    cpSync(path, copy, { recursive: true });
    for (const file of statSync(copy).isDirectory() ? jsonlFiles(copy) : []) {
      const text = readFileSync(file, encoding);
      const fd = openSync(file, 'w');
      writeSync(fd, Buffer.from(transform(text), encoding));
      closeSync(fd);
    }
    return copy;
  });
  try {
    const result = await referenceImplementation.read(copies, mode, audit);
    const back = (file) => {
      for (const [i, copy] of copies.entries()) if (file.startsWith(copy)) return paths[i] + file.slice(copy.length);
      return file;
    };
    return {
      ...result,
      findings: result.findings.map((f) => (f.file === undefined ? f : { ...f, file: back(f.file) })),
      runs: Object.fromEntries(Object.entries(result.runs ?? {}).map(([k, v]) => [back(k), v])),
      event_logs: Object.fromEntries(Object.entries(result.event_logs ?? {}).map(([k, v]) => [back(k), v])),
    };
  } finally {
    for (const copy of copies) rmSync(copy, { recursive: true, force: true });
  }
}

// Derives each turn's state from one chosen record instead of the fold.
async function readPicking(paths, mode, audit, better) {
  const result = await referenceImplementation.read(paths, mode, audit);
  const chosen = new Map();
  let order = 0;
  for (const root of paths)
    for (const file of statSync(root).isDirectory() ? jsonlFiles(root) : [root]) {
      if (!file.includes('_turn_journal')) continue;
      const session = file
        .split('/')
        .pop()
        .replace(/(~\d+)?\.jsonl$/, '');
      for (const line of readFileSync(file, 'utf8').split('\n')) {
        let record;
        try {
          record = JSON.parse(line);
        } catch {
          continue;
        }
        if (!TURN_EVENTS.includes(record?.event) || typeof record.turn_id !== 'string') continue;
        const key = `${session}\u0000${record.turn_id}`;
        const candidate = { event: record.event, created_at: Number(record.created_at) || 0, order: order++ };
        const current = chosen.get(key);
        if (current === undefined || better(candidate, current)) chosen.set(key, candidate);
      }
    }
  const turns = structuredClone(result.turns ?? {});
  for (const [key, pick] of chosen) {
    const [session, turn] = key.split('\u0000');
    if (turns[session]?.[turn] !== undefined) turns[session][turn] = pick.event;
  }
  return { ...result, turns };
}

// A writer without AppendFile: O_APPEND, no lock, no torn-tail repair, optional rewrite of the whole file.
function simpleWriter(file, { rewrite = false } = {}) {
  const lines = [];
  try {
    lines.push(
      ...readFileSync(file, 'utf8')
        .split(/(?<=\n)/)
        .filter((l) => l.endsWith('\n')),
    );
  } catch {}
  let fd = openSync(file, 'a');
  return {
    async append(record) {
      const line = `${JSON.stringify(record)}\n`;
      if (rewrite) {
        lines.push(line);
        closeSync(fd);
        fd = openSync(file, 'w');
        for (const l of lines) writeSync(fd, l);
      } else writeSync(fd, line);
      fdatasyncSync(fd);
    },
    async close() {
      fsyncSync(fd);
      closeSync(fd);
    },
  };
}

const implementations = {
  'no-fsync': { open: referenceOpenWith(() => ({ fs: { ...nodeFileSystem, fdatasync: async () => undefined } })) },
  'rewrite-per-append': { open: async (file) => simpleWriter(file, { rewrite: true }) },
  'no-repair': { open: async (file) => simpleWriter(file) },
  // The reference writer, except that it appends at the end of the file, after pre-allocated space it found there
  // (NUL bytes after the last line, spec §3.8): every write and truncation at or past the end of the lines is moved
  // past the space. Violates TJ-DUR-033 alone: on files without space it is the reference writer.
  'append-after-space': {
    // Every write and truncation at or past the end of the lines is shifted by the length of the space the file ends
    // in, so appends land after it. Only a regular file is read first: the kit's FIFO check must still see the
    // reference writer's refusal, not a read that blocks.
    open: referenceOpenWith((file) => {
      const bytes = isRegularFile(file) ? readFileSync(file) : Buffer.alloc(0);
      const dataEnd = bytes.length - trailingNulCount(bytes);
      const linesEnd = bytes.subarray(0, dataEnd).lastIndexOf(0x0a) + 1;
      const shift = linesEnd === dataEnd ? bytes.length - dataEnd : 0;
      const fs = {
        ...nodeFileSystem,
        write: (fd, buffer, offset, length, position, options) =>
          nodeFileSystem.write(fd, buffer, offset, length, position >= linesEnd ? position + shift : position, options),
        ftruncate: (fd, length) => nodeFileSystem.ftruncate(fd, length >= linesEnd ? length + shift : length),
      };
      return { fs, preallocate: false };
    }),
  },
  'ack-before-write': {
    // Valid records are answered before their write even starts; invalid ones are still refused.
    open: referenceOpenWith(
      () => ({}),
      (writer, appendFile) => ({
        ...writer,
        append: async (record) => {
          if (!isAcceptedRecord(validateRecord(record))) throw new AdapterRequestError('bad_request', 'invalid record');
          appendFile.appendRecord(record).catch(() => undefined);
        },
      }),
    ),
  },
  'reject-unknown-fields': {
    read: (paths, mode, audit) =>
      readTransformed(paths, mode, audit, (text) =>
        text
          .split('\n')
          .filter((line) => {
            try {
              const value = JSON.parse(line);
              return Object.keys(value).every((k) => KNOWN_MEMBERS.has(k));
            } catch {
              return true;
            }
          })
          .join('\n'),
      ),
  },
  'stop-at-first-bad-line': {
    read: (paths, mode, audit) =>
      readTransformed(paths, mode, audit, (text) => {
        const lines = text.split('\n');
        const bad = lines.findIndex((line, i) => {
          if (i === lines.length - 1 || line.trim() === '') return false;
          try {
            JSON.parse(line);
            return false;
          } catch {
            return true;
          }
        });
        return bad < 0
          ? text
          : lines
              .slice(0, bad)
              .map((l) => `${l}\n`)
              .join('');
      }),
  },
  'split-u2028': {
    read: (paths, mode, audit) => readTransformed(paths, mode, audit, (text) => text.replace(/[\u2028\u2029]/g, '\n')),
  },
  'timestamp-order': {
    read: (paths, mode, audit) =>
      readPicking(paths, mode, audit, (candidate, current) => candidate.created_at >= current.created_at),
  },
  'terminal-not-sticky': {
    read: (paths, mode, audit) =>
      readPicking(paths, mode, audit, (candidate, current) => candidate.order > current.order),
  },
};

// ---- writer mutants over the reference writer (issue 12): each breaks one requirement, through AppendFile's own seams
// (its file-system layer and its lock options) or around it, and the writer tier must catch it.

/** Whether `path` names a regular file (not a FIFO, a device or a link), without following or opening it. */
function isRegularFile(path) {
  try {
    return lstatSync(path).isFile();
  } catch {
    return false;
  }
}

/** The reference writer's open with AppendFile options changed (`fs`, `lock`), record validation kept. */
function referenceOpenWith(options, wrap = (writer) => writer) {
  return async (file, durability) => {
    const appendFile = await AppendFile.open(file, { durability, ...options(file, durability) });
    return wrap(
      {
        append: async (record) => {
          const validation = validateRecord(record);
          if (!isAcceptedRecord(validation)) throw new AdapterRequestError('bad_request', 'invalid record');
          await appendFile.appendRecord(record);
        },
        close: () => appendFile.close(),
      },
      appendFile,
      file,
    );
  };
}

/** A file system that remembers which path each descriptor was opened on, with some calls replaced. */
function tracingFs(replace) {
  const paths = new Map();
  const fs = {
    ...nodeFileSystem,
    open: async (path, mode) => {
      const fd = await nodeFileSystem.open(path, mode);
      paths.set(fd, path);
      return fd;
    },
  };
  return Object.assign(fs, replace(paths));
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));
const encoder = new TextEncoder();

/** Appends `line(record)` as written bytes, bypassing the reference encoder. */
function rawLines(line) {
  return referenceOpenWith(
    () => ({}),
    (writer, appendFile) => ({
      ...writer,
      append: async (record) => {
        if (!isAcceptedRecord(validateRecord(record))) throw new AdapterRequestError('bad_request', 'invalid record');
        await appendFile.appendLine(encoder.encode(line(record, appendFile)));
      },
    }),
  );
}

Object.assign(implementations, {
  // TJ-DUR-007: the new file's directory is never fsynced.
  'no-dir-fsync': {
    open: referenceOpenWith(() => ({ fs: { ...nodeFileSystem, fsyncDirectory: async () => undefined } })),
  },
  // TJ-DUR-015: in none mode, close does not fsync.
  'no-close-fsync': {
    open: referenceOpenWith((_, durability) =>
      durability === 'none'
        ? { fs: { ...nodeFileSystem, fsync: async () => undefined, fdatasync: async () => undefined } }
        : {},
    ),
  },
  // TJ-DUR-005: the quarantine copy loses the last torn byte.
  'short-quarantine': {
    open: referenceOpenWith(() => ({
      fs: tracingFs((paths) => ({
        // Claims to have written every byte of the quarantine copy but drops the last one.
        write: async (fd, buffer, offset, length, position, options) => {
          if (!String(paths.get(fd)).includes('.torn') || length < 2)
            return nodeFileSystem.write(fd, buffer, offset, length, position, options);
          await nodeFileSystem.write(fd, buffer, offset, length - 1, position, options);
          return length;
        },
      })),
    })),
  },
  // TJ-DUR-005: "repair" drops every committed line that does not parse, not just the torn tail.
  'drop-damaged-lines': {
    open: async (file, durability) => {
      if (existsSync(file)) {
        const lines = readFileSync(file, 'utf8').split(/(?<=\n)/);
        const kept = lines.filter((line) => {
          try {
            JSON.parse(line);
            return line.endsWith('\n');
          } catch {
            return false;
          }
        });
        writeFileSync(file, kept.join(''));
      }
      return referenceOpenWith(() => ({}))(file, durability);
    },
  },
  // TJ-DUR-021: after a failed sync the writer reopens the file and carries on, as if the data were safe.
  // It reopens at the next append, not at once: the harness renames the journal away while the fault lasts, and a
  // writer reopened then would create a new file that the rename back replaces, which the reference writer under
  // the defect then refuses (TJ-DUR-036) for that reason, hiding the one this defect is about.
  'no-poison': {
    open: async (file, durability) => {
      const open = referenceOpenWith(() => ({}));
      let writer = await open(file, durability);
      let failed = false;
      return {
        append: async (record) => {
          if (failed) {
            failed = false;
            writer = await open(file, durability);
          }
          try {
            await writer.append(record);
          } catch (error) {
            await writer.close().catch(() => undefined);
            failed = true;
            throw error;
          }
        },
        close: () => writer.close(),
      };
    },
  },
  // TJ-DUR-021: a failed fdatasync or fsync is retried once, and the append acknowledged when the retry succeeds. Both
  // calls are made on the calling thread, as a writer that retries in place would.
  'sync-retry-ack': {
    open: referenceOpenWith(() => {
      const retried = (sync) => async (fd) => {
        try {
          sync(fd);
        } catch (error) {
          if (error.code !== 'EIO') throw error;
          sync(fd);
        }
      };
      return { fs: { ...nodeFileSystem, fdatasync: retried(fdatasyncSync), fsync: retried(fsyncSync) } };
    }),
  },
  // TJ-DUR-030 / TJ-CONF-014: a failed write is taken for a full one.
  'ignore-write-error': {
    open: referenceOpenWith(() => ({
      fs: {
        ...nodeFileSystem,
        write: (fd, buffer, offset, length, position, options) =>
          nodeFileSystem.write(fd, buffer, offset, length, position, options).catch(() => length),
      },
    })),
  },
  // TJ-CONF-031: read ignores max_line_bytes and always reads with the default limit.
  'ignore-line-limit': { read: (paths, mode, audit) => referenceImplementation.read(paths, mode, audit) },
  // TJ-RUNSEM-001: a run without run.end takes its outcome from its last run.status.
  'status-decides-outcome': {
    read: async (paths, mode, audit, maxLineBytes) => {
      const result = await referenceImplementation.read(paths, mode, audit, maxLineBytes);
      const runs = { ...(result.runs ?? {}) };
      for (const [file, outcome] of Object.entries(runs)) {
        if (outcome !== 'incomplete') continue;
        const statuses = readFileSync(file, 'utf8')
          .split('\n')
          .flatMap((line) => {
            try {
              const record = JSON.parse(line);
              return record.type === 'run.status' ? [record.status] : [];
            } catch {
              return [];
            }
          });
        if (statuses.length > 0) runs[file] = statuses.at(-1);
      }
      return { ...result, runs };
    },
  },
  // TJ-FAM-008: a .json file outside state/ found by a scan is skipped silently.
  'silent-json-sidecar': {
    read: async (paths, mode, audit, maxLineBytes) => {
      const result = await referenceImplementation.read(paths, mode, audit, maxLineBytes);
      return { ...result, findings: result.findings.filter((f) => f.code !== 'unrecognised_file') };
    },
  },
  // TJ-COMPAT-011 / TJ-COMPAT-012: records of another major version are dropped without a finding.
  'silent-other-version': {
    read: async (paths, mode, audit, maxLineBytes) => {
      const result = await referenceImplementation.read(paths, mode, audit, maxLineBytes);
      return { ...result, findings: result.findings.filter((f) => f.code !== 'unsupported_version') };
    },
  },
  // TJ-DUR-020: a lock's holder is judged by its pid alone, whatever host the lock names.
  'pid-only-liveness': {
    open: referenceOpenWith(() => ({
      lock: {
        statusOf: (text) => {
          try {
            process.kill(JSON.parse(text).pid, 0);
            return 'live';
          } catch (error) {
            return error.code === 'ESRCH' ? 'stale' : 'live';
          }
        },
      },
    })),
  },
  // TJ-DUR-019: a holder judged by its pid is taken for alive whenever kill(pid, 0) succeeds, so a zombie holder (killed,
  // not yet reaped) keeps its lock. Every other judgement is the reference one.
  'zombie-alive': {
    open: referenceOpenWith(() => ({
      lock: {
        statusOf: (text, lease) => {
          const status = lockStatusOf(text, lease);
          const holder = JSON.parse(text ?? 'null');
          const rebooted = typeof holder?.boot_id === 'string' && holder.boot_id !== currentBootId();
          if (status !== 'stale' || rebooted) return status;
          try {
            process.kill(holder.pid, 0);
            return 'live';
          } catch (error) {
            if (error.code === 'ESRCH') return status;
            throw error;
          }
        },
      },
    })),
  },
  // TJ-DUR-038: a holder of another PID namespace is judged by its pid, as if it ran in this one (falsely dead).
  'pid-across-namespaces': {
    open: referenceOpenWith(() => ({
      lock: {
        statusOf: (text, lease) => {
          const holder = JSON.parse(text ?? 'null');
          if (holder?.pid_ns !== undefined && holder.pid_ns !== currentPidNamespace()) {
            try {
              process.kill(holder.pid, 0);
            } catch (error) {
              if (error.code === 'ESRCH') return 'stale';
            }
          }
          return lockStatusOf(text, lease);
        },
      },
    })),
  },
  // TJ-DUR-039: an expired lease is taken for a live holder (falsely live: a restarted container waits for ever).
  'lease-never-expires': {
    open: referenceOpenWith(() => ({
      lock: {
        statusOf: (text, lease) => {
          const status = lockStatusOf(text, lease);
          return status === 'expired' ? 'live' : status;
        },
      },
    })),
  },
  // TJ-DUR-041: a lock taken over from a holder presumed dead by its lease is followed by appends to the file in place:
  // the file is never opened to be copied (its copy is what gives it a new identity).
  'lease-takeover-in-place': {
    open: referenceOpenWith(() => ({
      fs: {
        ...nodeFileSystem,
        open: (path, mode) =>
          mode === 'read' && !path.endsWith('.lock')
            ? Promise.reject(Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' }))
            : nodeFileSystem.open(path, mode),
      },
    })),
  },
  // TJ-DUR-040: the check of the lock after each sync (a stat, then a read of the token) sees the lock as this writer
  // linked it, whatever it is now. Its release still reads the lock as it is (TJ-DUR-026 holds).
  'no-fencing': {
    open: referenceOpenWith(() => {
      const taken = new Map();
      let statted = null;
      return {
        fs: {
          ...nodeFileSystem,
          link: async (existing, path) => {
            await nodeFileSystem.link(existing, path);
            if (path.endsWith('.lock'))
              taken.set(path, { stat: await nodeFileSystem.stat(path), text: await nodeFileSystem.readFile(path) });
          },
          stat: (path) => {
            statted = path;
            return taken.has(path) ? Promise.resolve(taken.get(path).stat) : nodeFileSystem.stat(path);
          },
          readFile: (path) => {
            const fencingRead = statted === path && taken.has(path);
            statted = null;
            return fencingRead ? Promise.resolve(taken.get(path).text) : nodeFileSystem.readFile(path);
          },
        },
      };
    }),
  },
  // TJ-DUR-019: a lock whose holder is dead is never taken over.
  'no-takeover': {
    open: async (file, durability) => {
      if (existsSync(`${file}.lock`)) throw new AdapterRequestError('journal_locked', 'a lock exists');
      return referenceOpenWith(() => ({}))(file, durability);
    },
  },
  // TJ-DUR-025: a stale lock is removed without the take-over protocol (read, then unlink, then create).
  'racy-takeover': {
    open: async (file, durability) => {
      let text;
      try {
        text = readFileSync(`${file}.lock`, 'utf8');
      } catch {}
      if (text !== undefined) {
        const { pid, host } = JSON.parse(text);
        let alive = true;
        try {
          process.kill(pid, 0);
        } catch (error) {
          alive = error.code !== 'ESRCH';
        }
        if (!alive && host === hostname()) {
          // Real processes reach this point at different moments (scheduling, I/O); without jitter, writers started
          // at one instant would all remove the stale lock before any of them created its own, and the race would
          // hide on a quiet machine. With it, one writer's removal lands after another's new lock, as in production.
          await sleep(Math.floor(Math.random() * 40));
          rmSync(`${file}.lock`, { force: true });
        }
      }
      return referenceOpenWith(() => ({}))(file, durability);
    },
  },
  // TJ-DUR-025: 'racy-takeover' in about one open in 43 (2.3 %), correct otherwise: with four writers racing, about one
  // stale-lock round in twenty (5 %; not every racy open lands after another's new lock) ends with two holders, as a
  // race lost now and then in production.
  'rare-racy-takeover': {
    open: async (file, durability) => {
      if (Math.random() < 0.023) return implementations['racy-takeover'].open(file, durability);
      return referenceOpenWith(() => ({}))(file, durability);
    },
  },
  // TJ-DUR-017: the lock is stolen: an existing lock file is replaced instead of failing the open.
  'steal-lock': {
    open: referenceOpenWith(() => ({
      fs: {
        ...nodeFileSystem,
        link: async (existing, path) => {
          if (path.endsWith('.lock')) await nodeFileSystem.unlink(path).catch(() => undefined);
          return nodeFileSystem.link(existing, path);
        },
      },
    })),
  },
  // TJ-DUR-026: close removes the lock file whoever holds it now.
  'unlink-any-lock': {
    open: referenceOpenWith(
      () => ({}),
      (writer, _, file) => ({
        ...writer,
        close: async () => {
          await writer.close();
          rmSync(`${file}.lock`, { force: true });
        },
      }),
    ),
  },
  // TJ-FRAME-005 / TJ-CONF-027: members written in sorted order.
  'sorted-members': {
    open: rawLines(
      (record) =>
        `${JSON.stringify(Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b))))}\n`,
    ),
  },
  // TJ-FRAME-005: a space after every separator.
  'spaced-json': {
    open: rawLines((record) => `${JSON.stringify(record).replace(/(?<=[,:])(?=["\d[{tfn-])/g, ' ')}\n`),
  },
  // TJ-FRAME-007: U+2028 and U+2029 written raw.
  'raw-separators': { open: rawLines((record) => `${JSON.stringify(record)}\n`) },
  // TJ-FRAME-008: a byte order mark at the start of a new file.
  bom: {
    open: rawLines((record, appendFile) => `${appendFile.size === 0 ? '\ufeff' : ''}${JSON.stringify(record)}\n`),
  },
  // TJ-DUR-006: every second append waits a few milliseconds before it is written, so pipelined appends overtake it.
  // Each record is still on disk before its acknowledgement: only the order breaks.
  'late-every-second': {
    open: async (file, durability) => {
      const appendFile = await AppendFile.open(file, { durability });
      let calls = 0;
      return {
        append: async (r) => {
          calls += 1;
          if (calls % 2 === 0) await new Promise((resolve) => setTimeout(resolve, 3));
          await appendFile.appendRecord(r);
        },
        close: () => appendFile.close(),
      };
    },
  },
  // TJ-COMPAT-018 / TJ-TURN-015: invalid records are written like any other.
  'accept-invalid': {
    open: async (file, durability) => {
      const appendFile = await AppendFile.open(file, { durability });
      return { append: async (r) => void (await appendFile.appendRecord(r)), close: () => appendFile.close() };
    },
  },
});

Object.assign(implementations, lifecycleDefects, recoveryDefects, retentionDefects, liveDefects, representativeDefects);
Object.assign(implementations, spaceDefects(readTransformed), eventModeDefects);
// The writer on a record store (feature store-lines) and its defects: each replaces the whole implementation.
for (const name of Object.keys(storeLinesDefects)) implementations[name] = storeLinesImplementation(name);
// A PostgreSQL defect is built only when it is the one asked for: it needs a database, the others do not.
for (const name of Object.keys(postgresDefects))
  implementations[name] = name === defect ? await postgresImplementation(name) : {};

// Not a defect: the reference adapter claiming only the event family, so the writer tier's event path is exercised.
// Not a defect either: the reference file adapter claiming store-lines too, whose feature checks read files at paths.
implementations['claims-store-lines'] = {
  capabilities: {
    ...referenceImplementation.capabilities,
    features: [...referenceImplementation.capabilities.features, 'store-lines'],
  },
};
// Not a defect: the reference with its journals away from the paths named, read back through `lines` (store-lines.test.ts).
implementations['store-lines-relocated'] = relocatedImplementation;
implementations['claim-event-only'] = {
  capabilities: { ...referenceImplementation.capabilities, families: ['event'], name: 'event-only' },
};

const broken = implementations[defect];
if (broken === undefined) {
  process.stderr.write(`broken-adapter: unknown defect ${defect}; one of ${Object.keys(implementations).join(', ')}\n`);
  process.exit(2);
}
await runAdapter(process.stdin, process.stdout, {
  ...referenceImplementation,
  capabilities: { ...referenceImplementation.capabilities, name: `broken:${defect}` },
  ...broken,
});
process.stdin.destroy();
// A store-lines implementation releases its stores (a database's connections, which keep the process alive).
await broken.close?.();
