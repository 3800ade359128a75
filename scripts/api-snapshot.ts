// The public API of each published package as text, so that a new export, a removed one or a changed signature shows
// up in review as a diff of a committed file (`packages/<name>/api.txt`, checked by `check:generated`). Built from the
// TypeScript sources of every entry in the package's `exports` map with the compiler's own type checker: one line per
// exported name with its kind, followed by its declared shape (function signatures, interface members, type aliases,
// class members). The text is deterministic: names sorted, one fixed printer.
//
// What users cannot reach is left out: `private` and `#private` members, and members whose doc comment says
// `@internal`. Every type a signature names is printed by the entry users import it from (`Name` when it is the entry
// of the section, `import("@turnjournal/writer/file-system").Name` otherwise, `import("ai").UIMessage` for another
// package), never by a source path; a signature naming a type that no entry exports fails the snapshot.
import { readFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import ts from 'typescript';

/** The packages whose public API is snapshotted (every package published to npm). */
export const SNAPSHOT_PACKAGES = [
  'schema',
  'reader',
  'writer',
  'live',
  'client',
  'ai-sdk',
  'conformance',
  'postgres',
] as const;

/** A public signature names a type that no entry of its package exports: the snapshot fails with these lines. */
export class ApiSnapshotError extends Error {
  readonly offences: readonly string[];
  constructor(offences: readonly string[]) {
    super(offences.join('\n'));
    this.name = 'ApiSnapshotError';
    this.offences = offences;
  }
}

interface PackageManifest {
  readonly name: string;
  readonly private?: boolean;
  readonly exports?: Record<string, { readonly default?: string; readonly types?: string } | string>;
}

interface Entry {
  /** What users import: `@turnjournal/writer/file-system`. */
  readonly module: string;
  readonly subpath: string;
  readonly file: string;
}

/** The entries of a package's exports map that have code, with the file that declares each: `src/x.ts` or `dist/x.d.ts`. */
function entriesOf(packageDir: string, manifest: PackageManifest, from: 'src' | 'dist'): Entry[] {
  const entries: Entry[] = [];
  for (const [subpath, target] of Object.entries(manifest.exports ?? {})) {
    const js = typeof target === 'string' ? target : target.default;
    if (js === undefined || !js.endsWith('.js')) continue; // data files (JSON Schema, spec text) have no API
    const file =
      from === 'src'
        ? js.replace(/^\.\/dist\//, 'src/').replace(/\.js$/, '.ts')
        : typeof target === 'string'
          ? js.replace(/\.js$/, '.d.ts')
          : (target.types ?? js.replace(/\.js$/, '.d.ts'));
    entries.push({ module: `${manifest.name}${subpath.slice(1)}`, subpath, file: join(packageDir, file) });
  }
  return entries.sort((a, b) => (a.subpath < b.subpath ? -1 : a.subpath > b.subpath ? 1 : 0));
}

function readManifest(packageDir: string): PackageManifest {
  return JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8')) as PackageManifest;
}

/** The heading comment of an internal entry's section. */
const INTERNAL_MARK = '# internal: not part of the public API (for turnjournal packages of the same release only)';

/** True for an entry of the exports map that is internal by name (`./_internals`, `./_anything`). */
function isInternalEntry(subpath: string): boolean {
  return subpath.startsWith('./_');
}

const NODE_FLAGS =
  ts.NodeBuilderFlags.NoTruncation |
  ts.NodeBuilderFlags.UseFullyQualifiedType |
  ts.NodeBuilderFlags.WriteArrayAsGenericType |
  ts.NodeBuilderFlags.UseSingleQuotesForStringLiteralType |
  ts.NodeBuilderFlags.IgnoreErrors;

const printer = ts.createPrinter({ removeComments: true, omitTrailingSemicolon: true });

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

function byName<T extends { readonly name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** True when a declaration is not for users: `private`, or its doc comment carries `@internal`. */
function isHidden(declaration: ts.Declaration | undefined): boolean {
  if (declaration === undefined) return false;
  if (ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Private) return true;
  return ts.getJSDocTags(declaration).some((tag) => tag.tagName.text === 'internal');
}

/** Where a declaration comes from, which decides how users name it. */
type Origin =
  | { readonly kind: 'global' }
  | { readonly kind: 'ambient-module'; readonly module: string }
  | {
      readonly kind: 'package';
      readonly packageDir: { readonly name: string; readonly dir: string } | undefined;
      readonly file: string;
    };

/**
 * One snapshot run: the program over a package's sources and the other packages' declarations, the names each entry
 * exports, and the offences found while printing.
 */
class Snapshotter {
  readonly checker: ts.TypeChecker;
  readonly offences: string[] = [];
  /** Each declaration users can import, by its symbol: where from and under which name (first entry wins). */
  readonly #publicNames = new Map<ts.Symbol, { module: string; name: string }>();
  /**
   * Declarations exported for turnjournal's own packages only (by an internal entry, or marked `@internal`), which
   * only the internal sections may name.
   */
  readonly #internalNames = new Map<ts.Symbol, { module: string; name: string }>();
  /** What each entry of another package (not this repository's) exports, by package name, filled when first asked. */
  readonly #thirdParty = new Map<string, Map<ts.Symbol, { module: string; name: string }>>();
  readonly #root: string;
  readonly #program: ts.Program;
  readonly #options: ts.CompilerOptions;
  readonly #ownEntries: readonly Entry[];
  /** The entry whose section is being printed, and the signature in it, which an offence names. */
  #section: Entry | undefined;
  #signature = '';

  constructor(root: string, ownEntries: readonly Entry[], otherEntries: readonly Entry[]) {
    this.#root = root;
    this.#ownEntries = ownEntries;
    this.#options = {
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      strict: true,
      skipLibCheck: true,
      noEmit: true,
      types: ['node'],
    };
    this.#program = ts.createProgram(
      [...ownEntries, ...otherEntries].map((entry) => entry.file),
      this.#options,
    );
    this.checker = this.#program.getTypeChecker();
    for (const entry of [...ownEntries, ...otherEntries]) {
      for (const exported of this.exportsOf(entry.file)) {
        const target = this.resolve(exported);
        const internal = isInternalEntry(entry.subpath) || this.isInternal(exported);
        const names = internal ? this.#internalNames : this.#publicNames;
        if (!names.has(target)) names.set(target, { module: entry.module, name: exported.name });
      }
    }
  }

  /** True for an export whose declaration says `@internal`: exported for turnjournal's packages, not for users. */
  isInternal(exported: ts.Symbol): boolean {
    const symbol = this.resolve(exported);
    return isHidden(symbol.valueDeclaration ?? symbol.declarations?.[0]);
  }

  /** True for a declaration in the sources or declarations of this repository's packages. */
  declaredHere(declaration: ts.Declaration | undefined): boolean {
    return declaration?.getSourceFile().fileName.startsWith(join(this.#root, 'packages') + sep) === true;
  }

  resolve(symbol: ts.Symbol): ts.Symbol {
    return symbol.flags & ts.SymbolFlags.Alias ? this.checker.getAliasedSymbol(symbol) : symbol;
  }

  exportsOf(file: string): ts.Symbol[] {
    const source = this.#program.getSourceFile(file);
    if (source === undefined) {
      throw new Error(`api-snapshot: cannot read ${file} (the other packages' declarations come from a build)`);
    }
    const moduleSymbol = this.checker.getSymbolAtLocation(source);
    return moduleSymbol === undefined ? [] : this.checker.getExportsOfModule(moduleSymbol);
  }

  get section(): Entry {
    if (this.#section === undefined) throw new Error('api-snapshot: a name printed outside any section');
    return this.#section;
  }

  /** Starts printing the signature `label` of the section `entry`: offences found meanwhile name it. */
  begin(entry: Entry, label: string): void {
    this.#section = entry;
    this.#signature = label;
  }

  typeText(type: ts.Type, at: ts.Node, extraFlags = ts.NodeBuilderFlags.None): string {
    const node = this.checker.typeToTypeNode(type, at, NODE_FLAGS | extraFlags);
    if (node === undefined) throw new Error(`api-snapshot: no type node for ${this.#signature}`);
    return this.#print(node, at);
  }

  signatureText(signature: ts.Signature, at: ts.Node): string {
    const node = this.checker.signatureToSignatureDeclaration(
      signature,
      ts.SyntaxKind.CallSignature,
      at,
      NODE_FLAGS | ts.NodeBuilderFlags.WriteTypeParametersInQualifiedName,
    );
    if (node === undefined) throw new Error(`api-snapshot: no signature node for ${this.#signature}`);
    return this.#print(node, at);
  }

  #print(node: ts.Node, at: ts.Node): string {
    const renamed = this.#rename(node);
    return printer.printNode(ts.EmitHint.Unspecified, renamed, at.getSourceFile()).replace(/;$/, '');
  }

  /** Every type reference of `node` rewritten to the name users import, each unimportable one recorded. */
  #rename(node: ts.Node): ts.Node {
    const visit = (child: ts.Node): ts.Node => {
      const typeArguments = (of: { readonly typeArguments?: ts.NodeArray<ts.TypeNode> | undefined }) =>
        of.typeArguments?.map((argument) => visit(argument) as ts.TypeNode);
      const reference = (entity: ts.EntityName, isTypeOf: boolean, args: ts.TypeNode[] | undefined): ts.TypeNode => {
        const { module, name } = this.#entityName(entity);
        if (module !== undefined) {
          const specifier = ts.factory.createLiteralTypeNode(ts.factory.createStringLiteral(module));
          return ts.factory.createImportTypeNode(specifier, undefined, name, args, isTypeOf);
        }
        return isTypeOf ? ts.factory.createTypeQueryNode(name, args) : ts.factory.createTypeReferenceNode(name, args);
      };
      if (ts.isTypeReferenceNode(child)) return reference(child.typeName, false, typeArguments(child));
      if (ts.isTypeQueryNode(child) && !(ts.isIdentifier(child.exprName) && child.exprName.text === 'this')) {
        return reference(child.exprName, true, typeArguments(child));
      }
      if (ts.isImportTypeNode(child)) {
        if (child.qualifier === undefined) {
          this.#offence('the type of a whole module (import("…") without a name)');
          return child;
        }
        return reference(child.qualifier, child.isTypeOf, typeArguments(child));
      }
      return ts.visitEachChild(child, visit, undefined);
    };
    return visit(node);
  }

  /**
   * The name users write for an entity the printer named (`A`, `ns.A`, `A.Member`): the first part that is not a
   * module is what is referenced (a namespace import's name is only a path to it); it becomes the name of the
   * entry that exports it, the parts after it stay.
   */
  #entityName(name: ts.EntityName): { module: string | undefined; name: ts.EntityName } {
    const parts: ts.Identifier[] = [];
    for (let part: ts.EntityName = name; ; part = part.left) {
      if (ts.isIdentifier(part)) {
        parts.unshift(part);
        break;
      }
      parts.unshift(part.right);
    }
    const at = parts.findIndex((part) => !(this.#symbolOf(part).flags & ts.SymbolFlags.ValueModule));
    const referenced = at === -1 ? parts.length - 1 : at;
    const { module, name: first } = this.#nameOf(this.#symbolOf(parts[referenced] as ts.Identifier));
    let result: ts.EntityName = ts.factory.createIdentifier(first);
    for (const rest of parts.slice(referenced + 1)) {
      result = ts.factory.createQualifiedName(result, ts.factory.createIdentifier(rest.text));
    }
    return { module, name: result };
  }

  /**
   * The symbol the printer named: it sets it on the identifiers it creates (`identifier.symbol`, which is not in the
   * public typings); an identifier copied from the source has its original node, which the checker resolves; the
   * global names it writes as text (`Array` for `T[]`) resolve in the global scope.
   */
  #symbolOf(identifier: ts.Identifier): ts.Symbol {
    const original = ts.getOriginalNode(identifier);
    const symbol =
      (identifier as unknown as { readonly symbol?: ts.Symbol }).symbol ??
      (original !== identifier && ts.isIdentifier(original) ? this.checker.getSymbolAtLocation(original) : undefined);
    if (symbol !== undefined) return this.resolve(symbol);
    const global = this.checker.resolveName(identifier.text, undefined, ts.SymbolFlags.Type, false);
    if (global === undefined || this.#originOf(global).kind !== 'global') {
      throw new Error(
        `api-snapshot: the printer gave no symbol for ${identifier.text} in ${this.#signature} (did TypeScript change?)`,
      );
    }
    return global;
  }

  /**
   * How users name `symbol` from the current section: bare, or the module they import it from. An offence when no
   * entry they may import exports it.
   */
  #nameOf(symbol: ts.Symbol): { module: string | undefined; name: string } {
    const bare = { module: undefined, name: symbol.name };
    if (symbol.flags & ts.SymbolFlags.TypeParameter) return bare;
    const section = this.section;
    const named =
      this.#publicNames.get(symbol) ?? (isInternalEntry(section.subpath) ? this.#internalNames.get(symbol) : undefined);
    if (named !== undefined) return named.module === section.module ? { module: undefined, name: named.name } : named;
    const origin = this.#originOf(symbol);
    if (origin.kind === 'global') return bare;
    if (origin.kind === 'ambient-module') return { module: origin.module, name: symbol.name };
    // Another package's type is named by the entry of that package that exports it.
    if (origin.packageDir !== undefined && !this.declaredHere(symbol.declarations?.[0])) {
      const named = this.#thirdPartyNames(origin.packageDir.name, origin.packageDir.dir).get(symbol);
      if (named !== undefined) return named;
    }
    const only = this.#internalNames.get(symbol);
    const why =
      only !== undefined
        ? `which ${only.module} exports for turnjournal's own packages only`
        : 'which no entry exports';
    this.#offence(`${symbol.name}, ${why} (declared in ${relative(this.#root, origin.file)})`);
    return bare;
  }

  #originOf(symbol: ts.Symbol): Origin {
    const declaration = symbol.declarations?.[0];
    if (declaration === undefined) return { kind: 'global' };
    for (let node: ts.Node | undefined = declaration.parent; node !== undefined; node = node.parent) {
      if (ts.isModuleDeclaration(node) && ts.isStringLiteral(node.name)) {
        return { kind: 'ambient-module', module: node.name.text };
      }
      if (ts.isModuleDeclaration(node) && node.flags & ts.NodeFlags.GlobalAugmentation) return { kind: 'global' };
    }
    const source = declaration.getSourceFile();
    if (!ts.isExternalModule(source)) return { kind: 'global' };
    const at = source.fileName.lastIndexOf('/node_modules/');
    if (at === -1) return { kind: 'package', packageDir: undefined, file: source.fileName };
    const inside = source.fileName.slice(at + '/node_modules/'.length).split('/');
    const name = inside.slice(0, inside[0]?.startsWith('@') ? 2 : 1).join('/');
    const dir = `${source.fileName.slice(0, at)}/node_modules/${name}`;
    return { kind: 'package', packageDir: { name, dir }, file: source.fileName };
  }

  /**
   * What another package's entries export, from its exports map (or its main entry when it has none), each symbol
   * named by the first entry that exports it.
   */
  #thirdPartyNames(packageName: string, packageDir: string): Map<ts.Symbol, { module: string; name: string }> {
    let names = this.#thirdParty.get(packageName);
    if (names === undefined) {
      names = new Map();
      const manifest = readManifest(packageDir);
      const subpaths = Object.keys(manifest.exports ?? { '.': '' })
        .filter((subpath) => subpath.startsWith('.') && !subpath.includes('*') && !subpath.endsWith('.json'))
        .sort();
      const from = this.#ownEntries[0]?.file ?? join(this.#root, 'package.json');
      for (const subpath of subpaths) {
        const module = `${packageName}${subpath.slice(1)}`;
        const resolved = ts.resolveModuleName(module, from, this.#options, ts.sys).resolvedModule;
        // An entry this package cannot import names nothing its users could import either.
        const source = resolved === undefined ? undefined : this.#program.getSourceFile(resolved.resolvedFileName);
        if (source === undefined) continue;
        for (const exported of this.exportsOf(source.fileName)) {
          const target = this.resolve(exported);
          if (!names.has(target)) names.set(target, { module, name: exported.name });
        }
      }
      this.#thirdParty.set(packageName, names);
    }
    return names;
  }

  #offence(what: string): void {
    const section = this.#section?.module ?? '?';
    this.offences.push(`api-snapshot: ${section}: ${this.#signature} names the type ${what}`);
  }
}

