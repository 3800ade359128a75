// The AI SDK's client modules for the browser page, served as npm installed them, with an import map: no bundler and
// no build step. The `ai` package's ESM build imports a few packages by bare name; the map sends each to its own
// files under /vendor/. One of them, `@vercel/oidc` (through the SDK's gateway provider, which a page never calls),
// is published as CommonJS only: the map sends it to a small ES module of the two functions the gateway imports.
import { readFile, realpath } from 'node:fs/promises';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * Every bare specifier the modules of `ai` import, and the package whose installation resolves it (pnpm gives each
 * package only its own dependencies). A specifier missing here fails in the page with the browser's "Failed to resolve
 * module specifier" error, which the browser test reports.
 */
const SPECIFIERS = [
  { specifier: 'ai', from: '.' },
  { specifier: '@ai-sdk/gateway', from: 'ai' },
  { specifier: '@ai-sdk/provider', from: 'ai' },
  { specifier: '@ai-sdk/provider-utils', from: 'ai' },
  { specifier: '@opentelemetry/api', from: 'ai' },
  { specifier: 'zod', from: 'ai' },
  { specifier: 'zod/v3', from: 'ai' },
  { specifier: 'zod/v4', from: 'ai' },
  { specifier: 'eventsource-parser/stream', from: '@ai-sdk/provider-utils' },
];

/** Where the page's stand-in for the CommonJS-only `@vercel/oidc` is served (public/vercel-oidc.mjs). */
const OIDC_STAND_IN = '/vercel-oidc.mjs';

const CONDITIONS = ['browser', 'import', 'default'];

function packageName(specifier) {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/** The installed directory (real path) of package `name` as Node resolves it from `directory`. */
async function packageDirectory(name, directory) {
  for (let at = directory; ; at = dirname(at)) {
    try {
      return await realpath(join(at, 'node_modules', name));
    } catch (error) {
      if (error?.code !== 'ENOENT') throw error;
    }
    if (dirname(at) === at) throw new Error(`browser modules: package "${name}" is not installed (from ${directory})`);
  }
}

/** The file an `exports` entry names under the browser's conditions. */
function exportTarget(entry) {
  if (typeof entry === 'string') return entry;
  if (entry === null || typeof entry !== 'object') return undefined;
  for (const [condition, value] of Object.entries(entry))
    if (CONDITIONS.includes(condition)) {
      const target = exportTarget(value);
      if (target !== undefined) return target;
    }
  return undefined;
}

/**
 * The SDK's browser modules: `importMap` (the JSON of the page's `<script type="importmap">`) and `serve(path)`, the
 * bytes of a file under /vendor/ (undefined for a path outside the mapped packages' directories or not a module).
 */
export async function browserModules() {
  const directories = new Map(); // package name → its real directory
  const imports = { '@vercel/oidc': OIDC_STAND_IN };
  for (const { specifier, from } of SPECIFIERS) {
    const base = from === '.' ? HERE : directories.get(from);
    if (base === undefined) throw new Error(`browser modules: "${from}" must come before "${specifier}"`);
    const name = packageName(specifier);
    const directory = await packageDirectory(name, base);
    const known = directories.get(name);
    if (known !== undefined && known !== directory)
      throw new Error(
        `browser modules: two installations of "${name}" (${known}, ${directory}); one import map maps one`,
      );
    directories.set(name, directory);
    const manifest = JSON.parse(await readFile(join(directory, 'package.json'), 'utf8'));
    const subpath = `.${specifier.slice(name.length)}`;
    const target = exportTarget(manifest.exports?.[subpath]);
    if (target === undefined) throw new Error(`browser modules: "${specifier}" has no browser or import export`);
    imports[specifier] = `/vendor/${name}/${target.replace(/^\.\//, '')}`;
  }

  return {
    importMap: JSON.stringify({ imports }),
    async serve(path) {
      const rest = path.replace(/^\/vendor\//, '');
      const name = rest.startsWith('@') ? rest.split('/').slice(0, 2).join('/') : rest.split('/')[0];
      const directory = directories.get(name);
      if (directory === undefined || !['.js', '.mjs'].includes(extname(rest))) return undefined;
      const file = join(directory, rest.slice(name.length));
      if (relative(directory, file).startsWith(`..${sep}`)) return undefined;
      try {
        return await readFile(file);
      } catch (error) {
        if (error?.code === 'ENOENT' || error?.code === 'EISDIR') return undefined;
        throw error;
      }
    },
  };
}
