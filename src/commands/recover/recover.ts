/**
 * `nyl recover`: imports the run of a broken lease without executing anything, repairs damaged
 * state (./recover-damage.ts), clears a unit's uncertain condition or non-retryable failure
 * (--retry), or adopts the receipt a run checkpointed for it (--accept RUN). One transition
 * commit, operation `recover`; no run record.
 *
 * recover takes a broken lease over carrying its `broken` mark (keepBroken): while it runs its
 * lease is live like any other, and once the lease of a recover that died expired, the lease is
 * broken again for the next importer (leaseStatus in ../lease/record.ts). One that fails before
 * its commit lands puts the broken lease back (the lease transaction does), and the run refs stay.
 */
import { diagnostic, fail, NylError } from '../../errors/diagnostic';
import { brokenError, type LeaseView, readLease } from '../../lease/lease';
import type { RefTransition } from '../../lease/publish';
import { leaseStatus, leaseTiming, RUN_OPERATIONS } from '../../lease/record';
import { type LeaseTransaction, withLease } from '../../lease/transaction';
import type { StateOperationReport } from '../../report/types';
import { applyHolds } from '../../run/apply-holds';
import { signalDeletions } from '../../run/signals';
import { breakFields, coordinationUpdates, reapLeftovers, takeOver, type Takeover } from '../../run/takeover';
import { endBrokenRuns } from './end-runs';
import { buildTransitions } from '../../run/transition-plan';
import { corruptError } from '../../state/damage';
import { toYaml } from '../../state/documents';
import type { StateLocation } from '../../state/location';
import type { RefSnapshot } from '../../state/store';
import { isoSeconds } from '../../util/clock';
import type { Runtime } from '../../util/runtime';
import { uuidv7 } from '../../util/uuid';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, planInputOf, trailersOf } from '../shared/context';
import {
  damageOfSurvey,
  giveIncarnations,
  type RepairRecord,
  repairStateFiles,
  repairUnits,
  runsDamaged,
  setAsideSignals,
  type StateRepair,
  survey,
  type Survey,
} from './recover-damage';
import { decideUnit, type RecoverOptions, type RecoverWork } from './recover-unit';
import { stateOperationReport } from '../shared/report-base';
import { inactiveStateOf } from '../state/state-checks';

export type { RecoverOptions, RecoverWork } from './recover-unit';

interface RecoverRequest extends EnvironmentRequest, RecoverOptions {}

function checkUsage(req: RecoverOptions): void {
  if (req.unit && req.retry === (req.accept !== undefined)) {
    fail('NYL-USAGE', '--unit takes exactly one of --retry and --accept <run>', { fix: 'pass --unit U --retry, or --unit U --accept <run> --reason <why>' });
  }
  if (!req.unit && (req.retry || req.accept !== undefined)) fail('NYL-USAGE', '--retry and --accept need --unit', { fix: 'pass --unit <name>' });
  if (req.accept !== undefined && !req.reason?.trim())
    fail('NYL-USAGE', '--accept needs --reason', { fix: 'pass --reason "<why the checkpoint can be adopted>"' });
}

export async function recover(rt: Runtime, req: RecoverRequest): Promise<StateOperationReport> {
  checkUsage(req);
  const opened = await openEnvironment(rt, req, { writes: true });
  try {
    return await recoverOpened(rt, opened, req);
  } finally {
    opened.close();
  }
}

export async function recoverOpened(rt: Runtime, opened: OpenedEnvironment, req: RecoverOptions): Promise<StateOperationReport> {
  checkUsage(req);
  const { store } = opened;
  await store.ensureOpen();
  const refs = await store.snapshot();
  await opened.local.requireNoUnpublishedWork(refs);
  const lease = await readLease(store, refs);
  // A damaged lease may still have a holder: only `lease break` declares it gone.
  if (lease?.damage) throw corruptError(opened.env.name, [lease.damage]);
  const first = await survey(opened, refs);
  const damaged = requireReasonForRepairs(opened, first, req);
  refuseWithoutImport(rt, opened, lease, req, damaged);
  const options = leaseOptionsOf(rt, opened, 'recover', { initial: refs, keepBroken: true, waitMs: req.waitMs });
  return withLease(rt, store, options, (tx) => recoverUnderLease(rt, opened, req, tx, first));
}

/** Is anything damaged? A repair is recorded with the operator's reason, so it needs one. */
function requireReasonForRepairs(opened: OpenedEnvironment, s: Survey, req: RecoverOptions): boolean {
  const damage = damageOfSurvey(s);
  if (damage.length > 0 && !req.reason?.trim()) {
    fail(
      'NYL-REASON-REQUIRED',
      `recover repairs damaged state of ${opened.env.name} (${damage.length} document(s), such as ${damage[0]!.ref}); it needs a --reason, recorded with the repair`,
      { operation: 'recover' },
    );
  }
  return damage.length > 0;
}