/** Member lines of an object-like type: `name?: type` per property and one line per call signature. */
function memberLines(s: Snapshotter, owner: string, type: ts.Type, at: ts.Node, prefix = ''): string[] {
  const lines: string[] = [];
  for (const property of s.checker.getPropertiesOfType(type)) {
    if (property.name.startsWith('#') || property.name.startsWith('__')) continue;
    const declaration = property.valueDeclaration ?? property.declarations?.[0];
    // A class's statics are its own; those it inherits from a built-in (`Error.captureStackTrace`) are the runtime's.
    if (prefix === 'static ' && (property.name === 'prototype' || !s.declaredHere(declaration))) continue;
    if (isHidden(declaration)) continue;
    const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
    const readonly =
      declaration !== undefined && ts.getCombinedModifierFlags(declaration) & ts.ModifierFlags.Readonly
        ? 'readonly '
        : '';
    s.begin(s.section, `${owner}.${property.name}`);
    const propertyType = s.checker.getTypeOfSymbolAtLocation(property, at);
    lines.push(`    ${prefix}${readonly}${property.name}${optional}: ${s.typeText(propertyType, at)}`);
  }
  if (prefix === '') {
    for (const signature of type.getCallSignatures()) {
      if (isHidden(signature.getDeclaration())) continue;
      s.begin(s.section, `${owner} (call)`);
      lines.push(`    (call) ${s.signatureText(signature, at)}`);
    }
  }
  return lines.sort();
}

