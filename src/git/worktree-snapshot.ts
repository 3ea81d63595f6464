/**
 * `--worktree`: snapshots the Git-visible working files of a checkout (tracked files as they are
 * in the work tree, deletions of tracked files, untracked files that are not ignored: what
 * `git add -A` would stage) into a commit with no parent.
 *
 * Invariant: the user's index, HEAD, refs and work tree are never touched. The files are staged
 * into a temporary index file (GIT_INDEX_FILE), started as a copy of the user's index so that its
 * stat cache spares rehashing unchanged files and its skip-worktree entries (a sparse checkout)
 * stay as they are instead of reading as deletions. Only objects are written to the checkout's
 * object database, no ref: the snapshot is kept alive by the state history it becomes part of.
 *
 * The commit is deterministic for the same files and HEAD (a fixed identity, HEAD's commit time),
 * so that a `nyl plan --worktree` and the `nyl reconcile --worktree` after it name the same source
 * commit, and a repeated run with nothing to do is answered from the no-op cache.
 */
import { copyFileSync, existsSync, mkdtempSync, rmSync, statSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { Git } from './git';

/** Who a snapshot commit is by: not a person (the transition commit names who asked). */
const SNAPSHOT_IDENTITY = { name: 'nyl worktree snapshot', email: 'nyl@localhost' };

/** What a snapshot takes of the commit HEAD names: its id, tree and committer time. */
interface HeadCommit {
  oid: string;
  tree: string;
  timeSeconds: number;
}

/** The tree and committer time of a raw commit object (as `cat-file --batch` gives it). */
export function headCommitOf(oid: string, content: Buffer): HeadCommit {
  const text = content.toString('utf8');
  const header = text.slice(0, text.indexOf('\n\n') < 0 ? text.length : text.indexOf('\n\n'));
  const tree = /^tree ([0-9a-f]{40,64})$/m.exec(header)?.[1];
  const time = /^committer .* (\d+) [+-]\d{4}$/m.exec(header)?.[1];
  if (!tree || !time) throw new Error(`${oid} is not a readable commit`);
  return { oid, tree, timeSeconds: Number(time) };
}

interface WorktreeSnapshot {
  /** The parentless snapshot commit. */
  commit: string;
  /** Its tree. */
  tree: string;
  /** The tree of HEAD: equal to `tree` when the working files match HEAD. */
  headTree: string;
}

/** The absolute path of the checkout's index file (a linked worktree has its own). */
async function indexPath(git: Git, workTree: string): Promise<string> {
  const path = (await git.text(workTree, ['rev-parse', '--git-path', 'index'])).trim();
  return isAbsolute(path) ? path : resolve(workTree, path);
}

/**
 * Copies the user's index for its stat cache, dated a second before the original. Git trusts an
 * entry whose file has the same size and times only when the entry is older than the index file
 * ("racy git"): a file changed in the second its index was written must be hashed again. A copy
 * dated now would make every entry look older than its index, and such an edit (same size, same
 * second) would be left out of the snapshot. A second earlier only makes more entries racy:
 * hashed again, never trusted wrongly.
 */
function copyIndex(from: string, to: string): void {
  copyFileSync(from, to);
  const { atime, mtimeMs } = statSync(from);
  utimesSync(to, atime, new Date(mtimeMs - 1000));
}

/**
 * Writes the snapshot commit of workTree's Git-visible files, dated at HEAD's committer time; its
 * message names HEAD for people (it is not a parent: the snapshot stands alone).
 */
export async function snapshotWorktree(git: Git, workTree: string, head: HeadCommit): Promise<WorktreeSnapshot> {
  const scratch = mkdtempSync(join(tmpdir(), 'nyl-worktree-'));
  try {
    const index = join(scratch, 'index');
    const userIndex = await indexPath(git, workTree);
    if (existsSync(userIndex)) copyIndex(userIndex, index);
    const env = { GIT_INDEX_FILE: index };
    if (!existsSync(index)) await git.text(workTree, ['read-tree', head.oid], { env });
    // `:/` is the whole work tree, whatever the directory git runs in.
    await git.text(workTree, ['add', '--all', '--', ':/'], { env });
    const tree = (await git.text(workTree, ['write-tree'], { env })).trim();
    const date = `${head.timeSeconds} +0000`;
    const who = SNAPSHOT_IDENTITY;
    const commitEnv = {
      GIT_AUTHOR_NAME: who.name,
      GIT_AUTHOR_EMAIL: who.email,
      GIT_AUTHOR_DATE: date,
      GIT_COMMITTER_NAME: who.name,
      GIT_COMMITTER_EMAIL: who.email,
      GIT_COMMITTER_DATE: date,
    };
    const message = `nyl: worktree snapshot\n\nNyl-Worktree-Of: ${head.oid}\n`;
    const commit = (await git.text(workTree, ['commit-tree', tree], { env: commitEnv, input: message })).trim();
    return { commit, tree, headTree: head.tree };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
