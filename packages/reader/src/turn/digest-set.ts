import { CANONICAL_DIGEST_BYTES } from './canonical-json.js';

// One entry: the slot plus one (0 marks a free entry), then the digest as four 32-bit words.
const WORDS = 1 + CANONICAL_DIGEST_BYTES / 4;
const INITIAL_ENTRIES = 64;

/**
 * A set of (slot, canonical digest) pairs: the distinct records seen of each turn event that has more than one. An
 * open-addressing table in one typed array, so a million distinct records of one turn (hostile input, issue 11
 * defect 8) cost 40 bytes each and one probe each, where a list compared with every new record cost time quadratic in
 * their number. Internal to the reader.
 */
export class DigestSet {
  #table = new Uint32Array(INITIAL_ENTRIES * WORDS);
  #size = 0;

  /** Adds the pair; returns false when it was there already. */
  add(slot: number, digest: Uint8Array): boolean {
    const words = wordsOf(digest);
    if (this.#find(this.#table, slot, words) < 0) return false;
    if ((this.#size + 1) * 2 > this.#table.length / WORDS) this.#grow();
    const at = this.#find(this.#table, slot, words);
    this.#put(this.#table, at, slot, words);
    this.#size += 1;
    return true;
  }

  /**
   * Where the pair is, as a negative number, or the free entry where it would go (both as word offsets, the found one
   * as `-1 - offset`): linear probing from a position the digest's first word picks, which is as random as SHA-256.
   */
  #find(table: Uint32Array, slot: number, words: readonly number[]): number {
    const entries = table.length / WORDS;
    let entry = ((words[0] as number) ^ Math.imul(slot, 0x9e3779b1)) >>> 0;
    for (entry %= entries; ; entry = (entry + 1) % entries) {
      const at = entry * WORDS;
      const stored = table[at] as number;
      if (stored === 0) return at;
      if (
        stored === slot + 1 &&
        table[at + 1] === words[0] &&
        table[at + 2] === words[1] &&
        table[at + 3] === words[2] &&
        table[at + 4] === words[3]
      )
        return -1 - at;
    }
  }

  #put(table: Uint32Array, at: number, slot: number, words: readonly number[]): void {
    table[at] = slot + 1;
    for (let i = 0; i < 4; i += 1) table[at + 1 + i] = words[i] as number;
  }

  #grow(): void {
    const old = this.#table;
    const table = new Uint32Array(old.length * 2);
    for (let at = 0; at < old.length; at += WORDS) {
      const stored = old[at] as number;
      if (stored === 0) continue;
      const words = [old[at + 1], old[at + 2], old[at + 3], old[at + 4]] as number[];
      this.#put(table, this.#find(table, stored - 1, words), stored - 1, words);
    }
    this.#table = table;
  }
}

function wordsOf(digest: Uint8Array): number[] {
  const view = new DataView(digest.buffer, digest.byteOffset, CANONICAL_DIGEST_BYTES);
  return [view.getUint32(0), view.getUint32(4), view.getUint32(8), view.getUint32(12)];
}
