/**
 * Finds the project (walking up from [PATH] to nyl.yaml) and the Git checkout around it, and
 * reads the few git config facts every command needs in one git process, and the branch checked
 * out from the HEAD file (no process), which a state ref must never be.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fail } from '../errors/diagnostic';
import { readCheckoutConfig, symbolicHeadRef } from '../git/checkout-config';
import type { Git } from '../git/git';

export interface Checkout {
  /** Directory holding nyl.yaml. */
  projectRoot: string;
  /** The checkout's work tree root. */
  workTree: string;
  /** projectRoot relative to workTree, '' at the root, always with forward slashes. */
  projectPrefix: string;
  originURL?: string;
  userName?: string;
  userEmail?: string;
  /** The branch checked out, as a full ref name; absent when HEAD is detached. */
  currentBranch?: string;
}

function findProjectRoot(start: string): string {
  let dir = resolve(start);
  if (existsSync(dir) && !statSync(dir).isDirectory()) dir = dirname(dir);
  for (;;) {
    if (existsSync(join(dir, 'nyl.yaml'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) {
      fail('NYL-PROJECT-MISSING', `no nyl.yaml in ${resolve(start)} or any parent directory`);
    }
    dir = parent;
  }
}

function findWorkTree(projectRoot: string): string | undefined {
  let dir = projectRoot;
  for (;;) {
    if (existsSync(join(dir, '.git'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) return undefined;
    dir = parent;
  }
}

/** The git dir of a work tree: `.git`, or where a linked worktree's `.git` file points. */
function gitDirOf(workTree: string): string | undefined {
  const dotGit = join(workTree, '.git');
  if (statSync(dotGit).isDirectory()) return dotGit;
  const m = /^gitdir: *(.+?)\s*$/m.exec(readFileSync(dotGit, 'utf8'));
  return m ? resolve(workTree, m[1]!) : undefined;
}

/**
 * The branch HEAD names, read from the HEAD file: a git process per command costs more than the
 * file read. A reftable repository keeps a placeholder there, so Git is asked instead.
 */
async function currentBranchOf(git: Git, workTree: string): Promise<string | undefined> {
  let head: string | undefined;
  try {
    const gitDir = gitDirOf(workTree);
    head = gitDir === undefined ? undefined : readFileSync(join(gitDir, 'HEAD'), 'utf8');
  } catch {
    head = undefined;
  }
  const m = head === undefined ? undefined : /^ref: *(refs\/\S+)\s*$/.exec(head);
  if (m && m[1] !== 'refs/heads/.invalid') return m[1];
  if (head !== undefined && !m) return undefined; // a detached HEAD holds a commit id
  return symbolicHeadRef(git, workTree);
}

export async function openCheckout(git: Git, start: string): Promise<Checkout> {
  const projectRoot = findProjectRoot(start);
  const workTree = findWorkTree(projectRoot);
  if (!workTree) {
    fail('NYL-PROJECT-MISSING', `${projectRoot} holds nyl.yaml but is not inside a Git checkout`, {
      fix: 'run `git init` and commit the project: Nyl renders source from commits',
    });
  }
  const checkout: Checkout = {
    projectRoot,
    workTree,
    projectPrefix: relative(workTree, projectRoot).split('\\').join('/'),
    ...(await readCheckoutConfig(git, projectRoot)),
  };
  const branch = await currentBranchOf(git, workTree);
  if (branch !== undefined) checkout.currentBranch = branch;
  return checkout;
}
