// The checkout facts every command reads (src/project/checkout.ts), on real repositories: the
// project root and prefix, and the branch checked out, which a state ref may never be.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { openCheckout } from '../../dist/project/checkout.js';
import { Git } from '../../dist/git/git.js';
import { NodeProcessRunner } from '../../dist/exec/process.js';
import { cleanupAll, git, hermeticEnv, makeProject, tempDir } from '../support/git-fixtures.mjs';

after(cleanupAll);
const newGit = () => new Git(new NodeProcessRunner(), hermeticEnv());

test('the branch checked out is read, in a clone and in a linked worktree; a detached HEAD has none', async () => {
  const project = makeProject({ 'nyl.yaml': '', 'sub/x': '' });
  const gitApi = newGit();
  assert.equal((await openCheckout(gitApi, project)).currentBranch, 'refs/heads/main');
  git(project, 'switch', '-q', '-c', 'feature/x');
  const sub = await openCheckout(gitApi, path.join(project, 'sub'));
  assert.equal(sub.currentBranch, 'refs/heads/feature/x');
  assert.equal(sub.workTree, project);

  const linked = path.join(tempDir(), 'linked');
  git(project, 'worktree', 'add', '-q', '-b', 'other', linked);
  assert.ok(fs.statSync(path.join(linked, '.git')).isFile(), 'a linked worktree has a .git file');
  assert.equal((await openCheckout(gitApi, linked)).currentBranch, 'refs/heads/other');

  git(project, 'switch', '-q', '--detach');
  assert.equal((await openCheckout(gitApi, project)).currentBranch, undefined);
});