function describe(s: Snapshotter, exported: ts.Symbol): string[] {
  const symbol = s.resolve(exported);
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
  const name = exported.name;
  s.begin(s.section, name);
  if (symbol.flags & ts.SymbolFlags.Function) {
    const type = s.checker.getTypeOfSymbolAtLocation(symbol, declaration);
    for (const signature of type.getCallSignatures()) lines.push(`    ${s.signatureText(signature, declaration)}`);
  } else if (symbol.flags & ts.SymbolFlags.Class) {
    const instance = s.checker.getDeclaredTypeOfSymbol(symbol);
    const constructorType = s.checker.getTypeOfSymbolAtLocation(symbol, declaration);
    for (const signature of constructorType.getConstructSignatures()) {
      const declared = signature.getDeclaration() as ts.SignatureDeclaration | undefined; // none when implicit
      if (declared !== undefined && ts.isConstructorDeclaration(declared) && isHidden(declared)) continue;
      s.begin(s.section, `${name} (new)`);
      lines.push(`    (new) ${s.signatureText(signature, declaration)}`);
    }
    lines.push(...memberLines(s, name, constructorType, declaration, 'static '));
    lines.push(...memberLines(s, name, instance, declaration));
  } else if (symbol.flags & ts.SymbolFlags.Variable) {
    const type = s.checker.getTypeOfSymbolAtLocation(symbol, declaration);
    lines.push(`    : ${s.typeText(type, declaration)}`);
  }
  if (symbol.flags & ts.SymbolFlags.Interface) {
    lines.push(...memberLines(s, name, s.checker.getDeclaredTypeOfSymbol(symbol), declaration));
  } else if (symbol.flags & ts.SymbolFlags.TypeAlias) {
    s.begin(s.section, name);
    const type = s.checker.getDeclaredTypeOfSymbol(symbol);
    lines.push(`    = ${s.typeText(type, declaration, ts.NodeBuilderFlags.InTypeAlias)}`);
  }
  return lines;
}

