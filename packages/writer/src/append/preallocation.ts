/**
 * How much space the reference writer pre-allocates after a file's lines (spec §11.6). A sync after an append that
 * grows a file commits its new length too (on ext4, a journal commit); an overwrite of space the file already holds
 * commits only the data. On this project's machine (ext4 on virtio) an overwrite of written zeros plus fdatasync costs
 * clearly less than an append plus fdatasync: `bench/figures/durable-submit.ts` measures both
 * (bench/results/history.md, "Figures that were in code comments").
 */

/** The most space kept after the lines: the spec's SHOULD (TJ-DUR-035) asks for small, and this is what we keep. */
export const MAX_SPACE_BYTES = 64 * 1024;
/** The least space added at once, and the alignment of the file's end: a page. */
const PAGE_BYTES = 4096;

/**
 * Where the file should end after an append that ends at `linesEnd` and goes past the space: space for about as many
 * bytes as the file holds (at least a page, at most {@link MAX_SPACE_BYTES}), so a small session's journal does not
 * reserve 64 KiB and a busy one extends once per 64 KiB of records; the end is page-aligned when the bound allows.
 */
export function nextSpaceEnd(linesEnd: number): number {
  const growth = Math.min(MAX_SPACE_BYTES, Math.max(PAGE_BYTES, linesEnd));
  const aligned = Math.ceil((linesEnd + growth) / PAGE_BYTES) * PAGE_BYTES;
  return Math.min(aligned, linesEnd + MAX_SPACE_BYTES);
}

/**
 * Where to extend the space ahead of the appends, off the path of any of them, once the lines end at `linesEnd` and
 * the space at `fileEnd`: to {@link nextSpaceEnd} when less than half of what that would give is left, so that the
 * appends after it write into space the file already holds and their syncs commit no new length. Undefined when
 * enough is left, when the file has no space in use (it was never pre-allocated, or the lines reach its end: the next
 * append then extends it itself), and while the space is smaller than {@link MAX_SPACE_BYTES}: a small journal's
 * space grows with it, a page and then as much as it holds, and extending each step ahead would add a sync every few
 * appends of a journal that is mostly opened, appended to a few times and closed.
 */
export function spaceEndAhead(linesEnd: number, fileEnd: number): number | undefined {
  const left = fileEnd - linesEnd;
  if (left <= 0) return undefined;
  const wanted = nextSpaceEnd(linesEnd);
  if (wanted - linesEnd < MAX_SPACE_BYTES) return undefined;
  return 2 * left < wanted - linesEnd ? wanted : undefined;
}
