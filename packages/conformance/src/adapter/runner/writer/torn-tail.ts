import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { truncate } from '../../process.js';
import { Random } from '../../random.js';
import { freshDir } from '../fresh-dir.js';
import { spawnAdapter, started, type WriterContext } from './context.js';
import { prefixProblems, survivors, target, writerRecord } from './support.js';

/** `writer/torn-tail`: opening a file that ends in a torn tail repairs it before appending. */
export async function tornTailCheck(context: WriterContext): Promise<void> {
  await appendAfterEndCheck(
    context,
    'writer/torn-tail',
    'opening a file that ends in a torn tail repairs it before appending',
    ['TJ-DUR-004', 'TJ-DUR-005'],
    Buffer.from('{"version":1,"event":"completed","turn_id":"t000000","crea'),
  );
}

/**
 * `writer/preallocated-space`: opening a file whose lines are followed by pre-allocated space (NUL bytes to the end,
 * spec §3.8, as a pre-allocating writer leaves it when it dies) appends at the start of the space, never after it: a
 * record after the space would follow a NUL run inside its line, which readers report as damage.
 */
export async function preallocatedSpaceCheck(context: WriterContext): Promise<void> {
  await appendAfterEndCheck(
    context,
    'writer/preallocated-space',
    'opening a file that ends in pre-allocated space appends at its start, not after it',
    ['TJ-DUR-033'],
    Buffer.alloc(4096),
  );
}

/**
 * Writes two complete records followed by `end`, has the adapter open the file, append a third record and close it,
 * then reads the file back: the three records must be a gap-free prefix, with no damage and no torn tail.
 */
async function appendAfterEndCheck(
  context: WriterContext,
  id: string,
  title: string,
  requirements: readonly string[],
  end: Uint8Array,
): Promise<void> {
  const { claims, modes, seed, recorder } = context;
  await recorder.record(id, title, 'writer', requirements, async () => {
    const dir = freshDir('tj-conf-end-');
    const where = target(claims, dir);
    const random = new Random(seed);
    const complete = [0, 1].map((seq) => `${JSON.stringify(writerRecord(where.family, seq, random))}\n`).join('');
    writeFileSync(where.file, Buffer.concat([Buffer.from(complete), end]));
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
        failures.push(`file: ${truncate(JSON.stringify(readFileSync(where.file, 'latin1')), 600)}`);
      return { failures };
    } finally {
      await process.dispose();
      rmSync(dir, { recursive: true, force: true });
    }
  });
}
