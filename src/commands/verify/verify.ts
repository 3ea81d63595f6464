/**
 * `nyl verify -e ENV [--unit U]...`: asks each unit's driver whether the unit's resources still
 * match its receipt (the `check` phase, ./verify-checks.ts) and records what it observed.
 *
 * A state operation, not a run: it takes the environment's lease (operation verify, no run ref,
 * no signals) so that no run changes the receipts it observes meanwhile, and ends with one
 * observed commit (operation verify) in the same atomic push that releases the lease. Each
 * checked unit gets a new drift observation {status, observedAt, run: the lease's run id, receipt,
 * detail?}; the one it replaces joins the unit's history (withDriftObservation). The desired ref
 * never changes. With no unit to check it writes nothing.
 *
 * Checked: every unit of the ownership set (or named by --unit) with a receipt in its current
 * incarnation. Skipped, each with why: units without one, held units, tombstones (retained,
 * deleting, pending-teardown) and units that left the ownership set.
 *
 * A broken lease refuses it (NYL-LEASE-BROKEN: only an importer takes one over), a held one too
 * (NYL-LEASE-HELD) unless --wait-lease outlasts the holder. A signal stops starting checks; then
 * nothing is written and it refuses with NYL-RUN-CANCELLED.
 */
import { closest } from '../../util/closest';
import { diagnostic, type Diagnostic, fail, NylError } from '../../errors/diagnostic';
import type { LeaseTransaction } from '../../lease/transaction';
import { withLease } from '../../lease/transaction';
import { currentReceipt } from '../../plan/unit-view';
import { notReconciledDetail } from '../../plan/reasons';
import { recoveryOf } from '../../plan/planner';
import { ownershipSet } from '../../project/selectors';
import type { UnitResource } from '../../project/types';
import type { StateOperationReport } from '../../report/types';
import { buildTransitions } from '../../run/transition-plan';
import { type DesiredUnitDoc, type ObservedUnitDoc, withDriftObservation } from '../../state/documents';
import { type EnvironmentStateView, readEnvironmentState } from '../../state/read';
import { isoSeconds } from '../../util/clock';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, trailersOf } from '../shared/context';
import { keyFileWarnings, stateLostObserved, stateOperationReport } from '../shared/report-base';
import { requireActive, type StateRead, stateUnderLease } from '../state/state-checks';
import { type CheckTarget, type DriftFinding, runChecks } from './verify-checks';

interface VerifyRequest extends EnvironmentRequest {
  units?: string[];
  waitMs?: number;
}

type VerifyOptions = Pick<VerifyRequest, 'units' | 'waitMs'>;

export async function verify(rt: Runtime, req: VerifyRequest): Promise<StateOperationReport> {
  // Drift is checked against the receipts' own renderings, but the ownership set is today's source.
  const opened = await openEnvironment(rt, req, { writes: true });
  try {
    const report = await verifyOpened(rt, opened, { ...(req.units ? { units: req.units } : {}), ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}) });
    // A drift check may open sealed values (a check's env): the key file is as exposed here.
    report.warnings.unshift(...keyFileWarnings(opened.env.name, rt.env));
    return report;
  } finally {
    opened.close();
  }
}

export async function verifyOpened(rt: Runtime, opened: OpenedEnvironment, req: VerifyOptions): Promise<StateOperationReport> {
  const { store, loc } = opened;
  await store.ensureOpen();
  const refs = await store.snapshot();
  const view = await readEnvironmentState(store.reader, loc, refs, store.cache);
  await requireActive(opened, { refs, view });
  await opened.local.requireNoUnpublishedWork(refs);
  requireKnownUnits(opened, view, req.units);
  const options = leaseOptionsOf(rt, opened, 'verify', { initial: refs, waitMs: req.waitMs });
  return withLease(rt, store, options, (tx) => verifyUnderLease(rt, opened, req, tx, { refs, view }));
}

