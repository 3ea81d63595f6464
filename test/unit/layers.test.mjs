// The layers of src/ (docs/architecture.md, "Layers"), checked on the real import graph.
//
// Every .ts file at every depth under src/ is parsed with the TypeScript compiler API, and every
// import form counts: `import ... from`, `export ... from`, `import type`, side-effect `import 'x'`,
// dynamic `import('x')`, `typeof import('x')`, `require('x')` and `import x = require('x')`.
// Relative specifiers are resolved to the file they name, so '../../plan/x' from a nested folder
// counts as an import of plan/. The checks:
//   (a) each folder imports only the folders its row of ALLOWED lists (all of lower RANK);
//   (b) only src/exec imports child_process, in any form;
//   (c) plan/ imports no Node built-in except crypto (it stays pure);
//   (d) no import cycle between files anywhere in src/;
//   (e) every folder of src/ has a rank;
//   (f) what plan/ loads at runtime, transitively, imports no Node built-in but crypto and no
//       file of exec/ or git/ (type-only imports are erased and do not count);
//   (g) a few exports have one door: acquireLease only from lease/transaction.ts (one lease
//       transaction for every operation);
//   (h) no function is longer than MAX_FUNCTION_LINES;
//   plus: imports resolve (relative ones to a file under src/, bare ones to a built-in or a
//   runtime dependency), and no unit kind name is spelled outside src/drivers.
// The checker is itself tested against fixture sources that break each rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { builtinModules } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const SRC = path.join(ROOT, 'src');

/**
 * The rank of each folder of src/: a folder imports only folders of lower rank (and itself).
 * util is pure helpers, but util/runtime.ts and util/json-cache.ts bind exec and git, so util
 * ranks above git.
 */
const RANK = {
  errors: 0,
  exec: 1,
  git: 2,
  util: 3,
  drivers: 4,
  project: 5,
  state: 6,
  lease: 7,
  plan: 7,
  report: 7,
  run: 8,
  commands: 9,
  ui: 10,
  cli: 11,
};

/** For each folder, the folders its files may import (besides itself): a subset of the lower ranks. */
const ALLOWED = {
  errors: [],
  exec: ['errors'],
  git: ['exec', 'errors'],
  util: ['errors'],
  drivers: ['exec', 'util', 'errors'],
  project: ['drivers', 'git', 'util', 'errors'],
  state: ['project', 'drivers', 'git', 'util', 'errors'],
  lease: ['state', 'git', 'util', 'errors'],
  // Pure: no git, no exec (and no Node built-in but crypto, below).
  plan: ['project', 'state', 'drivers', 'util', 'errors'],
  report: ['util', 'errors'],
  run: ['lease', 'plan', 'state', 'project', 'drivers', 'git', 'exec', 'util', 'errors'],
  // One folder per command family: each command's options and help, request, operation, pure
  // decisions, text rendering and report; what the families share (opening an environment, the
  // multi-environment schedule) in commands/shared/.
  commands: ['run', 'lease', 'plan', 'report', 'state', 'project', 'drivers', 'git', 'exec', 'util', 'errors'],
  // The web view renders the read-only commands' reports as pages (its own front end, beside the
  // CLI's text), and `nyl ui`'s registry entry (ui/command.ts) starts it.
  ui: ['commands', 'report', 'errors', 'util'],
  // The CLI builds the runtime (exec, git, util), parses, prints help and dispatches through the
  // registry (cli/registry.ts: every command's entry, the web view's included).
  cli: ['ui', 'commands', 'report', 'errors', 'util', 'exec', 'git'],
};

/** Files allowed more than their folder's row (the ports that bind processes and Git). */
const FILE_ALLOWED = {
  'util/runtime.ts': ['exec', 'git'],
  'util/json-cache.ts': ['exec', 'git'],
};

/**
 * Cycles tolerated for now, each as the checker reports it. Every entry must still exist (a
 * fixed cycle fails the test until its entry is removed): nothing new can hide here.
 */
/** Cycles tolerated for now (none): each entry must name a cycle that exists. */
const KNOWN_CYCLES = [];

/** Exports only the listed files may import: file -> export -> importers. */
const ONE_DOOR = {
  'lease/lease.ts': { acquireLease: ['lease/transaction.ts'] },
};

const MAX_FUNCTION_LINES = 80;

const PROCESS_MODULES = new Set(['child_process']);
const PLAN_BUILTINS = new Set(['crypto']);
const UNIT_KIND_NAMES = ['Command', 'Terraform', 'OpenTofu', 'OciImage'];
const KIND_NAMES_HOME = 'drivers';

