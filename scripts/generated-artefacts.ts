// The list of generated artefacts and how each is built from its source. Kept apart from generate.ts so tests
// can build an artefact in memory and compare it with the committed file.
import { buildJsonSchema } from '../packages/schema/src/v1/json-schema.ts';

/** One generated file: its path from the repository root and the function that produces its exact text. */
export interface GeneratedArtefact {
  readonly path: string;
  readonly build: () => string;
}

/** Stable JSON text: two-space indent and a final newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/** Every generated artefact, in the order they are written. */
export function generatedArtefacts(_root: string): GeneratedArtefact[] {
  return [{ path: 'spec/v1/schema.json', build: () => jsonText(buildJsonSchema()) }];
}
