/**
 * What `nyl state delete --teardown` does after its teardown ran: go on to the deletion
 * in the same command, or stop and delete nothing. Pure: it reads the teardown's ReconcileReport.
 *
 * - failed: a teardown failed or is uncertain (exit 1), or the teardown reported an error of its
 *   own (its code decides the exit); the teardown's findings are kept in state, not undone;
 * - waiting: every unit that remains waits (exit 2): a teardown wait, an approval, dependents,
 *   readiness, or a held unit that still has an incarnation (its row names a uid; a held marker's
 *   row has none, and the deletion removes the marker);
 * - delete: nothing in the report keeps the deletion from going on. The state, read again under
 *   the deletion's lease, has the last word: a unit the report shows neither gone nor waiting
 *   (a retained tombstone, say) is refused there with NYL-STATE-DELETE-INCARNATIONS (exit 1),
 *   because then not every remaining unit waits.
 */
import { diagnostic, type Diagnostic } from '../../errors/diagnostic';
import type { ReconcileReport, ReconcileUnitReport } from '../../report/types';
import { byCodeUnits } from '../../util/compare';

type TeardownVerdict = { kind: 'delete' } | { kind: 'waiting'; units: string[] } | { kind: 'failed'; units: string[]; errors: Diagnostic[] };

/** Results after which a unit has no incarnation left in state. */
const GONE = new Set(['removed', 'released']);

/** Results of a unit that waits for something outside this command. */
const WAITING = new Set(['pending-teardown', 'tearing-down', 'blocked', 'held', 'awaiting-approval']);

/** Results of a teardown that failed or may have had effects without a recorded end. */
const FAILED = new Set(['failed', 'uncertain', 'recovered']);

/** The units of a report whose row matches, in the report's table order. */
function unitsWhere(report: ReconcileReport, match: (row: ReconcileUnitReport) => boolean): string[] {
  const order = [...report.unitOrder, ...Object.keys(report.units).filter((n) => !report.unitOrder.includes(n))];
  return order.filter((n) => report.units[n] && match(report.units[n]!));
}

/** A held row without a uid is a held marker: no incarnation, nothing to wait for (the deletion removes it). */
function gone(row: ReconcileUnitReport): boolean {
  return GONE.has(row.result) || (row.result === 'held' && row.uid === undefined && row.uncertain !== true);
}

export function teardownVerdict(report: ReconcileReport): TeardownVerdict {
  // A held unit whose condition is uncertain is uncertain first, as exit codes rank it.
  const failed = unitsWhere(report, (row) => FAILED.has(row.result) || row.uncertain === true);
  if (failed.length > 0 || report.errors.length > 0) return { kind: 'failed', units: failed, errors: report.errors };
  const waiting = unitsWhere(report, (row) => WAITING.has(row.result) && !gone(row));
  const others = unitsWhere(report, (row) => !WAITING.has(row.result) && !gone(row));
  if (waiting.length > 0 && others.length === 0) return { kind: 'waiting', units: waiting };
  return { kind: 'delete' };
}

/** `unit (result)` for each unit, as the messages list them. */
function listed(report: ReconcileReport, units: string[]): string {
  return units.map((n) => `${n} (${report.units[n]?.result ?? 'unknown'})`).join(', ');
}

/** The errors that stop the command, for a verdict that stops it. */
export function verdictErrors(env: string, report: ReconcileReport, verdict: Exclude<TeardownVerdict, { kind: 'delete' }>): Diagnostic[] {
  const one = verdict.units.length === 1 ? { unit: verdict.units[0]! } : {};
  if (verdict.kind === 'waiting') {
    return [
      diagnostic('NYL-STATE-DELETE-WAITING', 'error', `the teardown of ${env} waits: ${listed(report, verdict.units)}; nothing was deleted`, {
        env,
        units: verdict.units,
        ...one,
      }),
    ];
  }
  const failed =
    verdict.units.length === 0
      ? []
      : [
          diagnostic('NYL-STATE-DELETE-INCARNATIONS', 'error', `the teardown of ${env} did not remove ${listed(report, verdict.units)}; nothing was deleted`, {
            env,
            units: verdict.units,
            failed: true,
            ...one,
          }),
        ];
  return [...verdict.errors, ...failed];
}

/** The units the teardown removed from state (removed or released), as the deletion counts them. */
export function removedByTeardown(report: ReconcileReport | undefined): string[] {
  return report ? unitsWhere(report, (row) => GONE.has(row.result)) : [];
}

/**
 * The teardown's NYL-TEARDOWN-INCOMPLETE warnings, one per unit, said once for all the units in
 * the state delete's own report: removed without a claim of removal (--allow-incomplete), and,
 * apart, those whose teardown could not claim it. Decommissioning an environment of Commands
 * without teardown: would otherwise print the same warning for every unit. The teardown's own
 * report (details.teardown) keeps them as it wrote them; the text leaves them out there.
 */
export function summarizeIncomplete(env: string, report: ReconcileReport): Diagnostic[] {
  const incomplete = report.warnings.filter((w) => w.code === 'NYL-TEARDOWN-INCOMPLETE');
  if (incomplete.length <= 1) return [];
  const removed = unitsWhere(report, (row) => row.incomplete === true).sort(byCodeUnits);
  const named = incomplete.flatMap((w) => w.units ?? []);
  const failed = named.filter((n) => !removed.includes(n)).sort(byCodeUnits);
  const out: Diagnostic[] = [];
  if (removed.length > 0)
    out.push(
      diagnostic('NYL-TEARDOWN-INCOMPLETE', 'warning', `removed from state without a claim of removal (--allow-incomplete): ${removed.join(', ')}`, {
        env,
        units: removed,
        removed: true,
      }),
    );
  if (failed.length > 0)
    out.push(
      diagnostic('NYL-TEARDOWN-INCOMPLETE', 'warning', `the teardown cannot claim the removal of ${failed.join(', ')}`, {
        env,
        units: failed,
        command: 'state-delete',
      }),
    );
  return out;
}