const PACKAGE = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
/**
 * Packages src/ may import: the runtime dependencies, and the packages the CLI bundle
 * (dist/nyl.cjs, scripts/bundle.mjs) carries inside itself. Those are devDependencies: an
 * installed nyl runs the bundle alone and installs nothing else (README, "Install").
 */
const BUNDLED_PACKAGES = ['yaml'];
const RUNTIME_PACKAGES = new Set([...Object.keys(PACKAGE.dependencies ?? {}), ...BUNDLED_PACKAGES]);
const BUILTINS = new Set(builtinModules.map((m) => m.replace(/^node:/, '')));

const RULES = { rank: RANK, allowed: ALLOWED, fileAllowed: FILE_ALLOWED, packages: RUNTIME_PACKAGES, oneDoor: ONE_DOOR };

// --- reading the import graph ---------------------------------------------------------------

/**
 * Every module specifier a source text names, with how (`form`) and where (`line`). A specifier
 * that is not a string literal is returned as `{ specifier: undefined }`: it cannot be checked.
 */
function importsOf(fileName, text) {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const out = [];
  const literal = (node) => (node && (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) ? node.text : undefined);
  // names: what the import takes (['*'] when it may take anything); typeOnly: erased at runtime.
  const add = (node, form, spec, { names = ['*'], typeOnly = false } = {}) =>
    out.push({ specifier: spec, form, names, typeOnly, line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1 });
  const visit = (node) => {
    if (ts.isImportDeclaration(node)) {
      const clause = node.importClause;
      const named = clause?.namedBindings && ts.isNamedImports(clause.namedBindings) ? clause.namedBindings.elements : undefined;
      const names = named && !clause.name ? named.map((e) => (e.propertyName ?? e.name).text) : ['*'];
      const typeOnly = Boolean(clause?.isTypeOnly || (named && !clause.name && named.length > 0 && named.every((e) => e.isTypeOnly)));
      add(node, clause ? (clause.isTypeOnly ? 'import type' : 'import') : 'side-effect import', literal(node.moduleSpecifier), { names, typeOnly });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier) {
      const named = node.exportClause && ts.isNamedExports(node.exportClause) ? node.exportClause.elements : undefined;
      add(node, 'export from', literal(node.moduleSpecifier), {
        names: named ? named.map((e) => (e.propertyName ?? e.name).text) : ['*'],
        typeOnly: node.isTypeOnly,
      });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      add(node, 'import = require', literal(node.moduleReference.expression));
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      add(node, 'typeof import', ts.isLiteralTypeNode(arg) ? literal(arg.literal) : undefined, { typeOnly: true });
    } else if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const isDynamicImport = callee.kind === ts.SyntaxKind.ImportKeyword;
      const isRequire =
        (ts.isIdentifier(callee) && callee.text === 'require') ||
        (ts.isPropertyAccessExpression(callee) &&
          ts.isIdentifier(callee.name) &&
          callee.name.text === 'require' &&
          ts.isIdentifier(callee.expression) &&
          callee.expression.text === 'module');
      if (isDynamicImport || isRequire) add(node, isDynamicImport ? 'import()' : 'require', literal(node.arguments[0]));
      // createRequire hands out a require that no check could follow.
      if (ts.isIdentifier(callee) && callee.text === 'createRequire') add(node, 'createRequire', undefined);
    } else if (ts.isIdentifier(node) && node.text === 'require' && !isCalledRequire(node)) {
      // `const load = require; load('x')`: an alias no check could follow.
      add(node, 'require alias', undefined);
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

/** Is this `require` identifier called at once (require(...), module.require(...)), or asked only for require.main? */
function isCalledRequire(node) {
  const parent = node.parent;
  if (ts.isCallExpression(parent) && parent.expression === node) return true;
  if (ts.isPropertyAccessExpression(parent) && parent.expression === node && parent.name.text === 'main') return true;
  return ts.isPropertyAccessExpression(parent) && parent.name === node && ts.isCallExpression(parent.parent) && parent.parent.expression === parent;
}

/** The file a relative specifier names, among `files` (paths relative to src/, with /). */
function resolveRelative(from, specifier, files) {
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), specifier));
  const stem = base.replace(/\.(js|ts)$/, '');
  for (const candidate of [base, `${stem}.ts`, `${base}.ts`, `${base}/index.ts`]) {
    if (files.has(candidate)) return candidate;
  }
  return undefined;
}

const folderOf = (file) => (file.includes('/') ? file.split('/')[0] : undefined);

/**
 * Checks a set of sources: `files` maps paths relative to src/ (such as 'plan/planner.ts') to
 * their text. Returns every problem found, one sentence each, sorted.
 */
