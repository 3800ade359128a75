import type { Finding } from '@turnjournal/schema';

/** Default cap on findings kept per code and file (spec TJ-AUDIT-013). */
export const DEFAULT_MAX_FINDINGS_PER_CODE = 1000;

/**
 * Collects findings, keeping at most a fixed number per code and file, and counting what it left out, because hostile
 * input can produce one finding per line.
 */
export class FindingSink {
  readonly #max: number;
  readonly #kept: Finding[] = [];
  readonly #perKey = new Map<string, number>();
  readonly #omitted = new Map<string, number>();

  /** @param maxPerCodeAndFile findings kept per (code, file); later ones are only counted. */
  constructor(maxPerCodeAndFile: number = DEFAULT_MAX_FINDINGS_PER_CODE) {
    this.#max = maxPerCodeAndFile;
  }

  /** Adds a finding, or counts it as omitted when its (code, file) is full. */
  add(finding: Finding): void {
    const key = `${finding.code}\u0000${finding.file ?? ''}`;
    const count = this.#perKey.get(key) ?? 0;
    if (count >= this.#max) {
      this.#omitted.set(finding.code, (this.#omitted.get(finding.code) ?? 0) + 1);
      return;
    }
    this.#perKey.set(key, count + 1);
    this.#kept.push(finding);
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
