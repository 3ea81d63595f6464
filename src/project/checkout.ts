/**
 * Finds the project (walking up from [PATH] to nyl.yaml) and the Git checkout around it, and
 * reads the few git config facts every command needs in one git process.
 */
import { existsSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fail } from '../errors/diagnostic';
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
}

export function findProjectRoot(start: string): string {
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

export async function openCheckout(git: Git, start: string): Promise<Checkout> {
  const projectRoot = findProjectRoot(start);
  const workTree = findWorkTree(projectRoot);
  if (!workTree) {
    fail('NYL-PROJECT-MISSING', `${projectRoot} holds nyl.yaml but is not inside a Git checkout`, {
      fix: 'run `git init` and commit the project: Nyl renders source from commits',
    });
  }
  const result = await git.run(projectRoot, [
    'config',
    '--get-regexp',
    '^(user\\.name|user\\.email|remote\\.origin\\.url)$',
  ]);
  const checkout: Checkout = {
    projectRoot,
    workTree,
    projectPrefix: relative(workTree, projectRoot).split('\\').join('/'),
  };
  for (const line of result.stdout.toString().split('\n')) {
    const sp = line.indexOf(' ');
    if (sp < 0) continue;
    const key = line.slice(0, sp);
    const value = line.slice(sp + 1);
    if (key === 'user.name') checkout.userName = value;
    else if (key === 'user.email') checkout.userEmail = value;
    else if (key === 'remote.origin.url') checkout.originURL = value;
  }
  return checkout;
}
