import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { type AdapterImplementation, referenceImplementation, runAdapter } from '../support/internals.js';

// At `stop` the reference adapter closes every writer still open. A close that fails there cannot be answered to
// anyone: it goes to the diagnostics stream (TJ-CONF-013), never dropped, and the other writers are still closed.
describe('the reference adapter at stop', () => {
  it('writes a failed close of a writer to its diagnostics and still closes the others', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tj-adapter-stop-'));
    const closed: string[] = [];
    const implementation: AdapterImplementation = {
      ...referenceImplementation,
      async open(file, durability) {
        const writer = await referenceImplementation.open(file, durability);
        return {
          append: (record) => writer.append(record),
          async close() {
            await writer.close();
            closed.push(file);
            if (file.endsWith('a.jsonl')) throw Object.assign(new Error('EIO: injected on close'), { code: 'EIO' });
          },
        };
      },
    };
    const input = new PassThrough();
    const output = new PassThrough();
    let answers = '';
    output.setEncoding('utf8').on('data', (chunk: string) => {
      answers += chunk;
    });
    const diagnostics = new PassThrough();
    let said = '';
    diagnostics.setEncoding('utf8').on('data', (chunk: string) => {
      said += chunk;
    });
    const done = runAdapter(input, output, implementation, diagnostics);
    for (const request of [
      { id: 1, op: 'start', protocol: 1 },
      { id: 2, op: 'open', file: join(dir, 'a.jsonl'), durability: 'every' },
      { id: 3, op: 'open', file: join(dir, 'b.jsonl'), durability: 'every' },
    ])
      input.write(`${JSON.stringify(request)}\n`);
    // Requests run as they arrive: stop only once both writers are open.
    while (answers.split('\n').filter((line) => line.includes('"handle"')).length < 2)
      await new Promise((resolve) => setTimeout(resolve, 5));
    input.write(`${JSON.stringify({ id: 4, op: 'stop' })}\n`);
    await done;
    // The stream hands its data on in a later turn.
    await new Promise((resolve) => setImmediate(resolve));
    // Opened concurrently, the writers get their handles in the order their opens end.
    expect(said.match(/adapter: closing writer h[12] at stop failed: Error: EIO: injected on close/g)).toHaveLength(1);
    expect(closed.sort()).toEqual([join(dir, 'a.jsonl'), join(dir, 'b.jsonl')]);
  });
});
