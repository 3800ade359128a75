import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import type { AdapterProcess } from '../../process.js';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, type WriterContext, withAdapters } from './context.js';
import { impossiblePid, lockText, plantLock, target } from './support.js';

const WRITERS = 4;
const ROUNDS = 20;

/**
 * `writer/race`: several adapter processes open one file at the same instant, ≥ 20 rounds, alternating a new file and
 * a file with one stale lock: exactly one must hold it (TJ-DUR-017, TJ-DUR-025), the others answer `journal_locked`
 * (TJ-DUR-018). The processes are started once and reused, so a round costs requests, not process starts.
 */
export async function raceCheck(context: WriterContext): Promise<void> {
  const { claims, modes, recorder } = context;
  await recorder.record(
    'writer/race',
    `${WRITERS} writers opening one new file, or one file with a stale lock, at the same instant (${ROUNDS} rounds): exactly one holds it`,
    'writer',
    ['TJ-DUR-017', 'TJ-DUR-018', 'TJ-DUR-025', 'TJ-CONF-026'],
    async () =>
      withAdapters(context, WRITERS, async (processes) => {
        const failures: string[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const stale = round % 2 === 1;
          const dir = freshDir('tj-conf-race-');
          const where = target(claims, dir);
          if (stale) plantLock(where.file, { pid: impossiblePid(), host: hostname(), token: `stale-${round}` });
          try {
            const handles: (string | null)[] = processes.map(() => null);
            const codes = await Promise.all(
              processes.map((p, i) =>
                answerCode(
                  openHandle(p, where.file, modes[0] as string).then((h) => {
                    handles[i] = h;
                  }),
                ),
              ),
            );
            const winners = codes.filter((c) => c === 'ok').length;
            const label = `round ${round} (${stale ? 'stale lock' : 'new file'})`;
            if (winners !== 1)
              failures.push(`${label}: ${winners} writers hold the file (answers: ${codes.join(', ')})`);
            const others = codes.filter((c) => c !== 'ok' && c !== 'journal_locked');
            if (others.length > 0) failures.push(`${label}: losers answered ${others.join(', ')}, not journal_locked`);
            for (const [i, handle] of handles.entries())
              if (handle !== null) await (processes[i] as AdapterProcess).request('close', { handle });
            if (winners >= 1 && lockText(where.file) !== null)
              failures.push(`${label}: the lock file is left behind after the holder closed`);
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
          if (failures.length >= 5) break;
        }
        return { failures };
      }),
  );
}
