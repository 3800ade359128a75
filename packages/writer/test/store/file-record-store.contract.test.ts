// The record-store contract (spec §19) run against the file store, on the real file system.

import { utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { currentBootId, storePathSegments } from '@turnjournal/reader/store-format';
import { describeRecordStoreContract } from '@turnjournal/test-support';
import { openFileRecordStore } from '@turnjournal/writer/file-store';
import { expect, it } from 'vitest';
import { tempDir } from '../support/temp.js';

/** The lease the paused owner's lock is planted with: the take-over watches it for this long. */
const PAUSED_LEASE_MS = 200;

const checked = describeRecordStoreContract('file store', async () => {
  const root = tempDir();
  // A long lease: the owner renews it seldom, so a planted lock stays as planted while the take-over watches it.
  const open = () => openFileRecordStore({ root, channelPollMs: 10, lock: { leaseMs: 60_000 } });
  return {
    open,
    async takeOver(store, location) {
      // The owner paused past its lease, as seen from another container of this machine: its lock names another PID
      // namespace and was last renewed long ago. The take-over watches it for one lease, then gives the file a new
      // inode (TJ-DUR-041), so nothing the paused owner writes afterwards reaches the journal.
      const lock = `${join(root, ...storePathSegments(location))}.lock`;
      const bootId = currentBootId();
      const holder = {
        pid: process.pid,
        host: hostname(),
        token: 'paused',
        pid_ns: 'pid:[1]',
        lease_ms: PAUSED_LEASE_MS,
      };
      writeFileSync(lock, JSON.stringify(bootId === null ? holder : { ...holder, boot_id: bootId }));
      const long_ago = new Date(Date.now() - 3_600_000);
      utimesSync(lock, long_ago, long_ago);
      return store.openJournal(location, { durability: 'group' });
    },
    async dispose() {},
  };
});

it('checks every requirement of the seam (spec §19.1)', () => {
  expect([...checked].sort()).toEqual([
    'TJ-STORE-001',
    'TJ-STORE-002',
    'TJ-STORE-003',
    'TJ-STORE-004',
    'TJ-STORE-005',
    'TJ-STORE-006',
    'TJ-STORE-007',
    'TJ-STORE-008',
    'TJ-STORE-009',
  ]);
});
