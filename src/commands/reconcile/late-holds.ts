/**
 * Holds delivered to a run after its last check of signals.
 */
import { NylError } from '../../errors/diagnostic';
import type { ReconcileReport } from '../../report/types';
import { readSignals, signalDeletions } from '../../run/signals';
import type { Runtime } from '../../util/runtime';
import type { OpenedEnvironment } from '../shared/context';
import { commitHolds } from '../hold/hold-commit';

/**
 * A hold that reached the run after its last check is applied once the run released its lease, in
 * a hold commit requested by whoever sent it: a delivered hold always takes effect. When another
 * run took the lease meanwhile, that run applies the signals instead.
 *
 * Returns undefined when it wrote no hold commit. When it wrote one (the state refs moved past the
 * run's own push), the hold commit already synced the clone's known branches: it returns the ones
 * that sync left diverged, so that the run does not sync again.
 */
export async function applyLateHolds(rt: Runtime, opened: OpenedEnvironment, report: ReconcileReport): Promise<string[] | undefined> {
  for (let attempt = 0; attempt < 5; attempt++) {
    // A damaged signal is left where it is: the next command that needs it refuses and names it.
    const { signals } = await readSignals(opened.store);
    if (signals.length === 0) return undefined;
    try {
      // Requested by whoever sent the holds, for the reasons they gave.
      const requestedBy = [...new Set(signals.map((s) => s.by))].join(', ');
      const reason = [...new Set(signals.flatMap((s) => (s.reason ? [s.reason] : [])))].join('; ');
      const result = await commitHolds(rt, opened, signals, {
        operation: 'hold',
        requestedBy,
        ...(reason ? { reason } : {}),
        signalUpdates: signalDeletions(signals),
      });
      report.details.heldAfterRun = result.applied.held;
      if (result.desired) report.desired = result.desired;
      for (const name of result.applied.held) {
        const u = report.units[name];
        if (u) {
          u.detail = `held after the run (${u.result})`;
          u.result = 'held';
        }
      }
      return result.diverged;
    } catch (error) {
      // Another run took the lease (it applies the signals), or a hold took its signal back.
      if (error instanceof NylError && error.code === 'NYL-LEASE-HELD') return undefined;
      if (error instanceof NylError && error.code === 'NYL-STATE-CONFLICT') continue;
      throw error;
    }
  }
  return undefined;
}
