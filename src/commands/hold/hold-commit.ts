/**
 * The hold commit: takes the lease as `hold`, applies holds to the desired documents and writes one
 * desired commit (deleting the signal refs it applies, when a run's delivered holds are applied
 * after it released its lease). Shared by `nyl hold` and the run's late-signal step.
 */
import type { RefUpdate } from '../../git/refs';
import { withLease } from '../../lease/transaction';
import { type AppliedHolds, applyHolds, type HoldRequest } from '../../run/apply-holds';
import { buildTransitions } from '../../run/transition-plan';
import { readEnvironmentState } from '../../state/read';
import type { Runtime } from '../../util/runtime';
import { leaseOptionsOf, type OpenedEnvironment, trailersOf } from '../shared/context';
import { requireActive, type StateRead, stateUnderLease } from '../state/state-checks';

interface CommitHoldsResult {
  applied: AppliedHolds;
  desired?: string;
  /** The clone's known branches the sync after the hold commit left diverged; absent when it wrote nothing. */
  diverged?: string[];
}

interface CommitHoldsOptions {
  operation: string;
  requestedBy: string;
  reason?: string;
  waitMs?: number;
  signalUpdates?: RefUpdate[];
  /** The refs and state the caller just read: the lease decides on them, and the state is not read again unless it moved. */
  first?: StateRead;
}

export async function commitHolds(rt: Runtime, opened: OpenedEnvironment, holds: HoldRequest[], options: CommitHoldsOptions): Promise<CommitHoldsResult> {
  const { store, env, loc } = opened;
  const first = options.first;
  const lease = leaseOptionsOf(rt, opened, options.operation, { waitMs: options.waitMs, ...(first ? { initial: first.refs } : {}) });
  return withLease(rt, store, lease, async (tx) => {
    const refs = tx.snapshot;
    const view = first ? await stateUnderLease(opened, first, refs) : await readEnvironmentState(store.reader, loc, refs, store.cache);
    const generation = await requireActive(opened, { refs, view });
    const applied = applyHolds(env.name, view.desiredUnits, view.observedUnits, holds, generation);
    const signalUpdates = options.signalUpdates ?? [];
    if (applied.held.length === 0 && signalUpdates.length === 0) {
      await tx.end('nothing-to-write');
      return { applied, ...(view.desiredOid ? { desired: view.desiredOid } : {}) };
    }
    const units = Object.fromEntries(applied.held.map((u) => [u, { action: 'hold' }]));
    const before = { desired: view.desiredUnits, observed: view.observedUnits };
    const after = { desired: applied.desired, observed: view.observedUnits };
    const trailers = trailersOf(opened, options.reason, options.requestedBy);
    const transitions = buildTransitions(loc, refs, env.name, before, after, { operation: 'hold', units, held: applied.held }, trailers, applied.held);
    const published = await tx.publish(transitions, () => signalUpdates);
    const desired = published.refs.get(loc.desiredRef);
    const diverged = await opened.local.syncKnownBranches(published.refs);
    return { applied, ...(desired ? { desired } : {}), diverged };
  });
}