function checkLayers(files, rules = RULES) {
  const problems = [];
  const known = new Set(Object.keys(files).filter((f) => f.endsWith('.ts')));
  const edges = new Map([...known].map((f) => [f, []]));
  // What each file loads when it runs: relative imports that are not erased, and built-ins.
  const runtime = new Map([...known].map((f) => [f, { files: [], builtins: [] }]));

  for (const folder of Object.keys(rules.allowed)) {
    if (!(folder in rules.rank)) problems.push(`ALLOWED lists ${folder}, which has no rank`);
    for (const target of rules.allowed[folder]) {
      if (!(rules.rank[target] < rules.rank[folder]))
        problems.push(`ALLOWED lets ${folder} (rank ${rules.rank[folder]}) import ${target} (rank ${rules.rank[target]}): not lower`);
    }
  }
  for (const [file, extra] of Object.entries(rules.fileAllowed)) {
    for (const target of extra) {
      if (!(rules.rank[target] < rules.rank[folderOf(file)])) problems.push(`FILE_ALLOWED lets ${file} import ${target}: not of lower rank`);
    }
  }

  for (const file of [...known].sort()) {
    const folder = folderOf(file);
    if (folder === undefined) {
      problems.push(`${file} lies directly in src/: put it in a folder with a rank`);
      continue;
    }
    if (!(folder in rules.rank) || !(folder in rules.allowed)) {
      problems.push(`src/${folder}/ has no rank: add it to RANK and ALLOWED in test/unit/layers.test.mjs`);
      continue;
    }
    const allowed = new Set([folder, ...rules.allowed[folder], ...(rules.fileAllowed[file] ?? [])]);
    for (const imp of importsOf(file, files[file])) {
      const where = `${file}:${imp.line} (${imp.form})`;
      if (imp.specifier === undefined) {
        problems.push(`${where}: the module is not a string literal, so no check can follow it`);
        continue;
      }
      if (imp.specifier.startsWith('.')) {
        const target = resolveRelative(file, imp.specifier, known);
        if (target === undefined) {
          problems.push(`${where}: '${imp.specifier}' resolves to no .ts file under src/`);
          continue;
        }
        edges.get(file).push(target);
        if (!imp.typeOnly) runtime.get(file).files.push(target);
        problems.push(...oneDoorProblems(rules.oneDoor ?? {}, file, target, imp, where));
        const targetFolder = folderOf(target);
        if (!allowed.has(targetFolder)) {
          problems.push(`${where}: src/${folder}/ must not import src/${targetFolder}/ ('${imp.specifier}' is ${target})`);
        }
        continue;
      }
      const bare = imp.specifier.replace(/^node:/, '');
      const isBuiltin = imp.specifier.startsWith('node:') || BUILTINS.has(bare.split('/')[0]);
      if (isBuiltin) {
        const name = bare.split('/')[0];
        if (!imp.typeOnly) runtime.get(file).builtins.push(imp.specifier);
        if (PROCESS_MODULES.has(name) && folder !== 'exec') problems.push(`${where}: only src/exec/ may import ${imp.specifier}`);
        if (folder === 'plan' && !PLAN_BUILTINS.has(name)) problems.push(`${where}: src/plan/ is pure; it must not import ${imp.specifier}`);
        continue;
      }
      const pkg = imp.specifier.startsWith('@') ? imp.specifier.split('/').slice(0, 2).join('/') : imp.specifier.split('/')[0];
      if (!rules.packages.has(pkg)) problems.push(`${where}: '${imp.specifier}' is neither a file under src/, a Node built-in nor a runtime dependency`);
      else if (folder === 'plan') problems.push(`${where}: src/plan/ is pure; it must not import the package ${pkg}`);
    }
  }

  for (const cycle of findCycles(edges)) problems.push(`import cycle: ${cycle.join(' -> ')}`);
  problems.push(...planLoadsProblems(runtime));

  const kindName = new RegExp(`(['"\`])(${UNIT_KIND_NAMES.join('|')})\\1`, 'g');
  for (const file of [...known].sort()) {
    if (folderOf(file) === KIND_NAMES_HOME) continue;
    files[file].split('\n').forEach((line, i) => {
      for (const m of line.matchAll(kindName)) {
        problems.push(`${file}:${i + 1}: the unit kind name ${m[0]} is spelled outside src/${KIND_NAMES_HOME}/; ask the driver registry`);
      }
    });
  }
  return problems.sort();
}

/** An import of an export that has one door, from a file that is not that door. */
function oneDoorProblems(oneDoor, file, target, imp, where) {
  const guarded = oneDoor[target] ?? {};
  const taken = imp.names.includes('*') ? Object.keys(guarded) : imp.names.filter((n) => n in guarded);
  return taken.filter((n) => !guarded[n].includes(file)).map((n) => `${where}: only ${guarded[n].join(', ')} may import ${n} from ${target}`);
}

