import { rmSync } from 'node:fs';
import { hostname } from 'node:os';
import type { AdapterProcess } from '../../process.js';
import { freshDir } from '../fresh-dir.js';
import { answerCode, openHandle, type WriterContext, withAdapters } from './context.js';
import { impossiblePid, lockText, plantLock, target } from './support.js';

const WRITERS = 4;
/** A take-over wrong in this fraction of rounds (a race lost now and then)… */
const DEFECT_RATE = 0.05;
/** …fails the check with at least this probability (TJ-CONF-045). */
const CATCH_PROBABILITY = 0.99;
const STALE_ROUNDS = roundsToCatch(CATCH_PROBABILITY, DEFECT_RATE);
/** New files: a smoke check of the exclusive create, whose own catch probability the title states too. */
const NEW_FILE_ROUNDS = 10;
const ROUNDS = STALE_ROUNDS + NEW_FILE_ROUNDS;

/**
 * The rounds a randomized check needs to fail, with probability `catchProbability`, an implementation that goes wrong
 * independently in a fraction `defectRate` of rounds: the least n with 1 − (1 − rate)^n ≥ probability (TJ-CONF-045).
 */
export function roundsToCatch(catchProbability: number, defectRate: number): number {
  return Math.ceil(Math.log(1 - catchProbability) / Math.log(1 - defectRate));
}

/** The probability that `rounds` rounds catch a defect showing in a fraction `defectRate` of them. */
export function catchProbability(rounds: number, defectRate: number): number {
  return 1 - (1 - defectRate) ** rounds;
}

const percent = (p: number) => `${Math.floor(p * 1000) / 10} %`;

/**
 * `writer/race`: several adapter processes open one file at the same instant, in rounds with a file holding one stale
 * lock and rounds with a new file (one new-file round in every ten): exactly one must hold it (TJ-DUR-017,
 * TJ-DUR-025), the others answer `journal_locked` (TJ-DUR-018). The stale-lock rounds are as many as it takes to catch
 * a take-over wrong in 5 % of rounds with probability ≥ 99 %, which the title states. The processes are started once
 * and reused, so a round costs requests, not process starts.
 */
export async function raceCheck(context: WriterContext): Promise<void> {
  const { claims, modes, recorder } = context;
  await recorder.record(
    'writer/race',
    `${WRITERS} writers opening one file with a stale lock, or a new file, at the same instant: exactly one holds it (${STALE_ROUNDS} stale-lock rounds catch a take-over wrong in ${percent(DEFECT_RATE)} of rounds with probability ${percent(catchProbability(STALE_ROUNDS, DEFECT_RATE))}; ${NEW_FILE_ROUNDS} new-file rounds, ${percent(catchProbability(NEW_FILE_ROUNDS, DEFECT_RATE))})`,
    'writer',
    ['TJ-DUR-017', 'TJ-DUR-018', 'TJ-DUR-025', 'TJ-CONF-026', 'TJ-CONF-045', 'TJ-STORE-001'],
    async () =>
      withAdapters(context, WRITERS, async (processes) => {
        const failures: string[] = [];
        let round = 0;
        for (; round < ROUNDS; round++) {
          // A stale lock is a file of the file binding: a record store races on a new journal every round.
          const stale = !context.storeLines && (round % 10 !== 0 || round / 10 >= NEW_FILE_ROUNDS);
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
            // A lock file is the file binding's; a record store's owner is judged by who holds the journal above.
            if (!context.storeLines && winners >= 1 && lockText(where.file) !== null)
              failures.push(`${label}: the lock file is left behind after the holder closed`);
          } finally {
            rmSync(dir, { recursive: true, force: true });
          }
          if (failures.length >= 5) break;
        }
        return { failures, situations: Math.min(round + 1, ROUNDS) };
      }),
  );
}
