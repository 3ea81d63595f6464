// Every export of src/ is imported somewhere: by another module of src/, or by a test, a bench
// scenario, a script or bin/ (those import the built files, dist/<path>.js). An export nobody
// imports is either dead code or something its own module uses alone, which then should not be
// exported: both make the module's surface read wider than it is.
//
// Names are matched per file: `import { a } from './x'`, `export { a } from './x'`,
// `import * as m` and `export *` (all names of the target count as used), and dynamic imports
// whose names can be read (`const { a } = await import('./x')`, `(await import('./x')).a`); a
// dynamic import whose use cannot be read counts all names as used. The checker is itself tested
// on fixture sources below, so that it cannot pass by reading nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const IMPORTER_DIRS = ['src', 'test', 'bench', 'scripts', 'bin'];

function walk(dir, out = []) {
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.') || entry.name === 'fixtures') continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) walk(full, out);
    else if (/\.(ts|mjs|cjs|js)$/.test(entry.name)) out.push(full);
  }
  return out;
}

/** Names a module declares with `export` (declarations, `export { a }`, `export default`). */
function exportsOf(sf) {
  const names = [];
  const exported = (node) => ts.getCombinedModifierFlags(node) & ts.ModifierFlags.Export;
  for (const st of sf.statements) {
    if (ts.isVariableStatement(st) && exported(st)) {
      for (const d of st.declarationList.declarations) if (ts.isIdentifier(d.name)) names.push(d.name.text);
    } else if (
      (ts.isFunctionDeclaration(st) ||
        ts.isClassDeclaration(st) ||
        ts.isInterfaceDeclaration(st) ||
        ts.isTypeAliasDeclaration(st) ||
        ts.isEnumDeclaration(st)) &&
      exported(st) &&
      st.name
    ) {
      names.push(ts.getCombinedModifierFlags(st) & ts.ModifierFlags.Default ? 'default' : st.name.text);
    } else if (ts.isExportDeclaration(st) && !st.moduleSpecifier && st.exportClause && ts.isNamedExports(st.exportClause)) {
      for (const e of st.exportClause.elements) names.push(e.name.text);
    }
  }
  return names;
}

/** The names a dynamic import takes, read from its surroundings; ['*'] when they cannot be read. */
function dynamicImportNames(call) {
  let node = call.parent;
  if (node && ts.isAwaitExpression(node)) node = node.parent;
  while (node && ts.isParenthesizedExpression(node)) node = node.parent;
  if (node && ts.isVariableDeclaration(node) && ts.isObjectBindingPattern(node.name)) {
    const names = node.name.elements.map((e) =>
      e.propertyName && ts.isIdentifier(e.propertyName) ? e.propertyName.text : ts.isIdentifier(e.name) ? e.name.text : '*',
    );
    return names.length > 0 ? names : ['*'];
  }
  if (node && ts.isPropertyAccessExpression(node) && ts.isIdentifier(node.name)) return [node.name.text];
  return ['*'];
}