/**
 * Everything plan/ loads at runtime, transitively, must be as pure as plan/ itself. What plan/
 * imports directly is the layer check's to report; this one follows the rest.
 */
function planLoadsProblems(runtime) {
  const problems = [];
  const via = new Map();
  const queue = [...runtime.keys()].filter((f) => folderOf(f) === 'plan').sort();
  for (const f of queue) via.set(f, [f]);
  while (queue.length > 0) {
    const file = queue.shift();
    const chain = via.get(file).join(' -> ');
    if (folderOf(file) === 'exec' || folderOf(file) === 'git') {
      if (via.get(file).length > 2) problems.push(`src/plan/ loads ${file} at runtime (${chain}): plan must stay pure`);
      continue;
    }
    const builtins = folderOf(file) === 'plan' ? [] : runtime.get(file).builtins;
    for (const b of builtins) {
      if (!PLAN_BUILTINS.has(b.replace(/^node:/, '').split('/')[0])) problems.push(`src/plan/ loads ${b} at runtime (${chain}): plan must stay pure`);
    }
    for (const next of runtime.get(file).files) {
      if (via.has(next)) continue;
      via.set(next, [...via.get(file), next]);
      queue.push(next);
    }
  }
  return problems;
}

/** Functions longer than `max` lines (a screen is the aim; this is the hard limit). */
function longFunctions(files, max = MAX_FUNCTION_LINES) {
  const problems = [];
  for (const [file, text] of Object.entries(files)) {
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
    const visit = (node) => {
      const isFunction =
        ts.isFunctionDeclaration(node) ||
        ts.isMethodDeclaration(node) ||
        ts.isArrowFunction(node) ||
        ts.isFunctionExpression(node) ||
        ts.isConstructorDeclaration(node) ||
        ts.isGetAccessor(node);
      if (isFunction && node.body) {
        const first = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
        const lines = sf.getLineAndCharacterOfPosition(node.end).line - first + 1;
        if (lines > max) problems.push(`${file}:${first + 1}: ${node.name?.getText(sf) ?? 'a function'} has ${lines} lines (at most ${max})`);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return problems.sort();
}

/** One cycle per strongly connected component of more than one file (or a self-import). */
function findCycles(edges) {
  let counter = 0;
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const components = [];
  const strongConnect = (v) => {
    index.set(v, counter);
    low.set(v, counter);
    counter++;
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!index.has(w)) {
        strongConnect(w);
        low.set(v, Math.min(low.get(v), low.get(w)));
      } else if (onStack.has(w)) {
        low.set(v, Math.min(low.get(v), index.get(w)));
      }
    }
    if (low.get(v) === index.get(v)) {
      const component = [];
      let w;
      do {
        w = stack.pop();
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1 || (edges.get(v) ?? []).includes(v)) components.push(new Set(component));
    }
  };
  for (const v of [...edges.keys()].sort()) if (!index.has(v)) strongConnect(v);
  // Name one concrete cycle of each component: a shortest path back to its first file.
  return components.map((component) => {
    const start = [...component].sort()[0];
    const previous = new Map([[start, undefined]]);
    const queue = [start];
    while (queue.length > 0) {
      const v = queue.shift();
      for (const w of edges.get(v) ?? []) {
        if (!component.has(w)) continue;
        if (w === start) {
          const path = [start];
          for (let x = v; x !== start; x = previous.get(x)) path.splice(1, 0, x);
          return [...path, start];
        }
        if (!previous.has(w)) {
          previous.set(w, v);
          queue.push(w);
        }
      }
    }
    return [...component];
  });
}

function readSources(dir, base = '') {
  const out = {};
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const rel = base ? `${base}/${entry.name}` : entry.name;
    if (entry.isDirectory()) Object.assign(out, readSources(path.join(dir, entry.name), rel));
    else if (entry.name.endsWith('.ts')) out[rel] = fs.readFileSync(path.join(dir, entry.name), 'utf8');
  }
  return out;
}

// --- the real src/ --------------------------------------------------------------------------

test('src/ follows its layers: allowed folders, child_process only in exec, a pure plan, no cycles, no kind names outside drivers', () => {
  const sources = readSources(SRC);
  assert.ok(
    Object.keys(sources).some((f) => f.split('/').length > 2),
    'nested folders are read too',
  );
  const problems = checkLayers(sources);
  assert.deepEqual(
    problems.filter((p) => !KNOWN_CYCLES.includes(p)),
    [],
  );
  assert.deepEqual(
    KNOWN_CYCLES.filter((c) => !problems.includes(c)),
    [],
    'these cycles are gone: remove them from KNOWN_CYCLES',
  );
});

