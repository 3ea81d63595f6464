// End-to-end: `nyl reconcile -e dev --worktree` through the built CLI. A project with a modified
// tracked file (staged differently in the index), an untracked file, an ignored file, a deleted
// tracked file and an uncommitted change to nyl.yaml renders from a parentless snapshot of the
// working files; the desired transition retains it as its second parent in the file:// state
// repository; the user's index, HEAD, refs and work tree stay as they were.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll, git } from '../support/git-fixtures.mjs';
import { codes, nyl } from '../support/cli.mjs';
import { logLines, projectYaml, reconcile, refsUnder, setup, trailer } from '../support/reconcile-helpers.mjs';

after(cleanupAll);

const DESIRED = 'refs/heads/nyl/dev/desired';

/** What the unit reports of the files it sees, one log line each. */
function showFiles(log) {
  const seen = (f) => `test -e ${f} && echo ${f}-present >> ${log} || echo ${f}-absent >> ${log}`;
  return { show: `script: 'cat tracked.txt >> ${log}; cat untracked.txt >> ${log}; ${seen('ignored.txt')}; ${seen('deleted.txt')}'` };
}

/**
 * Everything of the checkout --worktree must leave alone (its known branches of state, and the
 * records of the repository they copy, follow the state, as on every run).
 */
function checkoutFacts(project) {
  const refs = Object.entries(refsUnder(project)).filter(([ref]) => !ref.startsWith('refs/heads/nyl/') && !ref.startsWith('refs/nyl-known/'));
  return {
    head: git(project, 'rev-parse', 'HEAD'),
    refs: Object.fromEntries(refs),
    index: git(project, 'ls-files', '--stage'),
    staged: git(project, 'diff', '--cached'),
    status: git(project, 'status', '--porcelain', '--untracked-files=all'),
    tracked: fs.readFileSync(path.join(project, 'tracked.txt'), 'utf8'),
  };
}

function write(project, files) {
  for (const [rel, content] of Object.entries(files)) fs.writeFileSync(path.join(project, rel), content);
}

test('--worktree renders from a parentless snapshot of the working files, retained as the second parent of the desired transition; the checkout is untouched', () => {
  // Committed: a unit that logs only `committed`; the working nyl.yaml has the unit that shows the files.
  const ctx = setup((log) => ({ show: `script: 'echo committed >> ${log}'` }));
  write(ctx.project, { 'tracked.txt': 'v1\n', 'deleted.txt': 'gone soon\n', '.gitignore': 'ignored.txt\n' });
  git(ctx.project, 'add', '-A');
  git(ctx.project, 'commit', '-q', '-m', 'files');
  write(ctx.project, { 'nyl.yaml': projectYaml(ctx.url, showFiles(ctx.log)), 'tracked.txt': 'v2 staged\n' });
  git(ctx.project, 'add', 'tracked.txt');
  write(ctx.project, { 'tracked.txt': 'v2\n', 'untracked.txt': 'new\n', 'ignored.txt': 'secret\n' });
  fs.rmSync(path.join(ctx.project, 'deleted.txt'));
  const before = checkoutFacts(ctx.project);
  const desiredBefore = git(ctx.bare, 'rev-parse', DESIRED);

  const r = reconcile(ctx.project, ['--worktree', '-o', 'json']);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  assert.deepEqual(logLines(ctx.log), ['v2', 'new', 'ignored.txt-absent', 'deleted.txt-absent']);
  assert.deepEqual(codes(r), ['NYL-SOURCE-WORKTREE']);
  const snapshot = r.json.source;
  assert.equal(r.json.sourceWorktree, true);
  assert.equal(r.json.warnings[0].data.snapshot, snapshot);
  assert.equal(r.json.warnings[0].data.retained, true);
  assert.notEqual(snapshot, before.head);

  // State history: first parent the previous desired tip, second the snapshot, which has none.
  const desired = git(ctx.bare, 'rev-parse', DESIRED);
  assert.equal(r.json.desired, desired);
  assert.deepEqual(git(ctx.bare, 'rev-list', '--parents', '-n', '1', desired).split(' ').slice(1), [desiredBefore, snapshot]);
  assert.equal(git(ctx.bare, 'rev-list', '--parents', '-n', '1', snapshot), snapshot, 'the snapshot has no parent');
  assert.deepEqual(trailer(ctx.bare, desired, 'Nyl-Source'), [`${snapshot} (worktree)`]);
  assert.deepEqual(git(ctx.bare, 'ls-tree', '--name-only', snapshot).split('\n').sort(), ['.gitignore', 'nyl.yaml', 'tracked.txt', 'untracked.txt']);
  assert.equal(git(ctx.bare, 'show', `${snapshot}:tracked.txt`), 'v2');

  assert.deepEqual(checkoutFacts(ctx.project), before, 'index, HEAD, refs and work tree unchanged');

  // The same working files give the same snapshot: a plan names it and finds nothing to do.
  const p = nyl(ctx.project, ['plan', '-e', 'dev', '--worktree', '-o', 'json']);
  assert.equal(p.code, 0, p.stdout + p.stderr);
  assert.equal(p.json.source, snapshot);
  // The unit's script cats tracked.txt and untracked.txt, which no inputs glob covers: plan says so.
  assert.deepEqual(codes(p), ['NYL-SOURCE-WORKTREE', 'NYL-SOURCE-UNDECLARED-READ']);
  assert.deepEqual(p.json.warnings[1].data.inputs, ['tracked.txt', 'untracked.txt']);
  assert.equal(p.json.warnings[0].data.retained, false);
});

test('--worktree with --source is a usage error (exit 1), before anything is read', () => {
  const ctx = setup({ a: "script: 'true'" }, { init: false });
  const r = reconcile(ctx.project, ['--worktree', '--source', 'HEAD']);
  assert.equal(r.code, 1, r.stdout + r.stderr);
  assert.deepEqual(codes(r), ['NYL-USAGE']);
  assert.match(r.stderr + r.stdout, /--worktree conflicts with --source/);
});
