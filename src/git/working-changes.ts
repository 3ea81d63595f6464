/**
 * Which working files differ from HEAD, limited to the paths a rendering reads: one `git status`
 * for the whole check. Staged and unstaged edits count alike (neither is in the commit), and so do
 * untracked files that are not ignored (`git add -A` would take them); renames are reported as a
 * deletion and an addition, since a rendering reads paths. Nothing is written: not even the
 * index's refreshed stat cache (Git.run sets GIT_OPTIONAL_LOCKS=0).
 */
import type { Git } from './git';

export interface WorkingChange {
  /** Relative to the work tree root, with forward slashes. */
  path: string;
  change: 'changed' | 'added' | 'deleted';
}

/** A porcelain v1 status code (XY: index, work tree) as a change to the commit. */
function changeOf(code: string): WorkingChange['change'] {
  if (code === '??' || code[0] === 'A') return 'added';
  return code.includes('D') ? 'deleted' : 'changed';
}

/**
 * The working files under these paths (relative to the work tree root, taken literally; '.' the
 * whole tree) that differ from HEAD; none without a path. Submodules are left out: their working
 * state is another repository's.
 */
export async function workingChanges(git: Git, workTree: string, paths: readonly string[]): Promise<WorkingChange[]> {
  if (paths.length === 0) return [];
  const args = ['--literal-pathspecs', 'status', '--porcelain=v1', '-z', '--untracked-files=all', '--no-renames', '--ignore-submodules=all', '--', ...paths];
  const out = await git.text(workTree, args);
  const changes: WorkingChange[] = [];
  for (const entry of out.split('\0')) {
    if (entry.length > 3) changes.push({ path: entry.slice(3), change: changeOf(entry.slice(0, 2)) });
  }
  return changes;
}