test(`no function of src/ is longer than ${MAX_FUNCTION_LINES} lines`, () => {
  assert.deepEqual(longFunctions(readSources(SRC)), []);
});

/**
 * The rank table of docs/architecture.md ("Layers") as rules: rank, folder, and what it may import (backquoted folder
 * names, "everything below" for all lower ranks, "none"; a parenthesis names files allowed more,
 * as "(`runtime` and `json-cache` also `exec` and `git`)").
 */
export function layerTable(markdown) {
  const rows = markdown.split('\n').filter((l) => /^\| \d+ \| `src\/[a-z-]+\/` \|/.test(l));
  const rank = {};
  const allowed = {};
  const fileAllowed = {};
  for (const row of rows) {
    const [, r, dir, imports] = row.split('|').map((c) => c.trim());
    const folder = dir.replace(/^`src\/|\/`$/g, '');
    rank[folder] = Number(r);
    const [own, extra] = imports.split('(');
    allowed[folder] = own.trim() === 'none' ? [] : own.trim() === 'everything below' ? 'below' : [...own.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]);
    if (extra) {
      const [files, targets] = extra.split(' also ');
      for (const f of files.matchAll(/`([a-z-]+)`/g)) fileAllowed[`${folder}/${f[1]}.ts`] = [...targets.matchAll(/`([a-z-]+)`/g)].map((m) => m[1]);
    }
  }
  for (const [folder, list] of Object.entries(allowed)) {
    if (list === 'below') allowed[folder] = Object.keys(rank).filter((f) => rank[f] < rank[folder]);
  }
  return { rank, allowed, fileAllowed };
}

const sortedRows = (table) =>
  Object.fromEntries(
    Object.entries(table)
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([k, v]) => [k, Array.isArray(v) ? [...v].sort() : v]),
  );

test("docs/architecture.md's rank table is the one this test enforces", () => {
  const doc = layerTable(fs.readFileSync(path.join(ROOT, 'docs', 'architecture.md'), 'utf8'));
  assert.deepEqual(sortedRows(doc.rank), sortedRows(RANK));
  assert.deepEqual(sortedRows(doc.allowed), sortedRows(ALLOWED));
  assert.deepEqual(sortedRows(doc.fileAllowed), sortedRows(FILE_ALLOWED));
});

test('checker: the rank table reader reads ranks, import lists, "everything below", "none" and file exceptions', () => {
  const md = [
    '| rank | directory | may import | responsibility |',
    '| 2 | `src/top/` | everything below | x |',
    '| 1 | `src/mid/` | `low` (`port` also `top`) | y |',
    '| 0 | `src/low/` | none | z |',
  ].join('\n');
  assert.deepEqual(layerTable(md), {
    rank: { top: 2, mid: 1, low: 0 },
    allowed: { top: ['mid', 'low'], mid: ['low'], low: [] },
    fileAllowed: { 'mid/port.ts': ['top'] },
  });
});

test('every folder of src/, at every depth, has a README.md that says what it holds', () => {
  const problems = [];
  const visit = (dir) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const folder = path.join(dir, entry.name);
      const rel = path.relative(SRC, folder).split(path.sep).join('/');
      const readme = path.join(folder, 'README.md');
      const text = fs.existsSync(readme) ? fs.readFileSync(readme, 'utf8') : '';
      if (!text.startsWith(`# src/${rel}/\n\n`) || text.trim().split('\n').length < 3)
        problems.push(`src/${rel}/README.md: missing, or not "# src/${rel}/" and a paragraph`);
      visit(folder);
    }
  };
  visit(SRC);
  assert.deepEqual(problems, []);
});

/**
 * Git argv built outside src/git: a call `<x>.run(dir, [ ... ])` with an array literal in a file
 * that imports src/git/git.ts (the Git class). src/git is the only builder of Git argv.
 */
export function gitArgvOutsideGit(files) {
  const problems = [];
  for (const [file, text] of Object.entries(files)) {
    if (file.startsWith('git/') || !/from '(\.\.\/)+git\/git'/.test(text)) continue;
    const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
    const visit = (node) => {
      if (
        ts.isCallExpression(node) &&
        ts.isPropertyAccessExpression(node.expression) &&
        node.expression.name.text === 'run' &&
        node.arguments[1] &&
        ts.isArrayLiteralExpression(node.arguments[1])
      ) {
        problems.push(`${file}:${sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1}: Git argv built outside src/git`);
      }
      ts.forEachChild(node, visit);
    };
    visit(sf);
  }
  return problems;
}

test('src/git is the only builder of Git argv', () => {
  assert.deepEqual(gitArgvOutsideGit(readSources(SRC)), []);
});

