/**
 * The hold commit: takes the lease as `hold`, applies holds to the desired documents and writes one
 * desired commit (deleting the signal refs it applies, when a run's delivered holds are applied
 * after it released its lease). Shared by `nyl hold` and the run's late-signal step.
 */
import type { RefUpdate } from '../git/refs';
import { withLease } from '../lease/transaction';
import { type AppliedHolds, applyHolds, type HoldRequest } from '../run/apply-holds';
import { buildTransitions } from '../run/transition-plan';
import { readEnvironmentState } from '../state/read';
import type { Runtime } from '../util/runtime';
import { uuidv7 } from '../util/uuid';
import type { OpenedEnvironment } from './context';
import { requireActiveState } from './state-checks';

export interface CommitHoldsResult {
  applied: AppliedHolds;
  desired?: string;
}

export async function commitHolds(
  rt: Runtime,
  opened: OpenedEnvironment,
  holds: HoldRequest[],
  options: { operation: string; requestedBy: string; reason?: string; waitMs?: number; signalUpdates?: RefUpdate[] },
): Promise<CommitHoldsResult> {
  const { store, env, loc } = opened;
  const lease = { operation: options.operation, run: uuidv7(rt.clock.now()), author: opened.author!, durationMs: env.spec.lease.durationMs, ...(options.waitMs !== undefined ? { waitMs: options.waitMs } : {}) };
  return withLease(rt, store, lease, async (tx) => {
    const refs = tx.snapshot;
    const view = await readEnvironmentState(store.reader, loc, refs, store.cache);
    requireActiveState(env.name, view, loc);
    const applied = applyHolds(env.name, view.desiredUnits, view.observedUnits, holds);
    const signalUpdates = options.signalUpdates ?? [];
    if (applied.held.length === 0 && signalUpdates.length === 0) {
      await tx.end('nothing-to-write');
      return { applied, ...(view.desiredOid ? { desired: view.desiredOid } : {}) };
    }
    const units = Object.fromEntries(applied.held.map((u) => [u, { action: 'hold' }]));
    const before = { desired: view.desiredUnits, observed: view.observedUnits };
    const after = { desired: applied.desired, observed: view.observedUnits };
    const trailers = { requestedBy: options.requestedBy, ...(options.reason ? { reason: options.reason } : {}) };
    const transitions = buildTransitions(loc, refs, env.name, before, after, { operation: 'hold', units, held: applied.held }, trailers, applied.held);
    const published = await tx.publish(transitions, () => signalUpdates);
    const desired = published.refs.get(loc.desiredRef);
    await store.syncKnownBranches(published.refs);
    return { applied, ...(desired ? { desired } : {}) };
  });
}
