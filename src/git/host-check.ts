/**
 * `nyl doctor host`: the five pushes that show whether a Git host can hold orchestration state
 * (a state branch and a lease ref moved together by atomic pushes, each under its own lease, a
 * stale lease rejecting the whole push; the lease ref listed by pattern and deleted), run against
 * a scratch namespace of the repository.
 *
 * Invariants:
 * - Only refs under the scratch namespace are pushed to, listed for cleanup or deleted: the
 *   branch `refs/heads/nyl-doctor/<run>/desired` and the lease `<prefix>nyl-doctor/<run>/lease`.
 * - Every run ends by deleting what it created, whatever failed; refs of the namespace left by a
 *   run that was killed midway are deleted by the next run before it starts (leftovers).
 * - The commits pushed come from a scratch repository of the run's own: empty trees, so the
 *   host receives a few hundred bytes.
 */
import type { Git } from './git';
import { parseRefList } from './refs';

/** The scratch namespace under refs/heads/ and under a coordination prefix. */
const DOCTOR_NAMESPACE = 'nyl-doctor/';

interface HostStep {
  step: 1 | 2 | 3 | 4 | 5;
  what: string;
  verdict: 'passed' | 'failed' | 'not-run';
  detail: string;
  /**
   * Set on the failed step whose push the host refused for want of atomic pushes (the verdict
   * NYL-HOST-INCOMPATIBLE names them). Internal: the report's steps leave it out.
   */
  atomicUnsupported?: true;
}

/** What one step found: whether it passed, what it saw, and whether atomic pushes were missing. */
interface StepResult {
  ok: boolean;
  detail: string;
  atomicUnsupported?: true;
}

/** The commits of a check: s2 and l2 descend from s1 and l1. */
interface CheckCommits {
  s1: string;
  l1: string;
  s2: string;
  l2: string;
}

const STEPS: Record<HostStep['step'], string> = {
  1: 'create both refs in one atomic push',
  2: 'a stale lease rejects the whole push, both refs unchanged',
  3: 'matching leases move both refs',
  4: 'the lease ref is listed by pattern',
  5: 'both refs are deleted together',
};

const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';

/** A scratch repository's four commits (empty trees, fixed identity). */
export async function checkCommits(git: Git, repo: string, run: string): Promise<CheckCommits> {
  const env = { GIT_AUTHOR_NAME: 'nyl doctor', GIT_AUTHOR_EMAIL: 'nyl@localhost', GIT_COMMITTER_NAME: 'nyl doctor', GIT_COMMITTER_EMAIL: 'nyl@localhost' };
  const commit = async (message: string, parent?: string): Promise<string> =>
    (await git.text(repo, ['commit-tree', EMPTY_TREE, ...(parent ? ['-p', parent] : []), '-m', message], { env })).trim();
  const s1 = await commit(`nyl doctor ${run}: state 1`);
  const l1 = await commit(`nyl doctor ${run}: lease 1`);
  return { s1, l1, s2: await commit(`nyl doctor ${run}: state 2`, s1), l2: await commit(`nyl doctor ${run}: lease 2`, l1) };
}

/** The refs of one check: a branch, and a lease ref under the prefix; both in the namespace. */
function checkRefs(prefix: string, run: string): { branch: string; lease: string } {
  return { branch: `refs/heads/${DOCTOR_NAMESPACE}${run}/desired`, lease: `${prefix}${DOCTOR_NAMESPACE}${run}/lease` };
}

/** The remote's refs under the given namespaces: name -> oid. */
async function listRefs(git: Git, repo: string, url: string, patterns: string[]): Promise<Map<string, string> | string> {
  const r = await git.run(repo, ['ls-remote', url, ...patterns]);
  return r.code !== 0 ? git.failureOf(r) : parseRefList(r.stdout.toString());
}

/**
 * What a push's failure says: atomic pushes named when the host does not support them, else what
 * the host said (its hook's `remote:` lines, the rejection reasons of `--porcelain`), else git's
 * last error line.
 */
function pushFailure(git: Git, result: Parameters<Git['failureOf']>[0]): StepResult & { ok: false } {
  const stderr = result.stderr.toString();
  if (/does not support --atomic/i.test(stderr))
    return { ok: false, detail: 'the host does not support atomic pushes (git push --atomic): it cannot hold orchestration state', atomicUnsupported: true };
  const remote = stderr
    .split('\n')
    .map((l) => /^remote: (.*\S)/.exec(l)?.[1])
    .filter((l): l is string => l !== undefined);
  if (remote.length > 0) return { ok: false, detail: `the host refused the push: ${remote.join('; ')}` };
  const rejected = result.stdout
    .toString()
    .split('\n')
    .filter((l) => l.startsWith('!'))
    .map((l) => l.split('\t').slice(1).join(' '));
  return { ok: false, detail: rejected.length > 0 ? `rejected: ${rejected.join('; ')}` : git.failureOf(result) };
}

type Push = (leases: [string, string][], updates: string[]) => Promise<StepResult>;

