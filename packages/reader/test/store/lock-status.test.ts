import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { describe, expect, it } from 'vitest';
import { currentBootId, readLockStatus } from '../../src/index.js';
import { tempFile } from '../support/temp.js';

describe('readLockStatus (spec §11.4)', () => {
  it('tells no lock, a live holder, a dead holder, and a holder it cannot prove dead apart', () => {
    const file = tempFile('');
    expect(readLockStatus(file)).toBe('none');
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: process.pid, host: hostname(), token: 't' }));
    expect(readLockStatus(file)).toBe('live');
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: Number(dead.stdout), host: hostname(), token: 't' }));
    expect(readLockStatus(file)).toBe('stale');
    writeFileSync(`${file}.lock`, JSON.stringify({ pid: 1, host: 'another-host', token: 't' }));
    expect(readLockStatus(file)).toBe('unproven');
    writeFileSync(`${file}.lock`, 'not json');
    expect(readLockStatus(file)).toBe('unproven');
  });

  it('proves a holder dead when the lock records another boot of this machine, even if its pid runs now', () => {
    const file = tempFile('');
    const lock = { pid: process.pid, host: hostname(), token: 't' };
    writeFileSync(`${file}.lock`, JSON.stringify({ ...lock, boot_id: currentBootId() ?? 'no-boot-id' }));
    expect(readLockStatus(file)).toBe('live');
    writeFileSync(`${file}.lock`, JSON.stringify({ ...lock, boot_id: 'an-earlier-boot' }));
    expect(readLockStatus(file)).toBe(currentBootId() === null ? 'live' : 'stale');
  });
});
