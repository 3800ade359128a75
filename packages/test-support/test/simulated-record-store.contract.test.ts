// The record-store contract (spec §19) run against the simulated store: the seam's second backend, a model of a
// database (asynchronous commits, a channel shared by store instances, owners fenced by an epoch).

import { storePathSegments } from '@turnjournal/reader/store-format';
import { expect, it } from 'vitest';
import { describeRecordStoreContract, SimulatedBacking, SimulatedRecordStore } from '../src/index.js';

const checked = describeRecordStoreContract('simulated store', async () => {
  const backing = new SimulatedBacking();
  return {
    open: () => new SimulatedRecordStore(backing),
    async takeOver(store, location) {
      backing.takeOver(storePathSegments(location).join('/'));
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