/**
 * Recover imports only the run of a broken lease: a dead run whose lease merely expired is
 * imported by the next reconcile (or broken first); without a break or damage to repair, only
 * --unit has work.
 */
function refuseWithoutImport(rt: Runtime, opened: OpenedEnvironment, lease: LeaseView | undefined, req: RecoverOptions, damaged: boolean): void {
  const name = opened.env.name;
  const importing = lease?.record.broken !== undefined;
  const timing = leaseTiming(opened.env.spec.lease);
  if (lease && !importing && RUN_OPERATIONS.has(lease.record.operation) && leaseStatus(lease.record, rt.clock.now(), timing.skewMs) === 'expired') {
    throw brokenError(name, lease, true);
  }
  if (!importing && !damaged && !req.unit)
    fail('NYL-RECOVER-NOTHING', `the lease of ${name} is not broken and nothing is damaged, so there is nothing to import or repair`, { env: name });
}

async function recoverUnderLease(
  rt: Runtime,
  opened: OpenedEnvironment,
  req: RecoverOptions,
  tx: LeaseTransaction,
  first: Survey,
): Promise<StateOperationReport> {
  const { env } = opened;
  const report = stateOperationReport('recover', env.name);
  const broken = tx.replaced?.record.broken !== undefined;
  const s = await survey(opened, tx.snapshot, first);
  const damaged = requireReasonForRepairs(opened, s, req);
  // Another importer may have taken the broken lease over and imported its run while we waited.
  if (!broken && !damaged && !req.unit)
    fail('NYL-RECOVER-NOTHING', `the lease of ${env.name} is no longer broken: another importer imported its run`, { env: env.name });
  const state = await repairStateFiles(opened, s);
  if (!state.state || state.state.status !== 'active') return recoverInactive(rt, opened, req, tx, state, broken, report);
  const r = await importAndRepair(rt, opened, tx, s, state, broken);
  report.warnings.push(...(r.takeover?.imported.diagnostics ?? []));
  if (req.unit) await decideUnit(rt, opened, tx.snapshot, state.state.generation, req, r.work, report);
  return publishRecovery(rt, opened, req, tx, r, report);
}

interface Recovery {
  survey: Survey;
  state: StateRepair;
  takeover: Takeover | undefined;
  work: RecoverWork;
  repaired: RepairRecord[];
  broken: boolean;
}

/** Repairs damaged unit documents, then imports the dead runs when the lease is broken or a run is damaged. */
async function importAndRepair(
  rt: Runtime,
  opened: OpenedEnvironment,
  tx: LeaseTransaction,
  s: Survey,
  state: StateRepair,
  broken: boolean,
): Promise<Recovery> {
  const generation = state.state!.generation;
  const now = isoSeconds(rt.clock.now());
  const mint = () => uuidv7(rt.clock.now());
  const repaired = [...state.repaired];
  const docs = repairUnits(s.view, generation, { run: tx.lease.record.run, now, mint }, repaired);
  const importing = broken || runsDamaged(s);
  const takeover = importing
    ? await takeOver(opened.store, tx.snapshot, { ...planInputOf(opened, generation, docs), now }, undefined, tx.replaced, { tolerate: true })
    : undefined;
  if (takeover) await reapLeftovers(takeover, opened.drivers, opened.env.name, rt);
  const work: RecoverWork = {
    desired: new Map(takeover?.imported.desired ?? docs.desired),
    observed: new Map(takeover?.imported.observed ?? docs.observed),
    units: {},
    recovered: [...new Set([...(takeover?.imported.recovered ?? []), ...s.view.damage.flatMap((d) => (d.unit ? [d.unit] : []))])],
  };
  giveIncarnations(work.desired, work.observed, generation, mint);
  return { survey: s, state, takeover, work, repaired, broken };
}

/** Adds the repaired state.yaml files to the transition (a desired commit always exists then). */
function withStateFiles(loc: StateLocation, refs: RefSnapshot, transitions: RefTransition[], files: StateRepair['files']): RefTransition[] {
  const out = transitions.map((t) => ({ ...t, changes: new Map(t.changes) }));
  for (const [ref, doc] of [
    [loc.desiredRef, files.desired],
    [loc.observedRef, files.observed],
  ] as const) {
    if (!doc) continue;
    let t = out.find((x) => x.ref === ref);
    if (!t) out.push((t = { ref, base: refs.get(ref), changes: new Map(), message: out[0]!.message }));
    t.changes.set('state.yaml', toYaml(doc));
  }
  return out;
}

