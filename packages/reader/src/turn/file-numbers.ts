/**
 * The files of a fold's records, each named once and numbered in the order first seen, so a column stores a number
 * where a record would hold its path. Records come file after file: the number of the last file asked for is reused
 * without a look-up.
 */
export class FileNumbers {
  readonly #files: string[] = [];
  // A map, not a search of the list: a table shared by the folds of a store check holds every file of the store.
  readonly #numbers = new Map<string, number>();
  #last = -1;

  /** The number of `file`, given it when first seen. */
  numberOf(file: string): number {
    if (this.#files[this.#last] !== file) {
      let known = this.#numbers.get(file);
      if (known === undefined) {
        known = this.#files.push(file) - 1;
        this.#numbers.set(file, known);
      }
      this.#last = known;
    }
    return this.#last;
  }

  /** The file numbered `number`. */
  fileOf(number: number): string {
    return this.#files[number] as string;
  }
}
