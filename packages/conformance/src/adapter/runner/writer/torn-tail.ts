import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { truncate } from '../../process.js';
import { Random } from '../../random.js';
import { freshDir } from '../fresh-dir.js';
import { spawnAdapter, started, type WriterContext } from './context.js';
import { prefixProblems, survivors, target, writerRecord } from './support.js';

/** `writer/torn-tail`: opening a file that ends in a torn tail repairs it before appending. */
export async function tornTailCheck(context: WriterContext): Promise<void> {
  const { claims, modes, seed, recorder } = context;
  const record = recorder.record.bind(recorder);
  await record(
    'writer/torn-tail',
    'opening a file that ends in a torn tail repairs it before appending',
    'writer',
    ['TJ-DUR-004', 'TJ-DUR-005'],
    async () => {
      const dir = freshDir('tj-conf-torn-');
      const where = target(claims, dir);
      const random = new Random(seed);
      const complete = [0, 1].map((seq) => `${JSON.stringify(writerRecord(where.family, seq, random))}\n`).join('');
      writeFileSync(where.file, `${complete}{"version":1,"event":"completed","turn_id":"t000000","crea`);
      const process = spawnAdapter(context);
      try {
        await started(process);
        const { handle } = (await process.request('open', { file: where.file, durability: modes[0] })) as {
          handle: string;
        };
        await process.request('append', { handle, record: writerRecord(where.family, 2, random) });
        await process.request('close', { handle });
        await process.stop();
        const final = await survivors(where.file);
        const failures = prefixProblems(final.seqs, 3);
        for (const f of final.findings) failures.push(`damage: ${f}`);
        if (final.torn) failures.push('the file still ends in a torn tail');
        if (failures.length > 0)
          failures.push(`file: ${truncate(JSON.stringify(readFileSync(where.file, 'utf8')), 600)}`);
        return { failures };
      } finally {
        await process.dispose();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  );
}
