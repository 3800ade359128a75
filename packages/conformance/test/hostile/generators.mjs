// Hostile-input generators (issue 11, defect 8): each builds, under a fresh directory, a store an attacker or an
// unlucky operator could leave behind. Plain JavaScript so the measuring script (measure.mjs) runs them with no build;
// the vitest suite (hostile-inputs.test.ts) runs them at small sizes, and at full size when TJ_HOSTILE_FULL=1.
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CREATED_AT = 1778458282.123;

function turnLine(event, turnId, sessionId, extra = {}) {
  return `${JSON.stringify({ version: 1, event, turn_id: turnId, session_id: sessionId, created_at: CREATED_AT, ...extra })}\n`;
}

function mkfifo(path) {
  execFileSync('mkfifo', [path]);
}

/** `_turn_journal/s1.jsonl` is a FIFO beside a normal journal. */
export function fifoJournal(root) {
  const dir = join(root, '_turn_journal');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 's0.jsonl'), turnLine('submitted', 't1', 's0', { role: 'user', content: 'hi' }));
  mkfifo(join(dir, 's1.jsonl'));
  return { store: root, special: join(dir, 's1.jsonl') };
}

/** `sessions/state/s1.json` is a FIFO. */
export function fifoState(root) {
  const dir = join(root, 'sessions', 'state');
  mkdirSync(dir, { recursive: true });
  mkfifo(join(dir, 's1.json'));
  return { store: root, special: join(dir, 's1.json') };
}

/** `_turn_journal/s1.jsonl` is a symbolic link to /dev/zero. */
export function zeroLink(root) {
  const dir = join(root, '_turn_journal');
  mkdirSync(dir, { recursive: true });
  symlinkSync('/dev/zero', join(dir, 's1.jsonl'));
  return { store: root, special: join(dir, 's1.jsonl') };
}

/** A store holding a directory link to `/` and a link to itself (a loop). */
export function rootLink(root) {
  mkdirSync(join(root, 'sub'), { recursive: true });
  symlinkSync('/', join(root, 'sub', 'everything'));
  symlinkSync('..', join(root, 'sub', 'loop'));
  return { store: root };
}

/** `journals` turn journals of `lines` malformed lines each (one finding per line). */
export function manyBadLines(root, journals, lines) {
  const dir = join(root, '_turn_journal');
  mkdirSync(dir, { recursive: true });
  const body = `${'{not json\n'.repeat(lines)}`;
  for (let i = 0; i < journals; i += 1) writeFileSync(join(dir, `s${i}.jsonl`), body);
  return { store: root };
}

/** `sessions` session journals of one turn each: completed, or only submitted (abandoned) when `pending`. */
export function manySessions(root, sessions, pending = false) {
  const dir = join(root, '_turn_journal');
  mkdirSync(dir, { recursive: true });
  for (let i = 0; i < sessions; i += 1) {
    const sid = `s${i}`;
    writeFileSync(
      join(dir, `${sid}.jsonl`),
      turnLine('submitted', 't1', sid, { role: 'user', content: 'hi' }) +
        (pending ? '' : turnLine('completed', 't1', sid, { assistant_message_index: 1 })),
    );
  }
  return { store: root };
}

/** An event log whose second message has seq 2^53 (not a safe integer). */
export function unsafeSeq(root) {
  const dir = join(root, 's1');
  mkdirSync(dir, { recursive: true });
  const ts = '2026-06-19T03:14:07.123456+00:00';
  const message = (text) => ({ message: { role: 'user', content: text } });
  writeFileSync(
    join(dir, 'events.jsonl'),
    `${JSON.stringify({ seq: 1, ts, type: 'message_append', payload: message('one') })}\n` +
      `{"seq":9007199254740992,"ts":"${ts}","type":"message_append","payload":{"message":{"role":"user","content":"two"}}}\n`,
  );
  return { store: root, file: join(dir, 'events.jsonl') };
}

/** A pending turn whose journal's lock file `<sid>.jsonl.lock` is a FIFO. */
export function fifoLock(root) {
  const dir = join(root, '_turn_journal');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 's1.jsonl'), turnLine('submitted', 't1', 's1', { role: 'user', content: 'hi' }));
  mkfifo(join(dir, 's1.jsonl.lock'));
  return { store: root, special: join(dir, 's1.jsonl.lock') };
}
