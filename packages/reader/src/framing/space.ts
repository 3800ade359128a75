/** Bytes compared at once against zeros while stepping over a long NUL run. */
const BLOCK = 4096;
const ZEROS = Buffer.alloc(BLOCK);

/**
 * The number of NUL bytes at the end of `bytes[from, to)`: the part of a file's last bytes that is pre-allocated space
 * when it reaches the end of the file (spec §3.8, TJ-FRAME-036). A line or torn tail almost always ends in another
 * byte, which costs one comparison; a run of space is stepped over a block at a time with a native comparison, so a
 * writer's space costs a memory scan, never a loop per byte in script.
 */
export function trailingNulCount(bytes: Uint8Array, from = 0, to = bytes.length): number {
  if (to <= from || bytes[to - 1] !== 0) return 0;
  let end = to;
  if (end - from >= BLOCK) {
    const view = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    while (end - from >= BLOCK && view.compare(ZEROS, 0, BLOCK, end - BLOCK, end) === 0) end -= BLOCK;
  }
  while (end > from && bytes[end - 1] === 0) end -= 1;
  return to - end;
}
