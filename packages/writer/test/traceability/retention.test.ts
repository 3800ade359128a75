// Coverage of the retention sweep (spec §9.1, §14.1) against the reference writer.
import { appendFileSync, copyFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openTurnJournal, sweepTurnJournals } from '../support/internals.js';
import { tempDir } from '../support/temp.js';
import { TraceFileSystem } from './trace-fs.js';

const HOUR = 3600 * 1000;
const NOW = Date.parse('2026-11-22T12:00:00Z');
const YOUNG = (NOW - HOUR) / 1000;

/** Session `s` in one file: an old completed turn (prunable) and a young one (kept). */
async function session(): Promise<{ dir: string; file: string }> {
  const dir = join(tempDir(), '_turn_journal');
  let now = NOW - 72 * HOUR;
  const journal = await openTurnJournal({ dir, sessionId: 's', clock: () => now });
  await journal.submit({ content: 'old', turnId: 'old' });
  await journal.complete('old');
  now = NOW - HOUR;
  await journal.submit({ content: 'young', turnId: 'young' });
  await journal.complete('young');
  await journal.close();
  return { dir, file: join(dir, 's.jsonl') };
}

const statted = (fs: TraceFileSystem, file: string) => fs.calls.some((c) => c.op === 'stat' && c.path === file);
const lines = (file: string) => readFileSync(file, 'utf8').split('\n').filter(Boolean);

describe('retention sweep (spec §14.1)', () => {
  it('skips a session whose file grew between its audit and the writer locks, and rewrites nothing (TJ-RET-015)', async () => {
    const { dir, file } = await session();
    const fs = new TraceFileSystem();
    const late = `${JSON.stringify({ version: 1, event: 'submitted', turn_id: 'late', session_id: 's', created_at: YOUNG, role: 'user', content: 'late' })}\n`;
    let injected = false;
    // The sweep stats the files, audits, then lists the directory, then locks the session's files: the listing after
    // the stat is the moment between the audit and the locks.
    fs.before = (op, path) => {
      if (!injected && op === 'readdir' && path === dir && statted(fs, file)) {
        injected = true;
        appendFileSync(file, late);
      }
    };
    const expected = readFileSync(file, 'utf8') + late;
    const report = await sweepTurnJournals(dir, { clock: () => NOW, fs });
    expect(injected).toBe(true);
    expect(report.sessions).toEqual([
      expect.objectContaining({ sessionId: 's', prunedTurnIds: [], rewrittenFiles: [] }),
    ]);
    expect(report.sessions[0]?.skipped).toMatch(/changed/);
    expect(readFileSync(file, 'utf8')).toBe(expected);
  });

  it('skips a session whose file was replaced by another of the same size since its audit (TJ-RET-015)', async () => {
    const { dir, file } = await session();
    const fs = new TraceFileSystem();
    let injected = false;
    fs.before = (op, path) => {
      if (!injected && op === 'readdir' && path === dir && statted(fs, file)) {
        injected = true;
        copyFileSync(file, `${file}.copy`);
        renameSync(`${file}.copy`, file);
      }
    };
    const before = readFileSync(file, 'utf8');
    const report = await sweepTurnJournals(dir, { clock: () => NOW, fs });
    expect(injected).toBe(true);
    expect(report.sessions[0]?.skipped).toMatch(/changed/);
    expect(readFileSync(file, 'utf8')).toBe(before);
  });

  it('also removes remnant lines of turns an earlier sweep listed as removed, when it rewrites a file (TJ-RET-016)', async () => {
    const { dir, file } = await session();
    // Shard a holds the compacted record of an earlier sweep that was cut off before it rewrote this file, which
    // still holds the lines of the removed turn `gone` (young by its timestamps, so only the remnant rule removes it).
    const gone = [
      {
        version: 1,
        event: 'submitted',
        turn_id: 'gone',
        session_id: 's',
        created_at: YOUNG,
        role: 'user',
        content: 'gone',
      },
      { version: 1, event: 'completed', turn_id: 'gone', session_id: 's', created_at: YOUNG },
    ];
    appendFileSync(file, gone.map((r) => `${JSON.stringify(r)}\n`).join(''));
    writeFileSync(
      join(dir, 's~a.jsonl'),
      `${JSON.stringify({ version: 1, event: 'compacted', created_at: YOUNG, session_id: 's', removed_turns: 1, removed_turn_ids: ['gone'], retention_seconds: 172800 })}\n`,
    );
    const report = await sweepTurnJournals(dir, { clock: () => NOW });
    expect(report.sessions[0]).toMatchObject({ prunedTurnIds: ['old'], rewrittenFiles: [file] });
    const after = lines(file).map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(after.filter((r) => r.turn_id === 'gone')).toEqual([]);
    expect(after.filter((r) => r.event !== 'compacted').map((r) => `${r.turn_id}:${r.event}`)).toEqual([
      'young:submitted',
      'young:completed',
    ]);
  });

  it('copies every retained line byte for byte: unknown members, member order, spacing, escapes and number spellings survive (TJ-COMPAT-004)', async () => {
    const { dir, file } = await session();
    const odd = [
      `{"version":1,"event":"submitted","turn_id":"odd","session_id":"s","created_at":${YOUNG}.50,"role":"user","content":"caf\\u00e9 \\/ \\ud83c\\udf89","x_unknown":{"b":1E2,"a":[1.0,-0.0,10e-1]}}`,
      `{"turn_id":"odd",  "event":"completed", "version":1,"session_id":"s","created_at":${YOUNG}.000,"x_big":12345678901234567890,"x_order":{"z":1,"a":2}}`,
    ];
    appendFileSync(file, odd.map((line) => `${line}\n`).join(''));
    const report = await sweepTurnJournals(dir, { clock: () => NOW });
    expect(report.sessions[0]).toMatchObject({ prunedTurnIds: ['old'], rewrittenFiles: [file] });
    const after = lines(file);
    expect(after.slice(0, -1)).toEqual([...lines(file).filter((line) => line.includes('"young"')), ...odd]);
    expect(after.slice(-3, -1)).toEqual(odd);
  });
});
