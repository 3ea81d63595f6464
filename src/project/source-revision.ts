/**
 * The commit units render at: `--source`, else the Environment's `source.ref`, else HEAD. A
 * revision must name a commit of this clone that a branch, tag or remote-tracking branch reaches
 * (or HEAD): the same checks for both ways of naming it.
 */
import { fail } from '../errors/diagnostic';
import type { BatchReader } from '../git/batch-reader';
import type { Git } from '../git/git';
import { isAncestor, readRefs, refContaining } from '../git/refs';
import type { Checkout } from './checkout';

/**
 * Who asked for a source revision, for messages and fixes: --source, or the Environment's
 * source.ref. `projectDir`: the project's directory as the user reaches it from where nyl runs
 * (absent when that is here), so that a fix naming git runs there.
 */
interface SourceAsker {
  what: string;
  env?: string;
  override?: boolean;
  projectDir?: string;
}

export async function resolveCommit(reader: BatchReader, rev: string, asker: SourceAsker): Promise<string> {
  const { what, ...params } = asker;
  if (!/^[^\s\0]+$/.test(rev) || rev.startsWith('-')) {
    fail('NYL-SOURCE-UNREACHABLE', `${what} ${JSON.stringify(rev)} is not a revision`, { rev, ...params, data: { rev } });
  }
  const obj = await reader.read(`${rev}^{commit}`);
  // HEAD names no commit only in a repository without one: the first commit is what is missing.
  if (!obj && rev === 'HEAD')
    fail('NYL-SOURCE-UNREACHABLE', 'the checkout has no commit yet: Nyl renders units from a commit', { ...params, firstCommit: true });
  if (!obj || obj.type !== 'commit') {
    fail('NYL-SOURCE-UNREACHABLE', `${what} ${rev} does not name a commit of this checkout`, { rev, ...params, data: { rev } });
  }
  return obj.oid;
}

/** Branches, tags and remote-tracking branches: what this clone shares with, or got from, others. */
const SHARED_REFS = ['refs/heads/', 'refs/tags/', 'refs/remotes/'];

/**
 * Whether rev is itself the name of a branch, tag or remote-tracking branch (`main`,
 * `origin/main`, `v1.2`, `refs/tags/v1.2`): the commit it names is that ref's tip, reached by
 * definition, so the costlier search of every ref's history is not needed.
 */
async function namesSharedRef(git: Git, workTree: string, rev: string, commit: string): Promise<boolean> {
  const named = rev.startsWith('refs/') ? [rev] : SHARED_REFS.map((prefix) => `${prefix}${rev}`);
  const candidates = named.filter((ref) => SHARED_REFS.some((prefix) => ref.startsWith(prefix)));
  if (candidates.length === 0) return false; // for-each-ref without a pattern would list every ref
  const found = await readRefs(git, workTree, candidates);
  // The tip must be the commit itself: git may have resolved rev to another ref of that name (an
  // annotated tag's ref holds the tag object: it takes the slow path).
  return candidates.some((ref) => found.get(ref) === commit);
}

/**
 * Refuses a source commit that no branch or tag of the clone reaches, whether --source or
 * source.ref names it: such a commit was never shared for review (a fork's commit fetched by id,
 * another clone's unpushed work), and state would record it as what the environment runs.
 * HEAD counts too: it is what a plain run renders anyway.
 */
async function checkReachable(git: Git, workTree: string, rev: string, commit: string, head: string, asker: SourceAsker): Promise<void> {
  if (commit === head || (await namesSharedRef(git, workTree, rev, commit))) return;
  if ((await refContaining(git, workTree, commit, SHARED_REFS)) || (await isAncestor(git, workTree, commit, head))) return;
  const { what, ...params } = asker;
  const named = rev === commit ? rev : `${rev} (commit ${commit})`;
  fail('NYL-SOURCE-UNREACHABLE', `${what} ${named} is not reached by any branch or tag of this clone`, { rev, commit, ...params, data: { rev, commit } });
}

/** The commit units render at: --source, else the Environment's source.ref, else HEAD. */
export async function resolveSource(git: Git, checkout: Checkout, reader: BatchReader, rev: string, head: string, asker: SourceAsker): Promise<string> {
  if (rev === 'HEAD') return head;
  const commit = await resolveCommit(reader, rev, asker);
  await checkReachable(git, checkout.workTree, rev, commit, head, asker);
  return commit;
}
