import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { processGroupMembers, processGroupPeakBytes } from '../../../src/adapter/process-group.js';
import { freshDir } from '../../../src/adapter/runner/fresh-dir.js';
import { LARGE_STORE_PATHS, writeLargeStore } from '../../../src/adapter/runner/large-store.js';
import {
  compareStoreObservation,
  readStoreReference,
  relativeReading,
} from '../../../src/fixtures/run-store-fixtures.js';

// The expectation `reader/bounded-memory` holds an adapter's answer to is stated by the generator; here the reference
// reader reads the same store, so that the statement is a computed one (TJ-FRAME-033).

const roots: string[] = [];
afterEach(() => {
  for (const root of roots.splice(0)) rmSync(root, { recursive: true, force: true });
});

describe('writeLargeStore', () => {
  it('states what the reference reader derives from the store, and writes files of the size asked for', async () => {
    const root = freshDir('tj-large-store-test-');
    roots.push(root);
    const { bytes, expected } = writeLargeStore(root, ['turn', 'event', 'run'], 256 * 1024);
    const reading = relativeReading(await readStoreReference([root]), root);
    expect(compareStoreObservation({ expect: expected }, { ...reading, replay: [] })).toEqual([]);
    expect(Object.keys(reading.event_logs)).toEqual([LARGE_STORE_PATHS.event]);
    expect(reading.turns).toEqual({ s1: { t1: 'completed' } });
    const sizes = Object.values(LARGE_STORE_PATHS).map((path) => readFileSync(join(root, path)).length);
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(bytes);
    // Each file reaches the size asked for, and overshoots it by at most its longest record and the closing records.
    for (const size of sizes) expect(size).toBeGreaterThanOrEqual(256 * 1024);
    for (const size of sizes) expect(size).toBeLessThan(256 * 1024 + 8 * 1024);
  });

  it('states what the reference reader derives from a store of tiny records, about ten times as many lines', async () => {
    const bulkyRoot = freshDir('tj-large-store-test-');
    const tinyRoot = freshDir('tj-large-store-test-');
    roots.push(bulkyRoot, tinyRoot);
    const bulky = writeLargeStore(bulkyRoot, ['turn', 'event', 'run'], 256 * 1024, 'bulky');
    const tiny = writeLargeStore(tinyRoot, ['turn', 'event', 'run'], 256 * 1024, 'tiny');
    const reading = relativeReading(await readStoreReference([tinyRoot]), tinyRoot);
    expect(compareStoreObservation({ expect: tiny.expected }, { ...reading, replay: [] })).toEqual([]);
    const lineBytes = (store: { lines: number; bytes: number }) => store.bytes / store.lines;
    expect(lineBytes(tiny)).toBeLessThan(100);
    expect(tiny.lines).toBeGreaterThan(8 * bulky.lines);
  });

  it('writes only the families asked for', () => {
    const root = freshDir('tj-large-store-test-');
    roots.push(root);
    const { expected } = writeLargeStore(root, ['run'], 4096);
    expect(expected).toEqual({
      turns: {},
      findings: [],
      runs: { [LARGE_STORE_PATHS.run]: 'completed' },
      event_logs: {},
    });
  });
});

describe.runIf(process.platform === 'linux')('process group memory', () => {
  it("finds this process's group and a peak at least as large as its resident memory", () => {
    const group = Number(readFileSync('/proc/self/stat', 'utf8').split(') ')[1]?.split(' ')[2]);
    expect(processGroupMembers(group)).toContain(process.pid);
    expect(processGroupPeakBytes(group)).toBeGreaterThanOrEqual(process.memoryUsage().rss * 0.5);
  });
});
