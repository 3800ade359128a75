import type { Finding } from '@turnjournal/schema';

/** Default cap on findings kept per code and file (spec TJ-AUDIT-013). */
export const DEFAULT_MAX_FINDINGS_PER_CODE = 1000;

/**
 * Default cap on findings kept per code over a whole store (spec TJ-AUDIT-016): the per-file cap alone lets 5,000
 * files of 1,000 bad lines keep 5 M findings, gigabytes in memory and a report no string can hold.
 */
export const DEFAULT_MAX_STORE_FINDINGS_PER_CODE = 10_000;

/**
 * Collects findings, keeping at most a fixed number per code and file and per code over the store, and counting what
 * it left out, because hostile input can produce one finding per line. Memory follows the caps, not the input.
 */
export class FindingSink {
  readonly #max: number;
  readonly #maxInStore: number;
  readonly #kept: Finding[] = [];
  // Kept per code, then per file: the file's own string is the key, with no key string made per finding (a store of
  // hostile files adds one per line, and past the cap that look-up is all the work done for one).
  readonly #perFile = new Map<string, Map<string, number>>();
  readonly #perCode = new Map<string, number>();
  readonly #omitted = new Map<string, number>();

  /**
   * @param maxPerCodeAndFile findings kept per (code, file); later ones are only counted.
   * @param maxPerCodeInStore findings kept per code over everything added; later ones are only counted.
   */
  constructor(
    maxPerCodeAndFile: number = DEFAULT_MAX_FINDINGS_PER_CODE,
    maxPerCodeInStore: number = DEFAULT_MAX_STORE_FINDINGS_PER_CODE,
  ) {
    this.#max = maxPerCodeAndFile;
    this.#maxInStore = maxPerCodeInStore;
  }

  /** Adds a finding, or counts it as omitted when its (code, file) or its code is full. */
  add(finding: Finding): void {
    this.addBuilt(finding.code, finding.file, () => finding);
  }

  /**
   * Adds the finding `build` returns, calling it only when a finding of this code and file would be kept; otherwise
   * counts one omitted. For findings made per turn or per line: past the cap, none is built.
   */
  addBuilt(code: string, file: string | undefined, build: () => Finding): void {
    const inStore = this.#perCode.get(code) ?? 0;
    if (inStore >= this.#maxInStore) {
      this.#omit(code, 1);
      return;
    }
    let perFile = this.#perFile.get(code);
    if (perFile === undefined) {
      perFile = new Map();
      this.#perFile.set(code, perFile);
    }
    const count = perFile.get(file ?? '') ?? 0;
    if (count >= this.#max) {
      this.#omit(code, 1);
      return;
    }
    perFile.set(file ?? '', count + 1);
    this.#perCode.set(code, inStore + 1);
    this.#kept.push(build());
  }

  /** Counts findings another sink already left out, so that a sink fed from a check's findings keeps its counts. */
  addOmitted(omitted: Readonly<Record<string, number>>): void {
    for (const [code, count] of Object.entries(omitted)) this.#omit(code, count);
  }

  #omit(code: string, count: number): void {
    this.#omitted.set(code, (this.#omitted.get(code) ?? 0) + count);
  }

  /** The findings kept, in the order they were added. */
  get findings(): readonly Finding[] {
    return this.#kept;
  }

  /** How many findings of each code were left out. */
  get omitted(): Readonly<Record<string, number>> {
    return Object.fromEntries(this.#omitted);
  }
}
