import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The nearest ancestor of this module (or of `from`) holding `relativePath`: the kit finds the fixtures and the spec
 * in a repository checkout (src or dist) and in an installed package alike.
 */
export function findUp(relativePath: string, from: string = dirname(fileURLToPath(import.meta.url))): string | null {
  let dir = from;
  for (;;) {
    const candidate = join(dir, relativePath);
    if (existsSync(candidate)) return candidate;
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

/** The `fixtures/v1/store` directory of the kit; throws when the kit was installed without its fixtures. */
export function locateStoreFixtures(): string {
  const found = findUp('fixtures/v1/store');
  if (found === null)
    throw new Error('cannot find fixtures/v1/store next to @turnjournal/conformance (run from a turnjournal checkout)');
  return found;
}

/** Requirement id → level (`MUST`, `SHOULD NOT`, …) from `spec/v1/requirements.json`; empty when absent. */
export function loadRequirementLevels(): Map<string, string> {
  const found = findUp('spec/v1/requirements.json');
  if (found === null) return new Map();
  const map = JSON.parse(readFileSync(found, 'utf8')) as { requirements: { id: string; level: string }[] };
  return new Map(map.requirements.map((r) => [r.id, r.level]));
}
