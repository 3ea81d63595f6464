// The line diff `nyl plan` shows of a unit whose rendering changed (src/commands/plan/text-diff.ts): a
// minimal edit script, unified-diff hunks with context (joined where their contexts touch, with
// git's ranges), and multi-line strings of emitted YAML as literal blocks so that a changed script
// diffs line by line.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { diffOps, unifiedDiff } from '../../dist/commands/plan/text-diff.js';
import { emitYaml } from '../../dist/state/yaml-emit.js';

const lines = (text) => text.split('');

test('diffOps: every line of both sides in order; a minimal edit with removals before additions', () => {
  assert.deepEqual(diffOps([], []), []);
  assert.deepEqual(diffOps(['a'], ['a']), [{ op: ' ', line: 'a' }]);
  const ops = diffOps(lines('abcabba'), lines('cbabac'));
  assert.equal(ops.filter((o) => o.op === ' ').length, 4, 'the longest common subsequence has 4 lines');
  assert.deepEqual(
    ops
      .filter((o) => o.op !== '+')
      .map((o) => o.line)
      .join(''),
    'abcabba',
  );
  assert.deepEqual(
    ops
      .filter((o) => o.op !== '-')
      .map((o) => o.line)
      .join(''),
    'cbabac',
  );
  assert.deepEqual(diffOps(['x', 'a'], ['y', 'a']), [
    { op: '-', line: 'x' },
    { op: '+', line: 'y' },
    { op: ' ', line: 'a' },
  ]);
});

test('diffOps: a document rewritten whole past the table limit is all removed, then all added, around its common head and tail', () => {
  const before = ['head', ...Array.from({ length: 2100 }, (_, i) => `old ${i}`), 'tail'];
  const after = ['head', ...Array.from({ length: 2100 }, (_, i) => `new ${i}`), 'tail'];
  const ops = diffOps(before, after);
  assert.deepEqual(ops[0], { op: ' ', line: 'head' });
  assert.deepEqual(ops.at(-1), { op: ' ', line: 'tail' });
  assert.deepEqual(
    ops
      .slice(1, -1)
      .map((o) => o.op)
      .join(''),
    `${'-'.repeat(2100)}${'+'.repeat(2100)}`,
  );
});

test('unifiedDiff: nothing changed is no hunk; one change in the middle has its context; ranges count each side', () => {
  assert.deepEqual(unifiedDiff(['a', 'b'], ['a', 'b']), []);
  const before = lines('abcdefghij');
  const after = lines('abcdXfghij');
  assert.deepEqual(unifiedDiff(before, after, 2), ['@@ -3,5 +3,5 @@', ' c', ' d', '-e', '+X', ' f', ' g']);
  assert.deepEqual(unifiedDiff(before, after, 0), ['@@ -5 +5 @@', '-e', '+X']);
});

test('unifiedDiff: hunks whose contexts touch are one; farther ones are two', () => {
  const before = lines('abcdefghijklmnop');
  const near = lines('aBcdefGhijklmnop');
  // b and g have 4 unchanged lines between them: contexts of 2 touch.
  assert.deepEqual(unifiedDiff(before, near, 2), ['@@ -1,9 +1,9 @@', ' a', '-b', '+B', ' c', ' d', ' e', ' f', '-g', '+G', ' h', ' i']);
  const far = lines('aBcdefghijklmnoP');
  const hunks = unifiedDiff(before, far, 2);
  assert.deepEqual(hunks, ['@@ -1,4 +1,4 @@', ' a', '-b', '+B', ' c', ' d', '@@ -14,3 +14,3 @@', ' n', ' o', '-p', '+P']);
});

test('unifiedDiff: additions to and removals from an empty side', () => {
  assert.deepEqual(unifiedDiff([], ['x', 'y']), ['@@ -0,0 +1,2 @@', '+x', '+y']);
  assert.deepEqual(unifiedDiff(['x'], []), ['@@ -1 +0,0 @@', '-x']);
  assert.deepEqual(unifiedDiff(['a', 'b'], ['a', 'b', 'c'], 1), ['@@ -2 +2,2 @@', ' b', '+c']);
});

test('unifiedDiff agrees with git diff on the hunk heads and lines', (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-text-diff-'));
  t.after(() => fs.rmSync(dir, { recursive: true, force: true }));
  const cases = [
    [lines('abcdefghijklmnop'), lines('aBcdefghijklmnoP')],
    [lines('abcdefgh'), lines('abXYcdefgh')],
    [lines('abcdefgh'), lines('abefgh')],
    [[], lines('abc')],
  ];
  for (const [before, after] of cases) {
    fs.writeFileSync(path.join(dir, 'a'), before.map((l) => `${l}\n`).join(''));
    fs.writeFileSync(path.join(dir, 'b'), after.map((l) => `${l}\n`).join(''));
    const r = spawnSync('git', ['diff', '--no-index', '--no-color', '-U2', 'a', 'b'], { cwd: dir, encoding: 'utf8' });
    const expected = r.stdout
      .split('\n')
      .slice(r.stdout.split('\n').findIndex((l) => l.startsWith('@@')))
      .filter(Boolean)
      .map((l) => (l.startsWith('@@') ? l.replace(/ @@.*$/, ' @@') : l));
    assert.deepEqual(unifiedDiff(before, after, 2), expected, `${before.join('')} -> ${after.join('')}`);
  }
});
