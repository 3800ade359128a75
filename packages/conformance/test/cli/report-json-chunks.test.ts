import { auditStore, buildReport } from '@turnjournal/reader';
import { describe, expect, it } from 'vitest';
import { reportJsonChunks } from '../../src/cli/report-json-chunks.js';

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

  it('prints empty arrays and objects as JSON.stringify does', () => {
    const report = JSON.parse(
      '{"spec":"v1","command":"check","mode":"tolerant","paths":[],"clean":true,"summary":{"files":0,"records":0,"sessions":0,"turns":0,"findings":{"error":0,"warn":0,"info":0},"omitted":{}},"files":[],"sessions":[],"runs":[],"event_logs":[],"findings":[]}',
    );
    expect([...reportJsonChunks(report)].join('')).toBe(`${JSON.stringify(report, null, 2)}\n`);
  });
});