/** Every (specifier, names) a source takes from other modules. */
function importsOf(sf) {
  const out = [];
  const literal = (n) => (n && (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n)) ? n.text : undefined);
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const bindings = clause?.namedBindings;
      const names = [];
      if (clause?.name) names.push('default');
      if (bindings && ts.isNamespaceImport(bindings)) names.push('*');
      if (bindings && ts.isNamedImports(bindings)) for (const e of bindings.elements) names.push((e.propertyName ?? e.name).text);
      out.push({ specifier: literal(node.moduleSpecifier), names: clause ? names : [] });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const clause = node.exportClause;
      const names = clause && ts.isNamedExports(clause) ? clause.elements.map((e) => (e.propertyName ?? e.name).text) : ['*'];
      out.push({ specifier: literal(node.moduleSpecifier), names });
    } else if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) {
      const q = node.qualifier;
      out.push({ specifier: literal(node.argument.literal), names: [q ? (ts.isIdentifier(q) ? q.text : q.left.getText(sf)) : '*'] });
    } else if (
      ts.isCallExpression(node) &&
      (node.expression.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(node.expression) && node.expression.text === 'require'))
    ) {
      out.push({ specifier: literal(node.arguments[0]), names: dynamicImportNames(node) });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** The src/ file (relative to the root) a specifier of `from` names: src paths directly, dist/<path>.js as src/<path>.ts. */
function targetOf(from, specifier, srcFiles) {
  if (!specifier || !specifier.startsWith('.')) return undefined;
  const abs = path
    .relative(ROOT, path.resolve(path.dirname(from), specifier))
    .split(path.sep)
    .join('/');
  const stem = abs.replace(/^dist\//, 'src/').replace(/\.(js|ts|cjs|mjs)$/, '');
  for (const candidate of [`${stem}.ts`, `${stem}/index.ts`]) if (srcFiles.has(candidate)) return candidate;
  return undefined;
}

/** `sources`: root-relative path -> text. Returns 'file: name' for each export nobody imports. */
export function unusedExports(sources) {
  const parsed = new Map();
  for (const [file, text] of sources)
    parsed.set(file, ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, file.endsWith('.ts') ? ts.ScriptKind.TS : ts.ScriptKind.JS));
  const srcFiles = new Set([...sources.keys()].filter((f) => f.startsWith('src/') && f.endsWith('.ts')));
  const used = new Map([...srcFiles].map((f) => [f, new Set()]));
  for (const [file, sf] of parsed) {
    for (const imp of importsOf(sf)) {
      const target = targetOf(path.join(ROOT, file), imp.specifier, srcFiles);
      if (target && target !== file) for (const n of imp.names) used.get(target).add(n);
    }
  }
  const problems = [];
  for (const file of [...srcFiles].sort()) {
    const names = used.get(file);
    if (names.has('*')) continue;
    for (const name of exportsOf(parsed.get(file))) if (!names.has(name)) problems.push(`${file}: ${name}`);
  }
  return problems;
}

function realSources() {
  const sources = new Map();
  for (const dir of IMPORTER_DIRS) {
    const abs = path.join(ROOT, dir);
    if (!fs.existsSync(abs)) continue;
    for (const file of walk(abs)) sources.set(path.relative(ROOT, file).split(path.sep).join('/'), fs.readFileSync(file, 'utf8'));
  }
  return sources;
}

/**
 * True entry points, named where the checker cannot read the name. Keep this list to those: an
 * export used only by its own module loses its `export` instead.
 */
const ENTRY_POINTS = new Map([
  ['src/cli/main.ts: main', 'the CLI: bin/nyl (no .js name) and the code scripts/bundle.mjs writes as a string call `.exports.main(...)`'],
  ['src/report/schemas.ts: reportJsonSchemas', 'scripts/gen-schemas.mjs takes dist/ (CommonJS) as a default export and calls `reports.reportJsonSchemas(...)`'],
]);

test('every export of src/ is imported somewhere (entry points apart, each of which must still be one)', () => {
  const unused = unusedExports(realSources());
  assert.deepEqual(
    unused.filter((p) => !ENTRY_POINTS.has(p)),
    [],
  );
  assert.deepEqual(
    [...ENTRY_POINTS.keys()].filter((p) => !unused.includes(p)),
    [],
    'an allowed entry point is imported now, or gone: drop it from ENTRY_POINTS',
  );
});

test('checker: unused exports are found; named, namespace, re-exported, dynamic and built-file imports count', () => {
  const sources = new Map([
    [
      'src/a/x.ts',
      'export const used = 1;\nexport const unused = 2;\nexport function viaDynamic() {}\nexport interface ViaType {}\nexport type ViaTest = 1;\nexport const viaAccess = 3;',
    ],
    [
      'src/a/y.ts',
      "import { used } from './x';\nimport type { ViaType } from './x';\nexport async function f() { const { viaDynamic } = await import('./x'); return (await import('./x')).viaAccess; }",
    ],
    ['src/b/z.ts', 'export const all = 1;\nexport const alsoAll = 2;'],
    ['src/b/w.ts', "export * from './z';\nexport const lonely = 1;"],
    ['test/unit/t.test.mjs', "import { f } from '../../dist/a/y.js';\nimport { ViaTest } from '../../dist/a/x.js';"],
  ]);
  assert.deepEqual(unusedExports(sources), ['src/a/x.ts: unused', 'src/b/w.ts: lonely']);
});