async function publishRecovery(
  rt: Runtime,
  opened: OpenedEnvironment,
  req: RecoverOptions,
  tx: LeaseTransaction,
  r: Recovery,
  report: StateOperationReport,
): Promise<StateOperationReport> {
  const { store, loc, env } = opened;
  const refs = r.survey.refs;
  // Holds delivered to runs that died take effect here: a delivered hold always takes effect.
  const signals = r.survey.signals.signals;
  const holds = applyHolds(env.name, r.work.desired, r.work.observed, signals, r.state.state!.generation);
  const aside = setAsideSignals(opened, r.survey);
  const repaired = [...r.repaired, ...aside.repaired];
  const breaks = r.broken ? breakFields(tx.replaced) : {};
  const body = {
    operation: 'recover',
    units: r.work.units,
    imported: r.takeover?.imported.imported ?? [],
    recovered: r.work.recovered,
    held: holds.held,
    repaired,
    ...breaks,
  };
  const before = { desired: r.survey.view.desiredUnits, observed: r.survey.view.observedUnits };
  const after = { desired: holds.desired, observed: r.work.observed };
  const forceDesired = breaks.leaseBroken !== undefined || repaired.length > 0;
  const transitions = withStateFiles(
    loc,
    refs,
    buildTransitions(loc, refs, env.name, before, after, body, trailersOf(opened, req.reason), req.unit ? [req.unit] : [], forceDesired),
    r.state.files,
  );
  const extra = [...coordinationUpdates(store, refs, r.takeover, r.work.observed), ...signalDeletions(signals), ...aside.updates];
  await rt.faults.reach('before-recover-push');
  const published = await tx.publish(transitions, () => extra);
  reportRecovery(opened, r, published.refs, { held: holds.held, repaired, breaks }, report);
  report.warnings.push(...aside.warnings);
  await opened.local.syncKnownBranches(published.refs);
  return report;
}

function reportRecovery(
  opened: OpenedEnvironment,
  r: Recovery,
  refs: RefSnapshot,
  more: { held: string[]; repaired: RepairRecord[]; breaks: object },
  report: StateOperationReport,
): void {
  const { loc, env } = opened;
  report.result = 'done';
  report.desired = refs.get(loc.desiredRef);
  report.observed = refs.get(loc.observedRef);
  if (r.takeover) {
    report.details.imported = r.takeover.imported.imported;
    report.details.runs = r.takeover.imported.consumed.map((run) => run.run);
  }
  report.details.recovered = r.work.recovered;
  if (more.held.length > 0) report.details.held = more.held;
  if (more.repaired.length > 0) report.details.repaired = more.repaired;
  Object.assign(report.details, more.breaks);
  const uncertain = [...r.work.observed].filter(([, o]) => o.condition?.type === 'uncertain').map(([n]) => n);
  if (uncertain.length > 0)
    report.warnings.push(
      diagnostic('NYL-UNIT-UNCERTAIN', 'warning', `units left uncertain: ${uncertain.join(', ')}`, { env: env.name, units: uncertain, unit: uncertain[0] }),
    );
}

/**
 * Where state cannot be imported into, recover still clears the break: an unchanged
 * commit records it when state.yaml exists, else the lease is simply released. Either way the
 * broken runs' refs are marked ended in the same push (./end-runs.ts): they stay for a later
 * import but no longer hold the environment, so the command that repairs the state can run.
 */
async function recoverInactive(
  rt: Runtime,
  opened: OpenedEnvironment,
  req: RecoverOptions,
  tx: LeaseTransaction,
  repair: StateRepair,
  broken: boolean,
  report: StateOperationReport,
): Promise<StateOperationReport> {
  const { loc, env, store } = opened;
  const state = repair.state;
  // With --unit there is nothing to decide on: a refusal. Else a warning beside the cleared break.
  const finding = (await inactiveStateOf(opened, tx.snapshot, state, req.unit ? 'error' : 'warning'))!;
  if (req.unit) throw new NylError(finding);
  if (!broken && repair.repaired.length === 0)
    throw new NylError(diagnostic('NYL-RECOVER-NOTHING', 'error', `the lease of ${env.name} is not broken`, { env: env.name }));
  const breaks = broken ? breakFields(tx.replaced) : {};
  const timeMs = rt.clock.now();
  const ended = broken
    ? await endBrokenRuns(store, tx.snapshot, tx.replaced, { now: isoSeconds(timeMs), timeMs, author: opened.author!, finding: finding.code })
    : [];
  if (state) {
    const empty = { desired: new Map(), observed: new Map() };
    const body = { operation: 'recover', ...(repair.repaired.length > 0 ? { repaired: repair.repaired } : {}), ...breaks };
    const transitions = withStateFiles(
      loc,
      tx.snapshot,
      buildTransitions(loc, tx.snapshot, env.name, empty, empty, body, trailersOf(opened, req.reason), [], true),
      repair.files,
    );
    const published = await tx.publish(transitions, () => ended);
    report.desired = published.commits.get(loc.desiredRef);
  } else if (ended.length > 0) {
    await tx.publish([], () => ended);
  } else {
    await tx.release();
  }
  report.result = 'done';
  Object.assign(report.details, breaks);
  report.warnings.push(finding);
  return report;
}