function pusher(git: Git, repo: string, url: string): Push {
  return async (leases, updates) => {
    const r = await git.run(repo, ['push', '--porcelain', '--atomic', ...leases.map(([ref, oid]) => `--force-with-lease=${ref}:${oid}`), url, ...updates]);
    return r.code === 0 ? { ok: true, detail: 'accepted' } : pushFailure(git, r);
  };
}

/** The refs of the check as the host lists them; a listing that fails is the step's failure. */
async function both(git: Git, repo: string, url: string, refs: { branch: string; lease: string }): Promise<[string | undefined, string | undefined] | string> {
  const listed = await listRefs(git, repo, url, [refs.branch, refs.lease]);
  return typeof listed === 'string' ? listed : [listed.get(refs.branch), listed.get(refs.lease)];
}

/** Runs the five steps for one prefix; a step that fails leaves the later ones not run. */
export async function checkPrefix(git: Git, repo: string, url: string, prefix: string, run: string, c: CheckCommits): Promise<HostStep[]> {
  const refs = checkRefs(prefix, run);
  const push = pusher(git, repo, url);
  const { branch: B, lease: L } = refs;
  const expect = async (want: [string | undefined, string | undefined], what: string): Promise<StepResult> => {
    const got = await both(git, repo, url, refs);
    if (typeof got === 'string') return { ok: false, detail: got };
    return got[0] === want[0] && got[1] === want[1]
      ? { ok: true, detail: what }
      : { ok: false, detail: `the host lists ${B} at ${got[0] ?? 'nothing'} and ${L} at ${got[1] ?? 'nothing'}` };
  };
  const steps: (() => Promise<StepResult>)[] = [
    async () =>
      chain(
        await push(
          [
            [B, ''],
            [L, ''],
          ],
          [`${c.s1}:${B}`, `${c.l1}:${L}`],
        ),
        () => expect([c.s1, c.l1], 'both refs created'),
      ),
    async () => {
      const stale = await push(
        [
          [B, c.s1],
          [L, c.s1],
        ],
        [`${c.s2}:${B}`, `${c.l2}:${L}`],
      );
      if (stale.ok) return { ok: false, detail: 'the host accepted a push whose lease on the lease ref was stale' };
      return expect([c.s1, c.l1], 'rejected, both refs unchanged');
    },
    async () =>
      chain(
        await push(
          [
            [B, c.s1],
            [L, c.l1],
          ],
          [`${c.s2}:${B}`, `${c.l2}:${L}`],
        ),
        () => expect([c.s2, c.l2], 'both refs moved'),
      ),
    async () => {
      const listed = await listRefs(git, repo, url, [`${prefix}${DOCTOR_NAMESPACE}${run}/*`]);
      if (typeof listed === 'string') return { ok: false, detail: listed };
      return listed.get(L) === c.l2
        ? { ok: true, detail: `listed by ${prefix}${DOCTOR_NAMESPACE}${run}/*` }
        : { ok: false, detail: `the pattern does not list ${L}` };
    },
    async () =>
      chain(
        await push(
          [
            [L, c.l2],
            [B, c.s2],
          ],
          [`:${L}`, `:${B}`],
        ),
        () => expect([undefined, undefined], 'both refs deleted'),
      ),
  ];
  return runSteps(steps);
}

async function chain(first: StepResult, then: () => Promise<StepResult>): Promise<StepResult> {
  return first.ok ? then() : first;
}

async function runSteps(steps: (() => Promise<StepResult>)[]): Promise<HostStep[]> {
  const out: HostStep[] = [];
  let failed = false;
  for (const [i, run] of steps.entries()) {
    const step = (i + 1) as HostStep['step'];
    if (failed) {
      out.push({ step, what: STEPS[step], verdict: 'not-run', detail: 'an earlier step failed' });
      continue;
    }
    const r = await run();
    out.push({ step, what: STEPS[step], verdict: r.ok ? 'passed' : 'failed', detail: r.detail, ...(r.atomicUnsupported ? { atomicUnsupported: true } : {}) });
    failed = !r.ok;
  }
  return out;
}

/**
 * Deletes every ref of the scratch namespace the host lists under these prefixes (a killed
 * run's leftovers, or this run's after a failed step), one ref per push so that a host without
 * atomic pushes is cleaned too. Returns the refs it could not delete.
 */
export async function cleanNamespace(git: Git, repo: string, url: string, prefixes: string[]): Promise<string[]> {
  const namespaces = [...new Set(['refs/heads/', ...prefixes])].map((p) => `${p}${DOCTOR_NAMESPACE}`);
  const listed = await listRefs(
    git,
    repo,
    url,
    namespaces.map((n) => `${n}*`),
  );
  if (typeof listed === 'string') return [];
  const ours = [...listed.keys()].filter((ref) => namespaces.some((n) => ref.startsWith(n)));
  const left: string[] = [];
  for (const ref of ours) {
    const r = await git.run(repo, ['push', '--porcelain', url, `:${ref}`]);
    if (r.code !== 0) left.push(ref);
  }
  return left;
}
