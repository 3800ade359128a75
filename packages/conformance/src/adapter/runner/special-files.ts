import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareStoreObservation } from '../../fixtures/run-store-fixtures.js';
import type { StartResult } from '../protocol.js';
import { adapterReading } from './adapter-reading.js';
import { freshDir } from './fresh-dir.js';
import type { CheckRecorder } from './record.js';
import type { Session } from './session.js';

const submitted = (sessionId: string, turnId: string) =>
  `${JSON.stringify({ version: 1, event: 'submitted', turn_id: turnId, session_id: sessionId, created_at: 1, role: 'user', content: 'hi' })}\n`;

/**
 * `reader/special-files`: a store whose `_turn_journal` holds, beside a journal, a FIFO and a symbolic link to a
 * journal outside the store, both with journal names. A reader reports each as `special_file` and reads neither
 * (TJ-FAM-024, TJ-FAM-025): opening the FIFO would block the read until the request times out, and following the link
 * would take in turns from outside the store. Fixture files cannot hold a FIFO or a link, so the check builds the store.
 */
export async function specialFilesCheck(session: Session, claims: StartResult, recorder: CheckRecorder): Promise<void> {
  await recorder.record(
    'reader/special-files',
    'a FIFO and a symbolic link with journal names inside a store are reported as special_file and never read',
    'reader',
    ['TJ-FAM-024', 'TJ-FAM-025'],
    async () => {
      if (!claims.families.includes('turn')) return { skip: 'family turn not claimed' };
      const root = freshDir('tj-conf-special-');
      const outside = freshDir('tj-conf-outside-');
      try {
        const journals = join(root, '_turn_journal');
        mkdirSync(journals, { recursive: true });
        writeFileSync(join(journals, 's1.jsonl'), submitted('s1', 't1'));
        const fifo = spawnSync('mkfifo', [join(journals, 's2.jsonl')], { encoding: 'utf8' });
        if (fifo.status !== 0)
          return { skip: `mkfifo failed (${fifo.error?.message ?? fifo.stderr.trim()}): not proven`, unproven: true };
        writeFileSync(join(outside, 's3.jsonl'), submitted('s3', 't9'));
        symlinkSync(join(outside, 's3.jsonl'), join(journals, 's3.jsonl'));
        const reading = await adapterReading(await session.get(), root, 'tolerant', false);
        const expect = {
          turns: { s1: { t1: 'submitted' } },
          findings: [
            { code: 'special_file', file: '_turn_journal/s2.jsonl' },
            { code: 'special_file', file: '_turn_journal/s3.jsonl' },
          ],
        };
        return { failures: compareStoreObservation({ expect }, { ...reading, replay: [] }) };
      } finally {
        rmSync(root, { recursive: true, force: true });
        rmSync(outside, { recursive: true, force: true });
      }
    },
  );
}