/** The API snapshot text of one package, or undefined for a package that is not published. */
export function apiSnapshot(root: string, name: string): string | undefined {
  const packageDir = join(root, 'packages', name);
  const manifest = readManifest(packageDir);
  if (manifest.private === true) return undefined;
  const entries = entriesOf(packageDir, manifest, 'src');
  // The other published packages from their declarations (the build's), as a user's program sees them.
  const others = SNAPSHOT_PACKAGES.filter((other) => other !== name).flatMap((other) => {
    const otherDir = join(root, 'packages', other);
    return entriesOf(otherDir, readManifest(otherDir), 'dist');
  });
  const s = new Snapshotter(root, entries, others);
  const out: string[] = [
    `# API of ${manifest.name}: generated by scripts/api-snapshot.ts (pnpm generate); a diff here is an API change.`,
  ];
  for (const entry of entries) {
    // An export marked `@internal` in a public entry is there for turnjournal's other packages: not listed as API.
    const exports = s.exportsOf(entry.file).filter((symbol) => isInternalEntry(entry.subpath) || !s.isInternal(symbol));
    const values = exports.filter((symbol) => (s.resolve(symbol).flags & ts.SymbolFlags.Value) !== 0).length;
    out.push('', `## ${entry.module}`);
    // An `_internals` entry is exported only for the other turnjournal packages of the same release: snapshotted so
    // that a change to it is still seen in review, and marked so that nobody reads it as API.
    if (isInternalEntry(entry.subpath)) out.push(INTERNAL_MARK);
    out.push(`# ${exports.length} exported names, ${values} of them runtime values`);
    s.begin(entry, '');
    for (const symbol of [...exports].sort(byName)) out.push(...describe(s, symbol));
  }
  if (s.offences.length > 0) throw new ApiSnapshotError(s.offences);
  return `${out.join('\n')}\n`;
}
