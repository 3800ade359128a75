// The public API of each published package as text, so that a new export, a removed one or a changed signature shows
// up in review as a diff of a committed file (`packages/<name>/api.txt`, checked by `check:generated`). Built from the
// TypeScript sources of every entry in the package's `exports` map with the compiler's own type checker: one line per
// exported name with its kind, followed by its declared shape (function signatures, interface members, type aliases,
// class members). The text is deterministic: names sorted, one fixed printer.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/** The packages whose public API is snapshotted (every package published to npm). */
export const SNAPSHOT_PACKAGES = ['schema', 'reader', 'writer', 'live', 'client', 'ai-sdk', 'conformance'] as const;

interface PackageManifest {
  readonly name: string;
  readonly private?: boolean;
  readonly exports?: Record<string, { readonly default?: string } | string>;
}

/** The source entry (`src/x.ts`) of each JavaScript entry of the exports map (`./dist/x.js`). */
function sourceEntries(packageDir: string, manifest: PackageManifest): Array<{ subpath: string; file: string }> {
  const entries: Array<{ subpath: string; file: string }> = [];
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const js = typeof target === 'string' ? target : target.default;
    if (js === undefined || !js.endsWith('.js')) continue; // data files (JSON Schema, spec text) have no API
    entries.push({ subpath, file: join(packageDir, js.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')) });
  }
  return entries.sort((a, b) => (a.subpath < b.subpath ? -1 : a.subpath > b.subpath ? 1 : 0));
}

/** The heading comment of an internal entry's section. */
const INTERNAL_MARK = '# internal: not part of the public API (for turnjournal packages of the same release only)';

/** True for an entry of the exports map that is internal by name (`./_internals`, `./_anything`). */
function isInternalEntry(subpath: string): boolean {
  return subpath.startsWith('./_');
}

const TYPE_FORMAT =
  ts.TypeFormatFlags.NoTruncation |
  ts.TypeFormatFlags.UseFullyQualifiedType |
  ts.TypeFormatFlags.WriteArrayAsGenericType |
  ts.TypeFormatFlags.UseSingleQuotesForStringLiteralType;

function kindOf(symbol: ts.Symbol): string {
  const f = symbol.flags;
  if (f & ts.SymbolFlags.Class) return 'class';
  if (f & ts.SymbolFlags.Function) return 'function';
  if (f & ts.SymbolFlags.Enum) return 'enum';
  if (f & ts.SymbolFlags.Variable) return 'const';
  if (f & ts.SymbolFlags.Interface) return 'interface';
  if (f & ts.SymbolFlags.TypeAlias) return 'type';
  if (f & ts.SymbolFlags.Module) return 'namespace';
  return 'other';
}

/** Member lines of an object-like type: `name?: type` per property and one line per call signature. */
function memberLines(checker: ts.TypeChecker, type: ts.Type, at: ts.Node): string[] {
  const lines: string[] = [];
  for (const property of checker.getPropertiesOfType(type)) {
    if (property.name.startsWith('#') || property.name.startsWith('__')) continue;
    const declaration = property.valueDeclaration ?? property.declarations?.[0];
    if (declaration !== undefined && ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Private) continue;
    const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
    const readonly =
      declaration !== undefined && ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Readonly
        ? 'readonly '
        : '';
    const propertyType = checker.getTypeOfSymbolAtLocation(property, at);
    lines.push(`    ${readonly}${property.name}${optional}: ${checker.typeToString(propertyType, at, TYPE_FORMAT)}`);
  }
  for (const signature of type.getCallSignatures()) {
    lines.push(`    (call) ${checker.signatureToString(signature, at, TYPE_FORMAT)}`);
  }
  return lines.sort();
}

function describe(checker: ts.TypeChecker, exported: ts.Symbol): string[] {
  const symbol = exported.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(exported) : exported;
  const declaration = symbol.valueDeclaration ?? symbol.declarations?.[0];
  const kinds: string[] = [];
  // One name may be both a value and a type (a TypeBox schema constant and its static type): list both.
  if (symbol.flags & ts.SymbolFlags.Value) kinds.push(kindOf(symbol));
  if (symbol.flags & (ts.SymbolFlags.Interface | ts.SymbolFlags.TypeAlias) && !(symbol.flags & ts.SymbolFlags.Class)) {
    kinds.push(symbol.flags & ts.SymbolFlags.Interface ? 'interface' : 'type');
  }
  const head = `${[...new Set(kinds)].join('+') || kindOf(symbol)} ${exported.name}`;
  if (declaration === undefined) return [head];
  const lines = [head];
  if (symbol.flags & ts.SymbolFlags.Function) {
    const type = checker.getTypeOfSymbolAtLocation(symbol, declaration);
    for (const signature of type.getCallSignatures()) {
      lines.push(`    ${checker.signatureToString(signature, declaration, TYPE_FORMAT)}`);
    }
  } else if (symbol.flags & ts.SymbolFlags.Class) {
    const instance = checker.getDeclaredTypeOfSymbol(symbol);
    const constructorType = checker.getTypeOfSymbolAtLocation(symbol, declaration);
    for (const signature of constructorType.getConstructSignatures()) {
      lines.push(`    (new) ${checker.signatureToString(signature, declaration, TYPE_FORMAT)}`);
    }
    lines.push(...memberLines(checker, instance, declaration));
  } else if (symbol.flags & ts.SymbolFlags.Variable) {
    const type = checker.getTypeOfSymbolAtLocation(symbol, declaration);
    lines.push(`    : ${checker.typeToString(type, declaration, TYPE_FORMAT)}`);
  }
  if (symbol.flags & ts.SymbolFlags.Interface) {
    lines.push(...memberLines(checker, checker.getDeclaredTypeOfSymbol(symbol), declaration));
  } else if (symbol.flags & ts.SymbolFlags.TypeAlias) {
    const type = checker.getDeclaredTypeOfSymbol(symbol);
    lines.push(`    = ${checker.typeToString(type, declaration, TYPE_FORMAT | ts.TypeFormatFlags.InTypeAlias)}`);
  }
  return lines;
}

/** The API snapshot text of one package, or undefined for a package that is not published. */
export function apiSnapshot(root: string, name: string): string | undefined {
  const packageDir = join(root, 'packages', name);
  const manifest = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as PackageManifest;
  if (manifest.private === true) return undefined;
  const entries = sourceEntries(packageDir, manifest);
  const program = ts.createProgram(
    entries.map((entry) => entry.file),
    {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
    },
  );
  const checker = program.getTypeChecker();
  const out: string[] = [
    `# API of ${manifest.name}: generated by scripts/api-snapshot.ts (pnpm generate); a diff here is an API change.`,
  ];
  for (const entry of entries) {
    const source = program.getSourceFile(entry.file);
    if (source === undefined) throw new Error(`api-snapshot: cannot read ${entry.file}`);
    const moduleSymbol = checker.getSymbolAtLocation(source);
    const exports = moduleSymbol === undefined ? [] : checker.getExportsOfModule(moduleSymbol);
    const values = exports.filter((s) => {
      const target = s.flags & ts.SymbolFlags.Alias ? checker.getAliasedSymbol(s) : s;
      return (target.flags & ts.SymbolFlags.Value) !== 0;
    }).length;
    out.push('', `## ${manifest.name}${entry.subpath === '.' ? '' : entry.subpath.slice(1)}`);
    // An `_internals` entry is exported only for the other turnjournal packages of the same release: snapshotted so
    // that a change to it is still seen in review, and marked so that nobody reads it as API.
    if (isInternalEntry(entry.subpath)) out.push(INTERNAL_MARK);
    out.push(`# ${exports.length} exported names, ${values} of them runtime values`);
    const sorted = [...exports].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const symbol of sorted) out.push(...describe(checker, symbol));
  }
  // Types declared where the printer has no name in scope print as `import("<absolute path>").Name`: keep the path
  // relative to the repository, so the snapshot is the same in every clone.
  return `${out.join('\n')}\n`.replaceAll(`import("${root}/`, 'import("');
}
