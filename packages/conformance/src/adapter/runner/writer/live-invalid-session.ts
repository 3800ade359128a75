import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AdapterFailure } from '../../process.js';
import { freshDir } from '../fresh-dir.js';
import { snapshotTree, treeChanges } from '../tree-snapshot.js';
import { type WriterContext, withAdapter } from './context.js';
import { claimsFeature } from './support.js';

/** Session ids that are not valid identifiers (spec §4.3): a traversal to a log beside the store, and others. */
const INVALID_IDS = ['../outside', '..', 'a/b', 'a b', 's1~x'];
/** Valid identifiers that name the layout's own directories, in any case (spec §4.4, TJ-LIVE-037). */
const RESERVED_IDS = ['_turn_journal', 'Sessions', '_TURN_JOURNAL'];
/** What the log beside the store holds: a live session that answers it has read outside the store. */
const SECRET = 'outside the store';

/**
 * `writer/live-invalid-session` (feature `live`; TJ-FAM-011, TJ-FAM-010, TJ-LIVE-037): a live request whose session id
 * is not a valid identifier, or names a directory of the layout (`_turn_journal`, `sessions`, in any case), is answered
 * `bad_request`; the session reads nothing through it (an event log planted where
 * `<root>/../outside/events.jsonl` points stays unread) and creates or changes nothing anywhere.
 */
export async function liveInvalidSessionCheck(context: WriterContext): Promise<void> {
  await context.recorder.record(
    'writer/live-invalid-session',
    'live requests whose session id is not a valid identifier are answered bad_request and read or create nothing',
    'writer',
    ['TJ-FAM-011', 'TJ-FAM-010', 'TJ-LIVE-037'],
    async () => {
      if (!claimsFeature(context.claims, 'live')) return { skip: 'feature live not claimed' };
      const base = freshDir('tj-conf-live-ids-');
      try {
        const root = join(base, 'store');
        mkdirSync(root);
        mkdirSync(join(base, 'outside'));
        writeFileSync(
          join(base, 'outside', 'events.jsonl'),
          `${JSON.stringify({ seq: 0, ts: '2026-06-19T03:14:07Z', type: 'message_append', payload: { message: { role: 'user', content: SECRET } } })}\n`,
        );
        const before = snapshotTree(base);
        const failures: string[] = [];
        await withAdapter(context, async (process) => {
          for (const sessionId of [...INVALID_IDS, ...RESERVED_IDS])
            for (const [op, params] of [
              ['live_snapshot', {}],
              ['live_subscribe', { after: -1, timeout_ms: 200 }],
              ['live_open', {}],
            ] as const) {
              const what = `${op} with session id ${JSON.stringify(sessionId)}`;
              try {
                const answer = await process.request(op, { root, session_id: sessionId, ...params });
                const read = JSON.stringify(answer).includes(SECRET) ? ', with the log outside the store' : '';
                const rule = RESERVED_IDS.includes(sessionId) ? 'TJ-LIVE-037' : 'TJ-FAM-011';
                failures.push(`${what} was answered${read}, not bad_request (${rule})`);
              } catch (error) {
                if (!(error instanceof AdapterFailure && error.kind === 'error_response')) throw error;
                if (error.code !== 'bad_request') failures.push(`${what} was answered ${error.code}, not bad_request`);
              }
            }
        });
        failures.push(
          ...treeChanges(before, snapshotTree(base)).map((c) => `the live requests changed the disk: ${c}`),
        );
        return { failures };
      } finally {
        rmSync(base, { recursive: true, force: true });
      }
    },
  );
}
