import { mkdirSync, mkdtempSync, readdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { auditStore, checkStore } from '../../src/index.js';

function store(journals: number, badLines: number): string {
  const root = mkdtempSync(join(tmpdir(), 'tj-caps-'));
  mkdirSync(join(root, '_turn_journal'));
  for (let i = 0; i < journals; i += 1)
    writeFileSync(join(root, '_turn_journal', `s${i}.jsonl`), '{not json\n'.repeat(badLines));
  return root;
}

const count = (findings: readonly { code: string }[], code: string) => findings.filter((f) => f.code === code).length;

// Issue 11, defect 8: the cap was per code and file only, so 5,000 files of 1,000 bad lines kept 5 M findings.
describe('the store-wide finding cap (TJ-AUDIT-013, TJ-AUDIT-016)', () => {
  it('keeps at most the store-wide number per code and counts every finding left out', async () => {
    const root = store(6, 40);
    const check = await checkStore([root], { maxFindingsPerCode: 30, maxFindingsPerCodeInStore: 100 });
    expect(count(check.findings, 'malformed_line')).toBe(100);
    expect(check.omitted.malformed_line).toBe(6 * 40 - 100);
  });

  it('applies a default of 10,000 per code over the store', async () => {
    const root = store(12, 1000);
    const check = await checkStore([root]);
    expect(count(check.findings, 'malformed_line')).toBe(10_000);
    expect(check.omitted.malformed_line).toBe(2000);
  });

  it('keeps the check’s omitted counts in the audit', async () => {
    const root = store(3, 20);
    const audit = await auditStore([root], { maxFindingsPerCode: 10 });
    expect(count(audit.check.findings, 'malformed_line')).toBe(30);
    expect(audit.check.omitted.malformed_line).toBe(30);
  });
});

describe('links and special files in discovery (TJ-FAM-024, TJ-FAM-025)', () => {
  const submitted = `${JSON.stringify({ version: 1, event: 'submitted', turn_id: 't1', session_id: 's1', created_at: 1, role: 'user', content: 'hi' })}\n`;

  it('reports a journal link inside a store as special_file and does not read its target', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-links-'));
    const outside = mkdtempSync(join(tmpdir(), 'tj-outside-'));
    writeFileSync(join(outside, 'other.jsonl'), submitted);
    mkdirSync(join(root, '_turn_journal'));
    symlinkSync(join(outside, 'other.jsonl'), join(root, '_turn_journal', 's1.jsonl'));
    symlinkSync('/dev/zero', join(root, '_turn_journal', 's2.jsonl'));
    symlinkSync('/', join(root, 'everything'));
    const check = await checkStore([root]);
    expect(check.files).toEqual([]);
    expect(check.findings.map((f) => [f.code, f.severity, f.file])).toEqual([
      ['special_file', 'warn', join(root, '_turn_journal', 's1.jsonl')],
      ['special_file', 'warn', join(root, '_turn_journal', 's2.jsonl')],
    ]);
  });

  it('follows a link given explicitly, and reports a device given explicitly without opening it', async () => {
    const outside = mkdtempSync(join(tmpdir(), 'tj-outside-'));
    mkdirSync(join(outside, '_turn_journal'));
    writeFileSync(join(outside, '_turn_journal', 's1.jsonl'), submitted);
    const link = join(mkdtempSync(join(tmpdir(), 'tj-links-')), 'store');
    symlinkSync(outside, link);
    const check = await checkStore([link]);
    expect(check.sessions.map((s) => s.turns.map((t) => t.turnId))).toEqual([['t1']]);
    const device = await checkStore(['/dev/zero']);
    expect(device.findings.map((f) => [f.code, f.file])).toEqual([['special_file', '/dev/zero']]);
  });

  // A name that is not valid UTF-8 comes back from a listing with U+FFFD in place of its bytes, and that string names
  // no file: the check said "could not be read to its end (ENOENT)" of a file that is there.
  it('says a file or directory name that is not valid UTF-8 cannot be opened by name, and reads the rest', async () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-names-'));
    const dir = join(root, '_turn_journal');
    mkdirSync(dir);
    const raw = (parent: string, name: Buffer) => Buffer.concat([Buffer.from(`${parent}/`), name]);
    writeFileSync(raw(dir, Buffer.from([0x63, 0xff, 0xfe, 0x2e, 0x6a, 0x73, 0x6f, 0x6e, 0x6c])), submitted);
    mkdirSync(raw(root, Buffer.from([0x73, 0xc3])));
    // Names the scan never reads are not its business, whatever their bytes: no finding.
    writeFileSync(raw(dir, Buffer.from([0x6e, 0xff, 0x2e, 0x74, 0x78, 0x74])), 'notes');
    writeFileSync(
      raw(dir, Buffer.from([0x73, 0xff, 0x2e, 0x6a, 0x73, 0x6f, 0x6e, 0x6c, 0x2e, 0x6c, 0x6f, 0x63, 0x6b])),
      '',
    );
    // A name that holds U+FFFD itself is valid UTF-8 and is read as usual.
    writeFileSync(join(dir, 's\uFFFD.jsonl'), submitted);
    writeFileSync(join(dir, 's1.jsonl'), submitted);
    const check = await checkStore([root]);
    expect(check.files.map((f) => f.path)).toEqual([join(dir, 's1.jsonl'), join(dir, 's\uFFFD.jsonl')]);
    const badFile = join(dir, readdirSync(dir).find((name) => name.startsWith('c')) ?? '');
    const badDir = join(root, readdirSync(root).find((name) => name.startsWith('s')) ?? '');
    const unread = check.findings.filter((f) => f.code === 'incomplete_read');
    // In the order of discovery: `_turn_journal` sorts before `s`.
    expect(unread.map((f) => [f.file, f.severity])).toEqual([
      [badFile, 'error'],
      [badDir, 'error'],
    ]);
    expect(unread[0]?.message).toBe(
      'the file name is not valid UTF-8, so it cannot be opened by name: nothing in it was read (rename it)',
    );
    expect(unread[1]?.message).toBe(
      'the directory name is not valid UTF-8, so it cannot be listed by name: nothing under it was read (rename it)',
    );
  });
});
