#!/usr/bin/env node
// A deliberately broken adapter for the conformance kit's own tests: the reference adapter with one defect, named by
// the first argument. The kit must fail each one (the "proof of power" of issue 5).
import {
  closeSync,
  cpSync,
  fdatasyncSync,
  fsyncSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { referenceImplementation, runAdapter } from '@turnjournal/conformance';
import { AppendFile, nodeFileSystem } from '@turnjournal/writer/file-system';

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
async function readTransformed(paths, mode, audit, transform) {
  const copies = paths.map((path) => {
    const copy = mkdtempSync(join(tmpdir(), 'tj-broken-'));
    cpSync(path, copy, { recursive: true });
    for (const file of statSync(copy).isDirectory() ? jsonlFiles(copy) : []) {
      const text = readFileSync(file, 'utf8');
      const fd = openSync(file, 'w');
      writeSync(fd, transform(text));
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
  'no-fsync': {
    open: async (file, durability) => {
      const fs = { ...nodeFileSystem, fdatasync: async () => undefined };
      const appendFile = await AppendFile.open(file, { durability, fs });
      return { append: async (r) => void (await appendFile.appendRecord(r)), close: () => appendFile.close() };
    },
  },
  'rewrite-per-append': { open: async (file) => simpleWriter(file, { rewrite: true }) },
  'no-repair': { open: async (file) => simpleWriter(file) },
  'ack-before-write': {
    open: async (file, durability) => {
      const appendFile = await AppendFile.open(file, { durability });
      return {
        append: async (r) => {
          appendFile.appendRecord(r).catch(() => undefined);
        },
        close: () => appendFile.close(),
      };
    },
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

// Not a defect: the reference adapter claiming only the event family, so the writer tier's event path is exercised.
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
