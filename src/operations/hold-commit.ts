/**
 * The hold commit: takes the lease as `hold`, applies holds to the desired documents and writes one
 * desired commit (deleting the signal refs it applies, when a run's delivered holds are applied
 * after it released its lease). Shared by `nyl hold` and the run's late-signal step.
 */
import { acquireLease } from '../lease/lease';
import type { RefUpdate } from '../git/refs';
import { type AppliedHolds, applyHolds, type HoldRequest } from '../run/apply-holds';
import { buildTransitions } from '../run/transition-plan';
import { publishTransition } from '../lease/publish';
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
  const author = opened.author!;
  const acquired = await acquireLease(rt, store, {
    operation: options.operation,
    run: uuidv7(rt.clock.now()),
    author,
    durationMs: env.spec.lease.durationMs,
    ...(options.waitMs !== undefined ? { waitMs: options.waitMs } : {}),
  });
  const lease = acquired.handle;
  lease.startRenewal();
  let landed = false;
  try {
    await rt.faults.reach('lease-acquired');
    const refs = acquired.snapshot;
    const view = await readEnvironmentState(store.reader, loc, refs, store.cache);
    requireActiveState(env.name, view, loc);
    const applied = applyHolds(env.name, view.desiredUnits, view.observedUnits, holds);
    if (applied.held.length === 0 && (options.signalUpdates ?? []).length === 0) {
      await lease.release();
      landed = true;
      return { applied, ...(view.desiredOid ? { desired: view.desiredOid } : {}) };
    }
    const units: Record<string, unknown> = {};
    for (const u of applied.held) units[u] = { action: 'hold' };
    const before = { desired: view.desiredUnits, observed: view.observedUnits };
    const after = { desired: applied.desired, observed: view.observedUnits };
    const transitions = buildTransitions(
      loc,
      refs,
      env.name,
      before,
      after,
      { operation: 'hold', units, held: applied.held },
      { requestedBy: options.requestedBy, ...(options.reason ? { reason: options.reason } : {}) },
      applied.held,
    );
    const published = await publishTransition(rt, store, lease, transitions, author, { release: true, known: refs, extraUpdates: options.signalUpdates ?? [] });
    landed = true;
    const desired = published.refs.get(loc.desiredRef);
    await store.syncKnownBranches(published.refs);
    return { applied, ...(desired ? { desired } : {}) };
  } finally {
    lease.stopRenewal();
    if (!landed && !lease.lost) await lease.release().catch(() => undefined);
  }
}
