import { closeSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

/** Buffered line writer for generated files: lines are joined and written in ~1 MiB blocks. */
export class LineSink {
  readonly #fd: number;
  #parts: string[] = [];
  #pending = 0;
  /** Bytes written so far (UTF-8), including buffered ones. */
  bytes = 0;
  /** Lines written so far. */
  lines = 0;

  constructor(path: string) {
    mkdirSync(dirname(path), { recursive: true });
    this.#fd = openSync(path, 'w');
  }

  /** Adds one record as a JSON line. */
  record(value: unknown): void {
    this.raw(`${JSON.stringify(value)}\n`);
    this.lines += 1;
  }

  /** Adds raw text (a torn tail, for example). */
  raw(text: string): void {
    this.#parts.push(text);
    const size = Buffer.byteLength(text);
    this.#pending += size;
    this.bytes += size;
    if (this.#pending >= 1 << 20) this.flush();
  }

  flush(): void {
    if (this.#parts.length === 0) return;
    writeSync(this.#fd, this.#parts.join(''));
    this.#parts = [];
    this.#pending = 0;
  }

  close(): void {
    this.flush();
    closeSync(this.#fd);
  }
}