/** The units `--unit` may name: the ownership set's and those the state knows. */
export function verifiableUnits(opened: OpenedEnvironment, view: EnvironmentStateView): string[] {
  return [...new Set([...ownershipSet(opened.project, opened.env).map((u) => u.name), ...view.desiredUnits.keys()])];
}

/** --unit: names the ownership set or the state knows; anything else is refused before the lease. */
function requireKnownUnits(opened: OpenedEnvironment, view: EnvironmentStateView, units: string[] | undefined): void {
  if (!units || units.length === 0) return;
  const known = new Set(verifiableUnits(opened, view));
  const unknown = units.filter((u) => !known.has(u));
  if (unknown.length === 0) return;
  const env = opened.env.name;
  fail('NYL-UNIT-UNKNOWN', `environment ${env} has no unit ${unknown.join(', ')}`, {
    env,
    unit: unknown[0],
    units: unknown,
    guess: closest(unknown[0]!, known),
    fix: `pick units of ${env}: ${[...known].sort().join(', ') || '(none)'}`,
  });
}

async function verifyUnderLease(
  rt: Runtime,
  opened: OpenedEnvironment,
  req: VerifyOptions,
  tx: LeaseTransaction,
  first: StateRead,
): Promise<StateOperationReport> {
  const refs = tx.snapshot;
  const view = await stateUnderLease(opened, first, refs);
  const generation = await requireActive(opened, { refs, view });
  const selection = selectUnits(opened, view, generation, req.units);
  const run = tx.lease.record.run;
  const report = stateOperationReport('verify', opened.env.name, { run, units: {}, skipped: selection.skipped });
  if (selection.targets.length === 0) {
    await tx.end('nothing-to-write');
    report.notes.push(
      diagnostic('NYL-UNCHANGED', 'note', `${opened.env.name} has no unit with a receipt to check; nothing was written`, { env: opened.env.name }),
    );
    return report;
  }
  const findings = await runChecks(
    rt,
    opened,
    view.observedUnits,
    selection.targets.map((s) => s.target),
    run,
  );
  if (rt.cancel.aborted) {
    await tx.end('cancelled');
    throw new NylError(
      diagnostic('NYL-RUN-CANCELLED', 'error', `a signal arrived while checking the drift of ${opened.env.name}; nothing was written`, {
        env: opened.env.name,
      }),
    );
  }
  return publishFindings(rt, opened, tx, view, selection.targets, findings, report);
}

/** A unit to check, with the recovery policy its drift warning's fix depends on. */
interface Selected {
  target: CheckTarget;
  recovery: 'converge' | 'manual';
}

interface Selection {
  targets: Selected[];
  /** Unit -> why it is not checked. */
  skipped: Record<string, string>;
}

/** The units to check (--unit, else the ownership set and every unit state has a desired document of), and the others with why. */
function selectUnits(opened: OpenedEnvironment, view: EnvironmentStateView, generation: number, names: string[] | undefined): Selection {
  const owned = new Map(ownershipSet(opened.project, opened.env).map((u) => [u.name, u]));
  const all = names && names.length > 0 ? [...new Set(names)] : [...new Set([...owned.keys(), ...view.desiredUnits.keys()])].sort();
  const selection: Selection = { targets: [], skipped: {} };
  for (const name of all) {
    const picked = pick(opened, name, owned.get(name), view.desiredUnits.get(name), view.observedUnits.get(name), generation);
    if (typeof picked === 'string') selection.skipped[name] = picked;
    else selection.targets.push(picked);
  }
  return selection;
}

/** The unit to check, or why it is skipped. */
function pick(
  opened: OpenedEnvironment,
  name: string,
  unit: UnitResource | undefined,
  desired: DesiredUnitDoc | undefined,
  observed: ObservedUnitDoc | undefined,
  generation: number,
): Selected | string {
  const tombstone = notReconciledDetail(desired);
  if (tombstone) return tombstone;
  if (!unit)
    return desired ? 'it left the ownership set: the next reconcile removes it as its deletionPolicy says' : 'neither source nor state has it any more';
  const receipt = currentReceipt(desired, observed, generation);
  if (!receipt) return 'it has no receipt in its current incarnation yet: the next reconcile executes it';
  const kind = receipt.desired.kind ?? desired?.kind ?? unit.kind;
  return { target: { unit: name, kind, receipt }, recovery: recoveryOf(unit, opened.drivers) };
}

