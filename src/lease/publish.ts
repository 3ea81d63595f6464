/**
 * Publishes an operation's transition: one commit per state ref it changes, pushed in one atomic
 * push with the lease's compare-and-swap (and, for runs, the deletion of consumed run refs).
 *
 * A rejected push is analysed, never retried blindly: a lease that moved means the holder lost
 * it (NYL-LEASE-LOST, nothing written); a state ref that moved only outside this environment's
 * `path` is rebased past (environments sharing a ref); any other change is NYL-STATE-CONFLICT.
 */
import { diagnostic, fail, NylError } from '../errors/diagnostic';
import type { CommitSpec, FileContent, Identity } from '../git/object-writer';
import type { RefUpdate, RefWriteResult } from '../git/refs';
import { statePathOf } from '../state/location';
import { applyUpdates, type RefSnapshot, type StateStore } from '../state/store';
import type { LeaseHandle, LeaseRuntime } from './lease';

export interface RefTransition {
  ref: string;
  /** The commit the transition builds on (undefined: the ref does not exist yet). */
  base: string | undefined;
  /**
   * The new commit's parent when it is not base: a fresh state init continues the clone's known
   * branch of a ref the state repository lacks, so that branch fast-forwards instead of diverging.
   */
  parent?: string;
  /** Further parents (a merge): a state move's new location continues the old one's history too. */
  merges?: string[];
  /** The tree starts empty instead of from the parent's (a move's first commit at a new ref). */
  clearTree?: boolean;
  /** Changes relative to the environment's directory: file -> content, null deletes. */
  changes: Map<string, FileContent | null>;
  message: string;
}

export interface PublishResult {
  /** New commit per state ref written. */
  commits: Map<string, string>;
  refs: RefSnapshot;
}

function commitSpecs(store: StateStore, transitions: RefTransition[], author: Identity, timeMs: number): CommitSpec[] {
  return transitions.map((t) => {
    const changes = new Map<string, FileContent | null>();
    for (const [file, content] of t.changes) changes.set(statePathOf(store.loc, file), content);
    const spec: CommitSpec = { changes, message: t.message, author, timeMs };
    const parent = t.parent ?? t.base;
    if (parent) spec.parent = parent;
    if (t.merges?.length) spec.merges = t.merges;
    if (t.clearTree) spec.clearTree = true;
    return spec;
  });
}

/** True when commit `to` changed nothing under the environment's directory compared to `from`. */
async function onlyOthersChanged(store: StateStore, from: string, to: string): Promise<boolean> {
  if (!store.loc.statePath) return false;
  const [a, b] = await store.reader.readMany([`${from}:${store.loc.statePath}`, `${to}:${store.loc.statePath}`]);
  return a?.oid === b?.oid;
}

/**
 * Publishes transitions under the lease: writes the commits, pushes them with the lease (released
 * or fenced) and `extraUpdates` in one atomic push, and on a rejection rebases past other
 * environments' commits or reports what moved.
 */
export async function publishTransition(
  rt: LeaseRuntime,
  store: StateStore,
  lease: LeaseHandle,
  transitions: RefTransition[],
  author: Identity,
  /** extraUpdates is evaluated at push time, inside the lease's exclusive section (a renewal may move a run ref). */
  known: RefSnapshot,
  extraUpdates: () => RefUpdate[] = () => [],
): Promise<PublishResult> {
  let current = transitions;
  for (let attempt = 0; attempt < 20; attempt++) {
    const oids = await store.writeCommits(commitSpecs(store, current, author, rt.clock.now()));
    await rt.faults.reach('before-transition-push');
    const written = await lease.write('release', () => ({
      updates: [...current.map((t, i) => ({ ref: t.ref, expect: t.base ?? null, to: oids[i]! })), ...extraUpdates()],
    }));
    if (written.ok) {
      await rt.faults.reach('after-transition-push');
      const refs = applyUpdates(known, written.updates);
      return { commits: new Map(current.map((t, i) => [t.ref, oids[i]!])), refs };
    }
    current = await rebaseAfterRejection(store, lease, current, written.result, written.refs);
  }
  fail('NYL-STATE-CONFLICT', `the state refs of ${store.loc.environment} kept changing`, { env: store.loc.environment });
}

/** After a rejected publish: the transitions to try again, or the refusal that explains it. */
async function rebaseAfterRejection(
  store: StateStore,
  lease: LeaseHandle,
  current: RefTransition[],
  result: RefWriteResult,
  seen: RefSnapshot | undefined,
): Promise<RefTransition[]> {
  const env = store.loc.environment;
  if (!result.ok && result.kind === 'unreachable') fail('NYL-STATE-UNAVAILABLE', `cannot push the transition of ${env}: ${result.message}`, { env });
  if (lease.lost) {
    throw new NylError(diagnostic('NYL-LEASE-LOST', 'error', `the lease of ${env} was taken over or deleted; this operation pushed nothing to state`, { env }));
  }
  const refs = seen ?? (await store.snapshot());
  if (current.every((t) => refs.get(t.ref) === t.base)) {
    // Neither the lease nor a state ref moved: a coordination ref (run, evidence) did. The caller
    // ends the lease (released, or a broken lease put back), as on every other refusal.
    fail('NYL-STATE-CONFLICT', `a run or evidence ref of ${env} changed while the operation ran (a late checkpoint of a run that lost its lease?)`, { env });
  }
  const next: RefTransition[] = [];
  for (const t of current) {
    const now = refs.get(t.ref);
    if (now !== t.base && (!t.base || !now || !(await onlyOthersChanged(store, t.base, now)))) {
      fail('NYL-STATE-CONFLICT', `${t.ref} changed outside Nyl while the operation on ${env} ran`, {
        env,
        data: { ref: t.ref, expected: t.base ?? null, found: now ?? null },
      });
    }
    next.push({ ...t, base: now });
  }
  return next;
}
