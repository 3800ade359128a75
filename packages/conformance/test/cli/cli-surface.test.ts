import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openTurnJournal } from '@turnjournal/writer';
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';

const repo = join(import.meta.dirname, '../../../..');
const bin = join(repo, 'packages/conformance/dist/cli/main.js');

function turnjournal(...args: string[]) {
  const result = spawnSync(process.execPath, [bin, ...args], { encoding: 'utf8', cwd: repo });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

function schemaValidator(name: string) {
  const schema = JSON.parse(readFileSync(join(repo, 'spec/v1', name), 'utf8'));
  return new Ajv2020({ strict: true, allErrors: true }).compile(schema);
}

/** A store with one pending turn whose writer is gone. */
async function pendingStore(): Promise<string> {
  const root = mkdtempSync(join(tmpdir(), 'tj-cli-surface-'));
  const journal = await openTurnJournal({ dir: join(root, '_turn_journal'), sessionId: 'sess' });
  await journal.submit({ content: 'left hanging', turnId: 't-pending' });
  await journal.close();
  return root;
}

describe('turnjournal command line', () => {
  it('--version prints the package version', () => {
    const manifest = JSON.parse(readFileSync(join(repo, 'packages/conformance/package.json'), 'utf8'));
    for (const flag of ['--version', '-v']) {
      const run = turnjournal(flag);
      expect(run.status).toBe(0);
      expect(run.stdout).toBe(`turnjournal ${manifest.version}\n`);
    }
  });

  it.each([
    [['check', '--foo', 'examples/store'], 'turnjournal: unknown option --foo (see turnjournal --help)\n'],
    [['check', '--format'], 'turnjournal: --format needs a value (see turnjournal --help)\n'],
    [['compact', '--dry-run=yes', 'x'], 'turnjournal: --dry-run takes no value (see turnjournal --help)\n'],
    [['frobnicate'], 'turnjournal: unknown command "frobnicate" (see turnjournal --help)\n'],
    [[], 'turnjournal: no command given (see turnjournal --help)\n'],
  ])('usage error %j: one line naming the mistake, exit 2', (args, stderr) => {
    const run = turnjournal(...args);
    expect(run.status).toBe(2);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(stderr);
  });

  it('a missing or broken --hooks module is a one-line usage error, not an internal error', async () => {
    const root = await pendingStore();
    const missing = turnjournal('recover', '--apply', '--hooks', join(root, 'nope.mjs'), root);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toBe(
      `turnjournal: recover: --hooks ${join(root, 'nope.mjs')}: no such file (see turnjournal --help)\n`,
    );
    writeFileSync(join(root, 'broken.mjs'), 'export function ensureUserMessage( {\n');
    const broken = turnjournal('recover', '--apply', '--hooks', join(root, 'broken.mjs'), root);
    expect(broken.status).toBe(2);
    expect(broken.stderr).toMatch(/^turnjournal: recover: --hooks \S+broken\.mjs could not be loaded: .+\n$/);
  });

  it('recover and compact JSON is snake_case and follows spec/v1/recover.schema.json and compact.schema.json', async () => {
    const root = await pendingStore();
    const recover = schemaValidator('recover.schema.json');
    const plan = JSON.parse(turnjournal('recover', '--format', 'json', root).stdout);
    expect(recover(plan), JSON.stringify(recover.errors)).toBe(true);
    expect(plan.plan[0]).toMatchObject({ session_id: 'sess', turn_id: 't-pending', state: 'submitted' });
    const applied = turnjournal('recover', '--apply', '--journal-only', '--format', 'json', root);
    expect(applied.status).toBe(0);
    const result = JSON.parse(applied.stdout);
    expect(recover(result), JSON.stringify(recover.errors)).toBe(true);
    expect(result).toMatchObject({ applied: true, complete: true, held_files: [] });
    const compact = schemaValidator('compact.schema.json');
    const swept = JSON.parse(turnjournal('compact', '--format', 'json', root).stdout);
    expect(compact(swept), JSON.stringify(compact.errors)).toBe(true);
    expect(swept.sweeps[0].sessions[0]).toHaveProperty('pruned_turn_ids');
  });

  it('validate JSON follows spec/v1/validate.schema.json', () => {
    const validate = schemaValidator('validate.schema.json');
    const output = JSON.parse(turnjournal('validate', '--format', 'json', 'examples/store').stdout);
    expect(validate(output), JSON.stringify(validate.errors)).toBe(true);
  });

  it('recover --apply exits 1 when a live writer holds a journal it had to leave alone', async () => {
    const root = await pendingStore();
    const held = await openTurnJournal({ dir: join(root, '_turn_journal'), sessionId: 'other' });
    await held.submit({ content: 'in progress', turnId: 't-live' });
    try {
      const run = turnjournal('recover', '--apply', '--journal-only', '--format', 'json', root);
      expect(run.status).toBe(1);
      const result = JSON.parse(run.stdout);
      expect(result.complete).toBe(false);
      expect(result.held_files).toEqual([join(root, '_turn_journal/other.jsonl')]);
      expect(result.turns).toEqual([
        expect.objectContaining({ session_id: 'sess', turn_id: 't-pending', outcome: 'recovered' }),
      ]);
      const text = turnjournal('recover', '--apply', '--journal-only', root);
      expect(text.status).toBe(1);
      expect(text.stdout).toContain('Not everything was recovered (exit 1)');
      // Printing the plan is not recovering: it stays 0.
      expect(turnjournal('recover', root).status).toBe(0);
    } finally {
      await held.close();
    }
  });

  it('JUnit output keeps warnings and infos (as the case output) and findings that belong to no file', () => {
    const run = turnjournal('check', '--format', 'junit', 'examples/store');
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/<system-out>warn torn_tail byte \d+: [^<]+<\/system-out>/);
  });

  it('escapes control characters of file names, ids and type names in text output', () => {
    const root = mkdtempSync(join(tmpdir(), 'tj-cli-escape-'));
    mkdirSync(join(root, '_turn_journal'));
    const name = 'evil\u001b[2J\u009b31m';
    writeFileSync(
      join(root, '_turn_journal', `${name}.jsonl`),
      `${JSON.stringify({ version: 1, event: 'x\u001b]0;pwned\u0007', turn_id: 't\u001b[31m', session_id: 's', created_at: 1 })}\n{bad\n`,
    );
    for (const command of ['check', 'inspect', 'audit', 'validate']) {
      const run = turnjournal(command, root);
      for (const raw of ['\u001b', '\u009b', '\u0007']) expect(run.stdout.includes(raw), command).toBe(false);
      expect(run.stdout, command).toContain('evil\\x1b[2J\\x9b31m');
    }
  });

  it('a reader that closes the pipe early (| head -1) ends the command quietly with its own exit code', async () => {
    const child = spawn(process.execPath, [bin, 'inspect', 'examples/store'], { cwd: repo });
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += String(chunk);
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });

  it('a passing conformance run prints no all-zero requirement rows', () => {
    const run = turnjournal(
      'conformance',
      '--adapter',
      `${process.execPath} ${bin} adapter`,
      '--tier',
      'reader',
      '--runs',
      '0',
      '--only',
      'reader/store/basics.json',
    );
    expect(run.status).toBe(0);
    expect(run.stdout).toMatch(/requirements: (\d+) exercised, \1 with every check passed/);
    expect(run.stdout).not.toContain('requirement       passed');
  });
});
