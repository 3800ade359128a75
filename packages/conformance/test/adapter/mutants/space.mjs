// Reader defects of pre-allocated space (spec §3.8) for the mutation matrix: the reference reader, reading a copy of
// each store whose trailing NUL bytes were rewritten so that it makes the one mistake the defect names. The file's
// bytes are kept as they are otherwise (latin1 maps each byte to one character), so no other case changes.

/** The run of NUL bytes that ends a file. */
const TRAILING_NULS = /\0+$/;

/**
 * @param {(paths: string[], mode: string, audit: boolean, transform: (text: string) => string, encoding?: string) =>
 *   Promise<unknown>} readTransformed the broken adapter's read of transformed copies
 */
export const spaceDefects = (readTransformed) => ({
  // TJ-FRAME-036: space is reported as a torn tail, as readers written before §3.8 do (spaces stand in for the NULs:
  // bytes after the last LF that are not NUL, so the reference reports them as torn).
  'space-as-torn-tail': {
    read: (paths, mode, audit) =>
      readTransformed(
        paths,
        mode,
        audit,
        (text) => text.replace(TRAILING_NULS, (run) => ' '.repeat(run.length)),
        'latin1',
      ),
  },
  // TJ-FRAME-030: everything after the last LF of a file that ends in NUL bytes is taken for space, so a torn tail
  // before the space goes unreported.
  'nuls-hide-torn-tail': {
    read: (paths, mode, audit) =>
      readTransformed(
        paths,
        mode,
        audit,
        (text) => (TRAILING_NULS.test(text) ? text.slice(0, text.lastIndexOf('\n') + 1) : text),
        'latin1',
      ),
  },
});
