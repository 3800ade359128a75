import { describe, expect, it } from 'vitest';
import { expectedRunIndex } from '../../../src/adapter/runner/writer/event-checkpoints.js';

describe('the run index the harness expects in a checkpoint (spec §6.2, TJ-EVENT-019)', () => {
  const at = (seq: number, type: string, payload: Record<string, unknown>) => ({ seq, ts: `t${seq}`, type, payload });

  it('takes the first start and the first finish of each run, and every client that acknowledged it once', () => {
    const index = expectedRunIndex([
      at(0, 'chat.started', { request_id: 'r1' }),
      at(1, 'chat.started', { request_id: 'r1' }),
      at(2, 'chat.done', { request_id: 'r1' }),
      at(3, 'chat.error', { request_id: 'r1', error: { message: 'late' } }),
      at(4, 'delivery.ack', { request_id: 'r1', client_id: 'c1' }),
      at(5, 'delivery.ack', { request_id: 'r1', client_id: 'c1' }),
      at(6, 'delivery.ack', { request_id: 'r1' }),
      at(7, 'chat.started', { request_id: 'r2' }),
      at(8, 'delivery.ack', { request_id: 'unknown', client_id: 'c9' }),
    ]);
    expect(index).toEqual([
      {
        request_id: 'r1',
        started_seq: 0,
        started_ts: 't0',
        outcome: 'done',
        finished_seq: 2,
        finished_ts: 't2',
        acked: true,
        acked_by: ['c1'],
      },
      {
        request_id: 'r2',
        started_seq: 7,
        started_ts: 't7',
        outcome: null,
        finished_seq: null,
        finished_ts: null,
        acked: false,
        acked_by: [],
      },
    ]);
  });
});
