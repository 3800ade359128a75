import { type Finding, makeFinding } from '@turnjournal/schema';
import type { CommittedLine } from './line-splitter.js';

const CR = 0x0d;
const E2 = 0xe2;

/**
 * Notices what a writer MUST NOT (or SHOULD NOT) write although readers cope with it (spec TJ-FAM-026): a CR before
 * the LF (TJ-FRAME-009), a byte order mark (TJ-FRAME-008), a raw U+2028 or U+2029 (TJ-FRAME-007). Each is reported
 * once per file, at its first line, as an `info` finding: the data is read as it is, but the implementer learns that
 * their writer is wrong. One instance per read; each check stops once its finding is made, so a clean file pays a
 * byte comparison or two per line and one native search for 0xE2.
 */
export class WriterViolations {
  #crlf = false;
  #bom = false;
  #separator = false;

  /**
   * Checks one committed line; returns the findings it calls for (at most one of each code per file), or undefined
   * (the common case, with nothing allocated). `exactLines` false: the read began part-way, so no line number.
   */
  check(line: CommittedLine, file: string, exactLines: boolean): Finding[] | undefined {
    const bytes = line.bytes;
    let out: Finding[] | undefined;
    if (!this.#bom && line.offset === 0 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) {
      this.#bom = true;
      out = append(
        out,
        makeFinding(
          'writer_violation_bom',
          'the file starts with a byte order mark; writers MUST NOT write one',
          locate(line, file, exactLines),
        ),
      );
    }
    if (!this.#crlf && bytes.length > 0 && bytes[bytes.length - 1] === CR) {
      this.#crlf = true;
      out = append(
        out,
        makeFinding(
          'writer_violation_crlf',
          'a line ends with CR LF; writers MUST end lines with LF alone (reported once per file, at its first line)',
          locate(line, file, exactLines),
        ),
      );
    }
    if (!this.#separator) {
      // U+2028 and U+2029 are E2 80 A8 and E2 80 A9 in UTF-8.
      for (let i = bytes.indexOf(E2); i >= 0 && i + 2 < bytes.length; i = bytes.indexOf(E2, i + 1)) {
        if (bytes[i + 1] === 0x80 && (bytes[i + 2] === 0xa8 || bytes[i + 2] === 0xa9)) {
          this.#separator = true;
          const name = bytes[i + 2] === 0xa8 ? '2028' : '2029';
          out = append(
            out,
            makeFinding(
              'writer_violation_unescaped_separator',
              `a raw U+${name} at byte ${line.offset + i}; writers SHOULD escape it as \\u${name} (reported once per file)`,
              locate(line, file, exactLines),
            ),
          );
          break;
        }
      }
    }
    return out;
  }
}

// Where a line is: without a line number when the read started part-way.
function locate(line: CommittedLine, file: string, exactLines: boolean) {
  return exactLines ? { file, line: line.number, offset: line.offset } : { file, offset: line.offset };
}

function append(out: Finding[] | undefined, finding: Finding): Finding[] {
  if (out === undefined) return [finding];
  out.push(finding);
  return out;
}
