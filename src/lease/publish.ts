/**
 * Publishes an operation's transition: one commit per state ref it changes, pushed in one atomic
 * push with the lease's compare-and-swap (and, for runs, the deletion of consumed run refs).
 *
 * A rejected push is analysed, never retried blindly: a lease that moved means the holder lost
 * it (NYL-LEASE-LOST, nothing written); a state ref that moved only outside this environment's
 * `path` is rebased past (environments sharing a ref); any other change is NYL-STATE-CONFLICT.
 */
import { diagnostic, fail, NylError } from '../errors/diagnostic';
import { type CommitSpec, type Identity, type FileContent, writeCommits } from '../git/object-writer';
import type { RefUpdate } from '../git/refs';
import { applyUpdates, type LeaseHandle } from './lease';
import type { Runtime } from '../util/runtime';
import { statePathOf } from '../state/location';
import type { RefSnapshot, StateStore } from '../state/store';

export interface RefTransition {
  ref: string;
  /** The commit the transition builds on (undefined: the ref does not exist yet). */
  base: string | undefined;
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
    if (t.base) spec.parent = t.base;
    return spec;
  });
}

/** True when commit `to` changed nothing under the environment's directory compared to `from`. */
async function onlyOthersChanged(store: StateStore, from: string, to: string): Promise<boolean> {
  if (!store.loc.statePath) return false;
  const [a, b] = await store.reader.readMany([`${from}:${store.loc.statePath}`, `${to}:${store.loc.statePath}`]);
  return a?.oid === b?.oid;
}

export async function publishTransition(
  rt: Runtime,
  store: StateStore,
  lease: LeaseHandle,
  transitions: RefTransition[],
  author: Identity,
  /** extraUpdates is evaluated at push time, inside the lease's exclusive section (a renewal may move a run ref). */
  options: { extraUpdates?: RefUpdate[] | (() => RefUpdate[]); release: boolean; known?: RefSnapshot },
): Promise<PublishResult> {
  const env = store.loc.environment;
  let current = transitions;
  let known: RefSnapshot | undefined = options.known;
  for (let attempt = 0; attempt < 20; attempt++) {
    const specs = commitSpecs(store, current, author, rt.clock.now());
    const oids = await writeCommits(rt.git, store.workDir, specs);
    await rt.faults.reach('before-transition-push');
    const outcome = await lease.exclusive(async (leaseOid) => {
      if (lease.lost) return { ok: false as const, lost: true };
      const updates: RefUpdate[] = current.map((t, i) => ({ ref: t.ref, expect: t.base ?? null, to: oids[i]! }));
      const extra = typeof options.extraUpdates === 'function' ? options.extraUpdates() : (options.extraUpdates ?? []);
      updates.push(...extra);
      updates.push(options.release ? lease.releaseUpdate(leaseOid) : { ref: lease.ref, expect: leaseOid, to: leaseOid });
      const result = await store.write(updates);
      if (result.ok) return { ok: true as const, updates };
      if (result.kind === 'unreachable') {
        fail('NYL-STATE-UNAVAILABLE', `cannot push the transition of ${env}: ${result.message}`, { env });
      }
      return { ok: false as const, lost: false };
    });
    if (outcome.ok) {
      if (options.release) lease.markReleased();
      await rt.faults.reach('after-transition-push');
      const refs = known ? applyUpdates(known, outcome.updates) : await store.snapshot();
      return { commits: new Map(current.map((t, i) => [t.ref, oids[i]!])), refs };
    }
    const refs = await store.snapshot();
    known = refs;
    if (outcome.lost || refs.get(lease.ref) !== lease.oid) {
      lease.lost = true;
      throw new NylError(
        diagnostic('NYL-LEASE-LOST', 'error', `the lease of ${env} was taken over or deleted; this operation pushed nothing to state`, { env }),
      );
    }
    if (current.every((t) => refs.get(t.ref) === t.base)) {
      // Neither the lease nor a state ref moved: a coordination ref (run, evidence) did. The caller
      // ends the lease (released, or a broken lease put back), as on every other refusal.
      fail('NYL-STATE-CONFLICT', `a run or evidence ref of ${env} changed while the operation ran (a late checkpoint of a run that lost its lease?)`, { env });
    }
    const next: RefTransition[] = [];
    for (const t of current) {
      const now = refs.get(t.ref);
      if (now === t.base) {
        next.push(t);
        continue;
      }
      if (!t.base || !now || !(await onlyOthersChanged(store, t.base, now))) {
        fail('NYL-STATE-CONFLICT', `${t.ref} changed outside Nyl while the operation on ${env} ran`, { env, data: { ref: t.ref, expected: t.base ?? null, found: now ?? null } });
      }
      next.push({ ...t, base: now });
    }
    current = next;
  }
  fail('NYL-STATE-CONFLICT', `the state refs of ${env} kept changing`, { env });
}