test('checker: Git argv outside src/git is found', () => {
  const files = {
    'project/a.ts': "import type { Git } from '../git/git';\nexport const a = (git: Git) => git.run('.', ['status']);\n",
    'git/b.ts': "import type { Git } from './git';\nexport const b = (git: Git) => git.run('.', ['status']);\n",
    'run/c.ts': "import { pool } from './pool';\nexport const c = pool.run('.', ['x']);\n",
  };
  assert.deepEqual(gitArgvOutsideGit(files), ['project/a.ts:2: Git argv built outside src/git']);
});

test('every folder of src/ has a rank', () => {
  const folders = fs
    .readdirSync(SRC, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => e.name);
  assert.deepEqual(
    folders.filter((f) => !(f in RANK) || !(f in ALLOWED)),
    [],
  );
  assert.deepEqual(Object.keys(RANK).sort(), Object.keys(ALLOWED).sort());
});

// --- the checker itself ---------------------------------------------------------------------

/** A small clean tree the fixtures below break one rule at a time. */
const CLEAN = {
  'errors/diagnostic.ts': 'export const x = 1;\n',
  'exec/process.ts':
    "import { spawn } from 'node:child_process';\nimport type { ChildProcess } from 'child_process';\nimport { x } from '../errors/diagnostic';\nexport { spawn, x };\nexport type P = ChildProcess;\n",
  'git/git.ts': "import { spawn } from '../exec/process';\nexport const g = spawn;\n",
  'util/duration.ts': 'export const d = 1;\n',
  'util/runtime.ts': "import type { P } from '../exec/process.js';\nimport { g } from '../git/git';\nexport type R = P | typeof g;\n",
  'drivers/kinds.ts': "export const kind = 'Command';\n",
  'drivers/command/index.ts':
    "import { d } from '../../util/duration';\nimport { spawn } from '../../exec/process';\nimport { kind } from '../kinds';\nexport { d, kind, spawn };\n",
  'drivers/registry.ts': "export * from './command';\n",
  'project/schema.ts':
    "import { kind } from '../drivers/kinds';\nimport type { spawn } from '../drivers/registry';\nimport YAML from 'yaml';\nexport const k = kind + YAML;\nexport type S = typeof spawn;\n",
  'state/read.ts': "import { k } from '../project/schema';\nexport const s = k;\n",
  'plan/planner.ts': "import { createHash } from 'node:crypto';\nimport { s } from '../state/read';\nexport const p = createHash + s;\n",
  'report/types.ts': "import type { x } from '../errors/diagnostic';\nexport type T = typeof x;\n",
  'lease/lease.ts': "import { s } from '../state/read';\nexport const l = s;\n",
  'run/engine.ts': "import { p } from '../plan/planner';\nimport { l } from '../lease/lease';\nexport const e = p + l;\n",
  'commands/reconcile.ts': "import { e } from '../run/engine';\nexport const r = e;\n",
  'cli/parse.ts': 'export const parse = 1;\n',
  'cli/main.ts': "import { parse } from './parse';\nexport async function main() { const { r } = await import('../commands/reconcile'); return r + parse; }\n",
};

const checkFixture = (changes) => {
  const files = { ...CLEAN, ...changes };
  for (const [k, v] of Object.entries(files)) if (v === undefined) delete files[k];
  return checkLayers(files);
};

test('checker: the clean fixture tree passes', () => {
  assert.deepEqual(checkLayers(CLEAN), []);
});

test('checker: every import form is read', () => {
  const text = [
    "import a from './a';",
    "import type { B } from './b';",
    "import './c';",
    "export { d } from './d';",
    "export * from './e';",
    "import f = require('./f');",
    "const g = require('./g');",
    "const h = module.require('./h');",
    "async function i() { return import('./i'); }",
    "type J = typeof import('./j');",
    'const k = require(`./k`);',
    'const l = require(name);',
  ].join('\n');
  const found = importsOf('x.ts', text).map((i) => [i.form, i.specifier]);
  assert.deepEqual(found, [
    ['import', './a'],
    ['import type', './b'],
    ['side-effect import', './c'],
    ['export from', './d'],
    ['export from', './e'],
    ['import = require', './f'],
    ['require', './g'],
    ['require', './h'],
    ['import()', './i'],
    ['typeof import', './j'],
    ['require', './k'],
    ['require', undefined],
  ]);
});

test('checker: a deep relative import from a nested folder is a layer violation', () => {
  const problems = checkFixture({ 'drivers/command/bad.ts': "import { p } from '../../plan/planner';\nexport const b = p;\n" });
  assert.equal(problems.length, 1, problems.join('\n'));
  assert.match(
    problems[0],
    /^drivers\/command\/bad\.ts:1 \(import\): src\/drivers\/ must not import src\/plan\/ \('..\/..\/plan\/planner' is plan\/planner\.ts\)$/,
  );
});

