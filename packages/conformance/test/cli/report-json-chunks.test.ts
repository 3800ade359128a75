import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { auditStore, buildReport, buildStreamedReport, checkStore } from '@turnjournal/reader';
import { openTurnJournal } from '@turnjournal/writer';
import { describe, expect, it } from 'vitest';
import { recoverCommand, recoveryJson, streamedRecoveryJson } from '../../src/cli/maintenance.js';
import { jsonDocumentChunks, reportJsonChunks } from '../../src/cli/report-json-chunks.js';

const repo = new URL('../../../..', import.meta.url).pathname;

describe('reportJsonChunks', () => {
  it('yields, piece by piece, exactly the JSON.stringify(report, null, 2) form', async () => {
    const audit = await auditStore([`${repo}examples/store`]);
    const report = buildReport(audit.check, {
      command: 'audit',
      mode: 'tolerant',
      paths: ['examples/store'],
      plan: audit.plan,
    });
    const chunks = [...reportJsonChunks(report)];
    expect(chunks.length).toBeGreaterThan(report.findings.length);
    expect(chunks.join('')).toBe(`${JSON.stringify(report, null, 2)}\n`);
  });

  it('writes the recover plan, built on iteration, as the same bytes as the one-object form', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-chunks-recover-'));
    const journal = await openTurnJournal({ dir: join(root, '_turn_journal'), sessionId: 's' });
    await journal.submit({ content: 'a "quoted"\nmessage', turnId: 't1' });
    await journal.submit({
      content: 'another',
      turnId: 't2',
      attachments: [{ name: 'a.txt', path: '/a', mime: 'text/plain', size: 1 }],
    });
    await journal.close();
    const result = await recoverCommand([root], { apply: false, journalOnly: false, hooks: undefined });
    expect(result.plan).toHaveLength(2);
    const whole = recoveryJson(result, false);
    expect([...jsonDocumentChunks(streamedRecoveryJson(result, false), 3)].join('')).toBe(
      `${JSON.stringify(whole, null, 2)}\n`,
    );
  });

  it('prints empty arrays and objects as JSON.stringify does', () => {
    const report = JSON.parse(
      '{"spec":"v1","command":"check","mode":"tolerant","paths":[],"clean":true,"summary":{"files":0,"records":0,"sessions":0,"turns":0,"findings":{"error":0,"warn":0,"info":0},"omitted":{}},"files":[],"sessions":[],"runs":[],"event_logs":[],"findings":[]}',
    );
    expect([...reportJsonChunks(report)].join('')).toBe(`${JSON.stringify(report, null, 2)}\n`);
  });

  it('writes a streamed report, whose file and session lists are built on iteration, as the same bytes', async () => {
    const check = await checkStore([`${repo}examples/store`]);
    const context = { command: 'inspect', mode: 'tolerant', paths: ['examples/store'] };
    const streamed = buildStreamedReport(check, context);
    // Lazy: not arrays, and built anew on each iteration (a writer may make two passes, as the JUnit one does).
    expect(Array.isArray(streamed.sessions)).toBe(false);
    expect(Array.isArray(streamed.files)).toBe(false);
    expect([...streamed.sessions]).toEqual([...streamed.sessions]);
    expect([...streamed.sessions].length).toBe(check.sessions.length);
    expect(check.sessions.length).toBeGreaterThan(0);
    // A session's turns too: one session of two million turns must not be two million report objects at once.
    const [session] = streamed.sessions;
    expect(Array.isArray(session?.turns)).toBe(false);
    expect(session?.turns).toHaveLength(check.sessions[0]?.turns.length ?? -1);
    const [built, again] = [[...(session?.turns ?? [])][0], [...(session?.turns ?? [])][0]];
    expect(again).toEqual(built);
    expect(again).not.toBe(built);
    const whole = buildReport(check, context);
    expect(Object.keys(whole)).toEqual(Object.keys(streamed));
    const chunks = [...reportJsonChunks(streamed)];
    expect(chunks.join('')).toBe(`${JSON.stringify(whole, null, 2)}\n`);
    // Pieces go down to single turns: one session of a million turns is not one string either.
    const turn = JSON.stringify(whole.sessions[0]?.turns[0], null, 2).replaceAll('\n', '\n        ');
    expect(chunks).toContain(turn);
  });

  it("writes an audit's streamed report, whose plan is built on iteration, as the same bytes (issue 11)", async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-chunks-plan-'));
    const journal = await openTurnJournal({ dir: join(root, '_turn_journal'), sessionId: 's' });
    for (const turnId of ['t1', 't2', 't3']) await journal.submit({ content: 'hi', turnId });
    await journal.close();
    const audit = await auditStore([root]);
    const context = { command: 'audit', mode: 'tolerant', paths: [root], plan: audit.plan };
    const streamed = buildStreamedReport(audit.check, context);
    // A store of two million abandoned turns must not hold a report entry per planned turn: each is built anew.
    expect(Array.isArray(streamed.plan)).toBe(false);
    expect(streamed.plan).toHaveLength(3);
    const [first] = streamed.plan ?? [];
    const [again] = streamed.plan ?? [];
    expect(again).toEqual(first);
    expect(again).not.toBe(first);
    const whole = buildReport(audit.check, context);
    expect(whole.plan?.map((p) => p.turn_id)).toEqual(['t1', 't2', 't3']);
    expect(Object.keys(whole)).toEqual(Object.keys(streamed));
    expect([...reportJsonChunks(streamed)].join('')).toBe(`${JSON.stringify(whole, null, 2)}\n`);
  });
});
