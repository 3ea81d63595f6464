// No file outside src/plan/ reads or compares a unit's lifecycle state: the rules about an
// incarnation live in src/plan/unit-view.ts, and every command asks there (issue 32). Checked on
// the syntax of every .ts file under src/, outside src/plan/:
//   - no read of a `lifecycle` member's `state` (`d.lifecycle.state`, `d.lifecycle?.state`,
//     `d.lifecycle['state']`, `lifecycle.state` of a destructured `lifecycle`), and no
//     destructuring of it (`const { lifecycle: { state } } = d`);
//   - no comparison (`===`, `!==`, `==`, `!=`) or `switch` on a call of `lifecycleState(...)`.
// Writing a lifecycle state (`lifecycle: { state: 'held' }` in an object literal) is allowed: it
// records a decision made in plan/. The checker is tested against fixtures that break each rule.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');
const HOME = 'plan';

const EQUALITY = new Set([
  ts.SyntaxKind.EqualsEqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsEqualsToken,
  ts.SyntaxKind.EqualsEqualsToken,
  ts.SyntaxKind.ExclamationEqualsToken,
]);

const memberName = (node) =>
  ts.isPropertyAccessExpression(node)
    ? node.name.text
    : ts.isElementAccessExpression(node) && ts.isStringLiteralLike(node.argumentExpression)
      ? node.argumentExpression.text
      : undefined;

/** `x.lifecycle.state`, `x.lifecycle?.state`, `x['lifecycle']['state']`, and `lifecycle.state` of a destructured `lifecycle`. */
const readsState = (node) =>
  memberName(node) === 'state' && (memberName(node.expression) === 'lifecycle' || (ts.isIdentifier(node.expression) && node.expression.text === 'lifecycle'));

/** `{ lifecycle: { state } }`: the state bound out of a document's lifecycle. */
const bindsState = (node) =>
  node.propertyName &&
  ts.isIdentifier(node.propertyName) &&
  node.propertyName.text === 'lifecycle' &&
  ts.isObjectBindingPattern(node.name) &&
  node.name.elements.some((e) => ((e.propertyName ?? e.name).text ?? '') === 'state');

/** `lifecycleState(...)`, also through parentheses. */
function isLifecycleCall(node) {
  while (ts.isParenthesizedExpression(node)) node = node.expression;
  return ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'lifecycleState';
}

/** Every breach in one source text: `{ line, what }`. */
export function lifecycleBreaches(fileName, text) {
  const sf = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const out = [];
  const add = (node, what) => out.push({ line: sf.getLineAndCharacterOfPosition(node.getStart(sf)).line + 1, what });
  const visit = (node) => {
    if ((ts.isPropertyAccessExpression(node) || ts.isElementAccessExpression(node)) && readsState(node)) add(node, 'reads lifecycle.state');
    else if (ts.isBindingElement(node) && bindsState(node)) add(node, 'destructures lifecycle.state');
    else if (ts.isBinaryExpression(node) && EQUALITY.has(node.operatorToken.kind) && (isLifecycleCall(node.left) || isLifecycleCall(node.right)))
      add(node, 'compares a lifecycle state');
    else if (ts.isSwitchStatement(node) && isLifecycleCall(node.expression)) add(node, 'switches on a lifecycle state');
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

function sourceFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(full);
    return e.name.endsWith('.ts') ? [full] : [];
  });
}

test('no file outside src/plan/ reads, compares or switches on a lifecycle state', () => {
  const breaches = [];
  for (const file of sourceFiles(SRC)) {
    const rel = path.relative(SRC, file).split(path.sep).join('/');
    if (rel.startsWith(`${HOME}/`)) continue;
    for (const b of lifecycleBreaches(rel, fs.readFileSync(file, 'utf8'))) breaches.push(`src/${rel}:${b.line}: ${b.what} (ask src/plan/unit-view.ts)`);
  }
  assert.deepEqual(breaches, []);
});

test('the checker finds every form of reading or comparing a lifecycle state', () => {
  const cases = [
    ["if (d?.lifecycle?.state === 'held') x();", 'reads lifecycle.state'],
    ['const s = d.lifecycle.state;', 'reads lifecycle.state'],
    ["const s = d['lifecycle']['state'];", 'reads lifecycle.state'],
    ['const { lifecycle } = d; f(lifecycle.state);', 'reads lifecycle.state'],
    ['const { lifecycle: { state } } = d;', 'destructures lifecycle.state'],
    ["if (lifecycleState(d) !== 'active') x();", 'compares a lifecycle state'],
    ["if ('held' == (lifecycleState(d))) x();", 'compares a lifecycle state'],
    ['switch (lifecycleState(d)) { default: }', 'switches on a lifecycle state'],
  ];
  for (const [text, what] of cases)
    assert.deepEqual(
      lifecycleBreaches('fixture.ts', text).map((b) => b.what),
      [what],
      text,
    );
});

test('the checker lets writes and other states pass', () => {
  const fine = [
    "const doc = { uid, lifecycle: { state: 'held' } };",
    "if (row.result === 'held') x();",
    "if (state.status === 'active') x();",
    'const l = input.lifecycle?.allowTeardown;',
    'const { lifecycle } = input; f(lifecycle?.allowTeardown);',
    'if (isHeld(d)) x();',
  ];
  for (const text of fine) assert.deepEqual(lifecycleBreaches('fixture.ts', text), [], text);
});