/** One observed commit with every new observation, published with the lease's release; then the report. */
async function publishFindings(
  rt: Runtime,
  opened: OpenedEnvironment,
  tx: LeaseTransaction,
  view: EnvironmentStateView,
  targets: Selected[],
  findings: Map<string, DriftFinding>,
  report: StateOperationReport,
): Promise<StateOperationReport> {
  const { loc, env } = opened;
  const observedAt = isoSeconds(rt.clock.now());
  const run = tx.lease.record.run;
  const observed = new Map(view.observedUnits);
  const units: Record<string, string> = {};
  for (const { target } of targets) {
    const f = findings.get(target.unit)!;
    observed.set(
      target.unit,
      withDriftObservation(view.observedUnits.get(target.unit)!, {
        status: f.status,
        observedAt,
        run,
        receipt: target.receipt.run,
        ...(f.detail ? { detail: f.detail } : {}),
        ...(f.code ? { code: f.code } : {}),
      }),
    );
    units[target.unit] = f.status;
  }
  const before = { desired: view.desiredUnits, observed: view.observedUnits };
  const after = { desired: view.desiredUnits, observed };
  const names = targets.map((t) => t.target.unit);
  const transitions = buildTransitions(loc, tx.snapshot, env.name, before, after, { operation: 'verify', units }, trailersOf(opened, undefined), names);
  const published = await tx.publish(transitions);
  report.result = 'done';
  report.observed = published.refs.get(loc.observedRef);
  fillReport(opened, targets, findings, report);
  await opened.local.syncKnownBranches(published.refs);
  return report;
}

/** details.units, a warning per drifted unit and an error per failed check. */
function fillReport(opened: OpenedEnvironment, targets: Selected[], findings: Map<string, DriftFinding>, report: StateOperationReport): void {
  const env = opened.env.name;
  const units: Record<string, { drift: string; kind: string; detail?: string; code?: string }> = {};
  for (const { target, recovery } of targets) {
    const f = findings.get(target.unit)!;
    units[target.unit] = { drift: f.status, kind: target.kind, ...(f.detail ? { detail: f.detail } : {}), ...(f.code ? { code: f.code } : {}) };
    if (f.code === 'NYL-BACKEND-STATE-LOST') report.warnings.push(stateLostObserved(opened.env.name, target.unit, f.detail));
    else if (f.status === 'drifted') report.warnings.push(driftedWarning(opened, target, recovery, f));
    if (f.failed)
      report.errors.push(
        diagnostic('NYL-DRIFT-CHECK-FAILED', 'error', `the drift check of ${target.unit} failed: ${f.detail}; its drift is recorded unknown`, {
          env,
          unit: target.unit,
          units: [target.unit],
        }),
      );
  }
  report.details.units = units;
}

/**
 * NYL-UNIT-DRIFTED, whose fix says what repairs the unit: under driftRepair converge the next
 * reconcile (`repair: converge`), or, for a unit under manual recovery, an approval
 * (`repair: approve`); under driftRepair manual the catalog's --reapply.
 */
function driftedWarning(opened: OpenedEnvironment, target: CheckTarget, recovery: 'converge' | 'manual', f: DriftFinding): Diagnostic {
  const env = opened.env.name;
  const unit = target.unit;
  const message = `${unit} drifted from its receipt (run ${target.receipt.run})${f.detail ? `: ${f.detail}` : ''}`;
  const converges = opened.env.spec.driftRepair === 'converge';
  return diagnostic('NYL-UNIT-DRIFTED', 'warning', message, {
    env,
    unit,
    units: [unit],
    ...(converges ? { repair: recovery === 'converge' ? 'converge' : 'approve' } : {}),
  });
}
