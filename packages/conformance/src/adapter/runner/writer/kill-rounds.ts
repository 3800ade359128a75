import { rmSync } from 'node:fs';
import { checkStore } from '@turnjournal/reader';
import { FINDING_CODES } from '@turnjournal/schema';
import { AdapterFailure, truncate } from '../../process.js';
import { Random } from '../../random.js';
import { freshDir } from '../fresh-dir.js';
import { spawnAdapter, started, type WriterContext } from './context.js';
import { heldSurvivors } from './store-lines.js';
import { prefixProblems, target, writerRecord } from './support.js';

/**
 * `writer/ack-oracle` and `writer/restart`: rounds of appends killed with SIGKILL at a random moment, then a second
 * writer that takes over, repairs and appends (TJ-CONF-009). One loop feeds both checks: each round's restart needs
 * the state the kill left.
 */
export async function killRoundChecks(context: WriterContext): Promise<void> {
  const { claims, modes, rounds, seed, recorder } = context;
  const record = recorder.record.bind(recorder);
  const oracle: string[] = [];
  const restart: string[] = [];
  const killRounds = recorder.selected('writer/ack-oracle') || recorder.selected('writer/restart') ? rounds : 0;
  for (let round = 0; round < killRounds; round++) {
    const roundSeed = (seed ^ 0x5bd1e995) + round * 104_729;
    const random = new Random(roundSeed);
    const durability = modes[round % modes.length] as string;
    const dir = freshDir('tj-conf-writer-');
    const where = target(claims, dir);
    const label = `round ${round} (seed ${roundSeed}, ${durability})`;
    const first = spawnAdapter(context);
    try {
      await started(first);
      const { handle } = (await first.request('open', { file: where.file, durability })) as { handle: string };
      const total = random.int(10, 150);
      const killAfter = random.int(0, total);
      const acked = new Set<number>();
      const errors: string[] = [];
      const appends: Promise<unknown>[] = [];
      if (killAfter === 0) void first.kill();
      for (let seq = 0; seq < total; seq++) {
        appends.push(
          first.request('append', { handle, record: writerRecord(where.family, seq, random) }).then(
            () => {
              acked.add(seq);
              if (acked.size === killAfter) void first.kill();
            },
            (error: unknown) => {
              if (!(error instanceof AdapterFailure && error.kind === 'exited')) errors.push(String(error));
            },
          ),
        );
      }
      await Promise.all(appends);
      await first.kill();
      for (const error of errors.slice(0, 3)) oracle.push(`${label}: append failed: ${error}`);
      const after = await heldSurvivors(context, where.file);
      const problems = [...prefixProblems(after.seqs), ...after.findings.map((f) => `damage: ${f}`)];
      const lost = [...acked].filter((seq) => !after.seqs.includes(seq));
      if (lost.length > 0)
        problems.push(
          `acknowledged records lost: x_tj_seq ${truncate(JSON.stringify(lost.sort((a, b) => a - b)), 200)}`,
        );
      for (const p of problems) oracle.push(`${label}: ${p} (${acked.size} acked of ${total} sent)`);

      // Restart: open must take over the dead writer's lock and repair the torn tail; then append and close.
      const k = after.seqs.length;
      const second = await started(spawnAdapter(context));
      try {
        const reopened = (await second.request('open', { file: where.file, durability })) as { handle: string };
        const more = random.int(1, 10);
        await Promise.all(
          Array.from({ length: more }, (_, i) =>
            second.request('append', { handle: reopened.handle, record: writerRecord(where.family, k + i, random) }),
          ),
        );
        await second.request('close', { handle: reopened.handle });
        const code = await second.stop();
        if (code !== 0) restart.push(`${label}: the adapter exited with ${code} after stop`);
        const final = await heldSurvivors(context, where.file);
        for (const p of prefixProblems(final.seqs, k + more)) restart.push(`${label}: after restart: ${p}`);
        if (final.torn) restart.push(`${label}: the file ends in a torn tail after close`);
        for (const f of final.findings) restart.push(`${label}: after restart: damage: ${f}`);
        // A store that is not files is judged by its lines alone (above): there is no directory to audit.
        const errorsInStore = context.storeLines
          ? []
          : (await checkStore([where.root])).findings.filter(
              (f) => FINDING_CODES[f.code as keyof typeof FINDING_CODES]?.severity === 'error',
            );
        for (const f of errorsInStore.slice(0, 3)) restart.push(`${label}: after restart: ${f.code}: ${f.message}`);
      } catch (error) {
        restart.push(`${label}: after the kill: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        await second.dispose();
      }
    } catch (error) {
      oracle.push(`${label}: ${error instanceof Error ? error.message : String(error)}`);
    } finally {
      await first.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  await record(
    'writer/ack-oracle',
    `after SIGKILL at a random moment (${rounds} rounds), every acknowledged record survives exactly once and survivors are a gap-free prefix`,
    'writer',
    [
      'TJ-CONF-009',
      'TJ-CONF-020',
      'TJ-CONF-027',
      'TJ-CONF-052',
      'TJ-DUR-003',
      'TJ-DUR-006',
      'TJ-DUR-024',
      'TJ-STORE-002',
      'TJ-STORE-003',
      'TJ-STORE-004',
      // On a PostgreSQL store (feature store-lines), an acknowledgement before the commit is a record the kill loses.
      'TJ-STORE-022',
    ],
    async () =>
      rounds === 0
        ? { skip: 'no rounds (--runs 0): not proven', unproven: true }
        : { failures: oracle, situations: rounds },
  );
  await record(
    'writer/restart',
    'after a crash, a new writer takes over the lock, repairs the torn tail and appends cleanly, and close keeps every acknowledged record',
    'writer',
    ['TJ-DUR-004', 'TJ-DUR-005', 'TJ-DUR-019', 'TJ-DUR-024'],
    async () =>
      rounds === 0
        ? { skip: 'no rounds (--runs 0): not proven', unproven: true }
        : { failures: restart, situations: rounds },
  );
}