test('checker: a dynamic import, a require, an import = require and a typeof import are layer violations', () => {
  const problems = checkFixture({
    'project/a.ts': "export async function a() { return import('../run/engine'); }\n",
    'state/b.ts': "export const b = require('../commands/reconcile');\n",
    'lease/c.ts': "import c = require('../plan/planner');\nexport { c };\n",
    'report/d.ts': "export type D = typeof import('../state/read');\n",
  });
  assert.deepEqual(
    problems.map((p) => p.replace(/ \('.*$/, '')),
    [
      'lease/c.ts:1 (import = require): src/lease/ must not import src/plan/',
      'project/a.ts:1 (import()): src/project/ must not import src/run/',
      'report/d.ts:1 (typeof import): src/report/ must not import src/state/',
      'state/b.ts:1 (require): src/state/ must not import src/commands/',
    ],
  );
});

test('checker: nothing imports cli', () => {
  const problems = checkFixture({ 'commands/x.ts': "import { parse } from '../cli/parse';\nexport const x = parse;\n" });
  assert.equal(problems.length, 1);
  assert.match(problems[0], /src\/commands\/ must not import src\/cli\//);
});

test('checker: child_process outside exec, in every form, bare or node:', () => {
  const problems = checkFixture({
    'git/a.ts': "import { spawn } from 'child_process';\nexport const a = spawn;\n",
    'git/b.ts': "import type { ChildProcess } from 'node:child_process';\nexport type B = ChildProcess;\n",
    'util/c.ts': "export const c = require('child_process');\n",
    'drivers/command/d.ts': "export const d = () => import('node:child_process');\n",
  });
  assert.deepEqual(problems, [
    'drivers/command/d.ts:1 (import()): only src/exec/ may import node:child_process',
    'git/a.ts:1 (import): only src/exec/ may import child_process',
    'git/b.ts:1 (import type): only src/exec/ may import node:child_process',
    'util/c.ts:1 (require): only src/exec/ may import child_process',
  ]);
});

test('checker: plan imports no Node built-in but crypto, no git and no exec', () => {
  const problems = checkFixture({
    'plan/a.ts':
      "import { readFileSync } from 'node:fs';\nimport * as p from 'path';\nimport { g } from '../git/git';\nimport { spawn } from '../exec/process';\nexport const a = [readFileSync, p, g, spawn];\n",
  });
  assert.deepEqual(
    problems.map((p) => p.replace(/ \('.*$/, '')),
    [
      'plan/a.ts:1 (import): src/plan/ is pure; it must not import node:fs',
      'plan/a.ts:2 (import): src/plan/ is pure; it must not import path',
      'plan/a.ts:3 (import): src/plan/ must not import src/git/',
      'plan/a.ts:4 (import): src/plan/ must not import src/exec/',
    ],
  );
});

test('checker: util files other than runtime and json-cache stay pure', () => {
  const problems = checkFixture({ 'util/duration.ts': "import { g } from '../git/git';\nexport const d = g;\n" });
  assert.equal(problems.length, 1);
  assert.match(problems[0], /util\/duration\.ts:1 \(import\): src\/util\/ must not import src\/git\//);
});

test('checker: an import cycle between files is reported with its path', () => {
  const problems = checkFixture({
    'cli/main.ts': "import { parse } from './parse';\nexport const main = parse;\n",
    'cli/parse.ts': "import type { main } from './main';\nexport const parse = 1;\nexport type M = typeof main;\n",
    'util/a.ts': "import { b } from './b';\nexport const a = b;\n",
    'util/b.ts': "import { c } from './c';\nexport const b = c;\n",
    'util/c.ts': "export const c = () => require('./a');\n",
    'util/self.ts': "export * from './self';\n",
  });
  assert.deepEqual(problems, [
    'import cycle: cli/main.ts -> cli/parse.ts -> cli/main.ts',
    'import cycle: util/a.ts -> util/b.ts -> util/c.ts -> util/a.ts',
    'import cycle: util/self.ts -> util/self.ts',
  ]);
});

test('checker: a folder without a rank, a file directly in src/, unresolvable and unknown modules fail', () => {
  const problems = checkFixture({
    'ports/store.ts': 'export const s = 1;\n',
    'index.ts': 'export const i = 1;\n',
    'util/a.ts': "import { z } from './missing';\nexport const a = z;\n",
    'util/b.ts': "import left from 'left-pad';\nexport const b = left;\n",
    'util/c.ts': "const name = './a';\nexport const c = require(name);\n",
    'util/d.ts': "import { createRequire } from 'node:module';\nexport const d = createRequire(__filename)('../exec/process');\n",
  });
  assert.deepEqual(problems, [
    'index.ts lies directly in src/: put it in a folder with a rank',
    'src/ports/ has no rank: add it to RANK and ALLOWED in test/unit/layers.test.mjs',
    "util/a.ts:1 (import): './missing' resolves to no .ts file under src/",
    "util/b.ts:1 (import): 'left-pad' is neither a file under src/, a Node built-in nor a runtime dependency",
    'util/c.ts:2 (require): the module is not a string literal, so no check can follow it',
    'util/d.ts:2 (createRequire): the module is not a string literal, so no check can follow it',
  ]);
});

test('checker: unit kind names are spelled only under src/drivers', () => {
  const problems = checkFixture({
    'project/kinds.ts': "export const KINDS = ['Command', \"Terraform\", `OpenTofu`];\nexport const ok = 'Commands';\n",
    'drivers/oci-image/spec.ts': "export const kind = 'OciImage';\n",
  });
  assert.deepEqual(problems, [
    'project/kinds.ts:1: the unit kind name "Terraform" is spelled outside src/drivers/; ask the driver registry',
    "project/kinds.ts:1: the unit kind name 'Command' is spelled outside src/drivers/; ask the driver registry",
    'project/kinds.ts:1: the unit kind name `OpenTofu` is spelled outside src/drivers/; ask the driver registry',
  ]);
});

test('checker: the table itself must point downwards', () => {
  const problems = checkLayers(CLEAN, { ...RULES, allowed: { ...ALLOWED, git: ['exec', 'errors', 'util'] } });
  assert.deepEqual(problems, ['ALLOWED lets git (rank 2) import util (rank 3): not lower']);
});

test('checker: plan loads nothing impure at runtime, however deep; type-only imports do not count', () => {
  const impure = checkFixture({
    'drivers/kinds.ts': "import { readFileSync } from 'node:fs';\nexport const kind = 'Command';\nexport const r = readFileSync;\n",
  });
  assert.ok(
    impure.includes('src/plan/ loads node:fs at runtime (plan/planner.ts -> state/read.ts -> project/schema.ts -> drivers/kinds.ts): plan must stay pure'),
    impure.join('\n'),
  );
  const viaExec = checkFixture({ 'project/schema.ts': "import { kind } from '../drivers/registry';\nexport const k = kind;\n" });
  assert.ok(
    viaExec.includes(
      'src/plan/ loads exec/process.ts at runtime (plan/planner.ts -> state/read.ts -> project/schema.ts -> drivers/registry.ts -> drivers/command/index.ts -> exec/process.ts): plan must stay pure',
    ),
    viaExec.join('\n'),
  );
  const elided = checkFixture({
    'project/schema.ts':
      "import { kind } from '../drivers/kinds';\nimport { type spawn } from '../drivers/registry';\nexport const k = kind;\nexport type S = typeof spawn;\n",
  });
  assert.deepEqual(elided, [], 'an import whose every name is a type is erased');
});

test('checker: an export with one door is imported only through it', () => {
  const rules = { ...RULES, oneDoor: { 'lease/lease.ts': { acquire: ['lease/transaction.ts'] } } };
  const files = {
    ...CLEAN,
    'lease/lease.ts': "import { s } from '../state/read';\nexport const l = s;\nexport const acquire = 1;\n",
    'lease/transaction.ts': "import { acquire } from './lease';\nexport const t = acquire;\n",
    'run/engine.ts': "import { p } from '../plan/planner';\nimport { l, acquire as take } from '../lease/lease';\nexport const e = p + l + take;\n",
    'commands/reconcile.ts': "import * as lease from '../lease/lease';\nimport { e } from '../run/engine';\nexport const r = e + lease.l;\n",
  };
  assert.deepEqual(
    checkLayers(files, rules).filter((p) => p.includes('may import')),
    [
      'commands/reconcile.ts:1 (import): only lease/transaction.ts may import acquire from lease/lease.ts',
      'run/engine.ts:2 (import): only lease/transaction.ts may import acquire from lease/lease.ts',
    ],
  );
});

test('checker: a function over the limit is reported with its line and length', () => {
  const body = Array.from({ length: 80 }, (_, i) => `  const v${i} = ${i};`).join('\n');
  const problems = longFunctions({ 'run/long.ts': `export function long() {\n${body}\n}\nexport const short = () => 1;\n` });
  assert.deepEqual(problems, ['run/long.ts:1: long has 82 lines (at most 80)']);
});

test('checker: require handed around as a value is refused: no check could follow it', () => {
  const problems = checkFixture({ 'plan/alias.ts': "const load = require;\nexport const m = load('node:fs');\n" });
  assert.deepEqual(problems, ['plan/alias.ts:1 (require alias): the module is not a string literal, so no check can follow it']);
});
