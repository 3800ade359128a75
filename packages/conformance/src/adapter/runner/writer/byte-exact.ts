import { rmSync } from 'node:fs';
import { truncate } from '../../process.js';
import { Random } from '../../random.js';
import { freshDir } from '../fresh-dir.js';
import { openHandle, type WriterContext, withAdapter } from './context.js';
import { heldBytes } from './store-lines.js';
import { target, writerRecord } from './support.js';

/** The line a writer writes for `record`: compact JSON (members in order), U+2028/U+2029 escaped, one LF. */
export function expectedLine(record: unknown): string {
  return `${JSON.stringify(record)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')}\n`;
}

function records(family: 'turn' | 'event', random: Random): Record<string, unknown>[] {
  const base = [0, 1, 2].map((seq) => writerRecord(family, seq, random));
  // Non-ASCII, escapes, nesting, numbers and an unknown member placed first: the serialisation must keep each.
  Object.assign(base[1] as object, {
    x_tj_detail: { 'z first': [1, 2.5, -3, true, null], quote: '"\\/\t', text: 'héllo – 日本 🎉 \u0001' },
  });
  return [
    { x_tj_first: 'members keep their order', ...base[0] },
    base[1] as Record<string, unknown>,
    base[2] as Record<string, unknown>,
  ];
}

/**
 * `writer/byte-exact`: the file holds exactly `JSON.stringify(record)` + LF per append — no spaces, members in the order
 * given, each member once, numbers as given, valid UTF-8, no BOM, no CR (TJ-FRAME-005, TJ-FRAME-006, TJ-FRAME-008,
 * TJ-FRAME-010, TJ-CONF-027). The harness compares the text, not a parse of it, so a writer that re-serialises
 * differently cannot pass; only the escaping of characters inside strings is left to the writer (JSON allows `\u00e9`
 * and `é` alike).
 */
export async function byteExactCheck(context: WriterContext): Promise<void> {
  const { claims, seed, recorder } = context;
  const family = claims.families.includes('turn') ? 'turn' : 'event';
  await recorder.record(
    'writer/byte-exact',
    'each append writes exactly the compact JSON of the record and one LF (bytes compared)',
    'writer',
    ['TJ-FRAME-005', 'TJ-FRAME-006', 'TJ-FRAME-008', 'TJ-FRAME-009', 'TJ-FRAME-010', 'TJ-CONF-027', 'TJ-CONF-052'],
    async () => writeAndCompare(context, 'tj-conf-bytes-', records(family, new Random(seed + 3))),
  );
  await recorder.record(
    'writer/escape-separators',
    'U+2028 and U+2029 inside strings are written escaped',
    'writer',
    ['TJ-FRAME-007'],
    async () => {
      const record = { ...writerRecord(family, 0, new Random(seed + 4)), x_tj_text: 'a\u2028b\u2029c' };
      return writeAndCompare(context, 'tj-conf-sep-', [record], true);
    },
  );
}

/**
 * The text with every JSON string token re-escaped as `JSON.stringify` escapes it (U+2028/U+2029 escaped): how a
 * writer escapes a character inside a string (`\u00e9` or `é`) is its choice; everything outside strings — spaces,
 * member order, numbers, line ends — is compared exactly.
 */
function sameEscapes(text: string): string {
  return text.replace(/"(?:[^"\\\n]|\\.)*"/g, (token) => {
    try {
      return expectedLine(JSON.parse(token) as string).slice(0, -1);
    } catch {
      return token;
    }
  });
}

async function writeAndCompare(
  context: WriterContext,
  prefix: string,
  appended: readonly Record<string, unknown>[],
  checkSeparators = false,
): Promise<{ failures: string[] }> {
  const dir = freshDir(prefix);
  const where = target(context.claims, dir);
  try {
    return await withAdapter(context, async (process) => {
      const handle = await openHandle(process, where.file, context.modes[0] as string);
      for (const record of appended) await process.request('append', { handle, record });
      await process.request('close', { handle });
      const expected = appended.map(expectedLine).join('');
      const bytes = await heldBytes(context, where.file, process);
      let text: string;
      try {
        text = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true }).decode(bytes);
      } catch {
        return { failures: ['the file is not valid UTF-8 (TJ-FRAME-006)'] };
      }
      const failures: string[] = [];
      if (text.startsWith('\ufeff')) failures.push('the file starts with a byte order mark (TJ-FRAME-008)');
      if (checkSeparators && /[\u2028\u2029]/.test(text))
        failures.push(
          'a raw U+2028 or U+2029 is in the file: writers escape them as \\u2028 and \\u2029 (TJ-FRAME-007)',
        );
      const actual = sameEscapes(text);
      if (actual !== expected) {
        const at = [...expected].findIndex((c, i) => actual[i] !== c);
        failures.push(
          `the file differs from JSON.stringify(record) + LF per append at character ${at < 0 ? expected.length : at} (string escapes aside)`,
          `expected: ${truncate(JSON.stringify(expected.slice(Math.max(0, at - 40))), 300)}`,
          `actual:   ${truncate(JSON.stringify(actual.slice(Math.max(0, at - 40))), 300)}`,
        );
      }
      return { failures };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
