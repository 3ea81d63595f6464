// `--worktree`'s snapshot (src/git/worktree-snapshot.ts) on real repositories: what it takes of
// the working files, in a linked worktree (an index of its own) too, without touching the index;
// the same files give the same commit; and the HEAD facts it is dated by, read from a raw commit.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { headCommitOf, snapshotWorktree } from '../../dist/git/worktree-snapshot.js';
import { Git } from '../../dist/git/git.js';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { cleanupAll, git, hermeticEnv, makeProject, tempDir } from '../support/git-fixtures.mjs';

after(cleanupAll);
const newGit = () => new Git(new NodeProcessRunner(), hermeticEnv());

function headOf(repo) {
  const oid = git(repo, 'rev-parse', 'HEAD');
  return headCommitOf(oid, Buffer.from(git(repo, 'cat-file', 'commit', oid)));
}

test('headCommitOf reads the tree and committer time of a raw commit; anything else is refused', () => {
  const raw = Buffer.from(
    'tree 4b825dc642cb6eb9a060e54bf8d69288fbee4904\nauthor A <a@x> 1 +0000\ncommitter C <c@x> 1767225600 +0100\n\nmsg\ncommitter X <x@y> 5 +0000\n',
  );
  assert.deepEqual(headCommitOf('c1', raw), { oid: 'c1', tree: '4b825dc642cb6eb9a060e54bf8d69288fbee4904', timeSeconds: 1767225600 });
  assert.throws(() => headCommitOf('c2', Buffer.from('not a commit')), /c2 is not a readable commit/);
});

test('a snapshot of a linked worktree: modified, untracked and deleted files, not ignored ones; parentless, deterministic; the index untouched', async () => {
  const main = makeProject({ 'a.txt': 'a1\n', 'b.txt': 'b\n', '.gitignore': 'secret\n' });
  const linked = path.join(tempDir('nyl-linked-'), 'wt');
  git(main, 'worktree', 'add', '-q', '-b', 'other', linked);
  fs.writeFileSync(path.join(linked, 'a.txt'), 'a2\n');
  fs.writeFileSync(path.join(linked, 'new.txt'), 'new\n');
  fs.writeFileSync(path.join(linked, 'secret'), 'token\n');
  fs.rmSync(path.join(linked, 'b.txt'));
  const index = git(linked, 'ls-files', '--stage');
  const gitHandle = newGit();
  const head = headOf(linked);
  const snap = await snapshotWorktree(gitHandle, linked, head);
  assert.equal(git(linked, 'rev-list', '--parents', '-n', '1', snap.commit), snap.commit, 'no parent');
  assert.deepEqual(git(linked, 'ls-tree', '--name-only', snap.commit).split('\n'), ['.gitignore', 'a.txt', 'new.txt']);
  assert.equal(git(linked, 'show', `${snap.commit}:a.txt`), 'a2');
  assert.equal(snap.headTree, head.tree);
  assert.notEqual(snap.tree, snap.headTree);
  assert.equal(git(linked, 'ls-files', '--stage'), index, "the linked worktree's index is unchanged");
  assert.equal(git(linked, 'rev-parse', 'HEAD'), head.oid);
  assert.equal((await snapshotWorktree(gitHandle, linked, head)).commit, snap.commit, 'the same files give the same commit');
  // Clean files: the snapshot holds HEAD's tree.
  const clean = await snapshotWorktree(gitHandle, main, headOf(main));
  assert.equal(clean.tree, clean.headTree);
});

test('a file changed in the second the index was written, to the same size, is in the snapshot (the copied index keeps the racy check)', async () => {
  // Git trusts an index entry whose file has the same size and times, unless the entry is racy:
  // not older than the index file itself (written in the same second). A copy of the index dated
  // now made every entry look older than its index, so such an edit was left out of the snapshot.
  // The second is set here instead of waited for: with ctime ignored (core.trustctime false),
  // an mtime set back is an edit in the same second.
  const dir = makeProject({ 'a.txt': 'a1\n' });
  git(dir, 'config', 'core.trustctime', 'false');
  const file = path.join(dir, 'a.txt');
  const second = new Date(Math.floor(Date.now() / 1000) * 1000 - 3600_000);
  fs.utimesSync(file, second, second);
  git(dir, 'update-index', '--refresh');
  fs.writeFileSync(file, 'a2\n');
  fs.utimesSync(file, second, second);
  fs.utimesSync(path.join(dir, '.git', 'index'), second, second);
  const snap = await snapshotWorktree(newGit(), dir, headOf(dir));
  assert.equal(git(dir, 'show', `${snap.commit}:a.txt`), 'a2');
  // As git itself sees it (without writing the index): the entry is racy, the file modified.
  assert.match(git(dir, '--no-optional-locks', 'status', '--porcelain'), /^ ?M a\.txt$/m);
});
