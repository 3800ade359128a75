const INITIAL_ENTRIES = 64;

/**
 * The places of a fold's turns by id, for a journal whose ids do not come in order (see TurnFold): an open-addressing
 * table of `place + 1` in one typed array, probed from the hash of the id's UTF-8 bytes. The ids themselves stay in
 * the arena's byte pool, so a turn costs 8 bytes here, where a map keyed by id strings held a string and an entry for
 * each. Internal to the reader.
 */
export class IdIndex {
  #table = new Uint32Array(INITIAL_ENTRIES);
  #size = 0;
  readonly #hashOf: (place: number) => number;

  /** @param hashOf the hash of the id of the turn at a place (for growing the table). */
  constructor(hashOf: (place: number) => number) {
    this.#hashOf = hashOf;
  }

  /** The place whose id has this hash and for which `matches` holds, or -1. */
  find(hash: number, matches: (place: number) => boolean): number {
    const table = this.#table;
    for (let at = hash % table.length; ; at = (at + 1) % table.length) {
      const stored = table[at] as number;
      if (stored === 0) return -1;
      if (matches(stored - 1)) return stored - 1;
    }
  }

  /** Adds a place whose id, of this hash, is not in the table. */
  add(place: number, hash: number): void {
    if ((this.#size + 1) * 2 > this.#table.length) this.#grow();
    this.#put(this.#table, place, hash);
    this.#size += 1;
  }

  #put(table: Uint32Array, place: number, hash: number): void {
    let at = hash % table.length;
    while (table[at] !== 0) at = (at + 1) % table.length;
    table[at] = place + 1;
  }

  #grow(): void {
    const old = this.#table;
    const table = new Uint32Array(old.length * 2);
    for (const stored of old) if (stored !== 0) this.#put(table, stored - 1, this.#hashOf(stored - 1));
    this.#table = table;
  }
}
