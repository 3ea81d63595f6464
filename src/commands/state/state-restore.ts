/**
 * `nyl state restore -e ENV --to COMMIT --reason R`: writes forward commits whose unit documents
 * are those of an earlier commit of the environment's state history, keeping current admission
 * (state.yaml, holds, the lease). One transition commit per state ref it changes, operation
 * `state-restore`, children of the current tips: never a force push, and on refs shared through
 * `path` only the environment's units/ directory changes, so publishing rebases past other
 * environments' commits.
 *
 * Where the documents come from: ./restore-point.ts. What is written: plan/restore.ts. A unit
 * document damaged now is replaced (or removed) like any other: restoring is one way to undo a bad
 * hand edit. Refusals are decided before the lease when the read shows them, and again under it.
 */
import { diagnostic, type Diagnostic, fail, NylError } from '../../errors/diagnostic';
import { withLease } from '../../lease/transaction';
import type { StateOperationReport } from '../../report/types';
import { type DocumentChanges, documentChanges, transitionsOf } from '../../run/transition-plan';
import { requireUndamaged } from '../../state/damage';
import type { DesiredUnitDoc, ObservedUnitDoc } from '../../state/documents';
import { type EnvironmentStateView, readEnvironmentState, readUnitDocs } from '../../state/read';
import { unimportedRuns } from '../../state/location';
import { resolveRestorePoint, type RestorePoint } from './restore-point';
import { restoreDocuments, type RestoreResult, resurrectedAs, type UnitDocs } from '../../plan/restore';
import { ownershipSet } from '../../project/selectors';
import type { RefSnapshot } from '../../state/store';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, trailersOf } from '../shared/context';
import { divergedWarnings, stateOperationReport } from '../shared/report-base';
import { requireActive, stateRefsMoved } from './state-checks';

interface StateRestoreRequest extends EnvironmentRequest {
  /** --to: the commit whose unit documents to restore. */
  to?: string;
  reason?: string;
  waitMs?: number;
}

type RestoreOptions = Omit<StateRestoreRequest, keyof EnvironmentRequest>;

/** --to and --reason are required; checked before anything is read. */
function checkUsage(req: RestoreOptions): asserts req is RestoreOptions & { to: string; reason: string } {
  if (!req.to?.trim())
    fail('NYL-USAGE', 'nyl state restore needs --to <commit>, the state commit to restore', {
      fix: "pass --to <commit>, a commit of `git log --first-parent` of the environment's desired or observed ref",
    });
  // A restore rewrites what state knows about every unit: the reason is the only record of why.
  if (!req.reason?.trim())
    fail('NYL-REASON-REQUIRED', 'restoring state needs a --reason, recorded as the Nyl-Reason trailer', { operation: 'nyl state restore' });
}

export async function stateRestore(rt: Runtime, req: StateRestoreRequest): Promise<StateOperationReport> {
  checkUsage(req);
  const opened = await openEnvironment(rt, req, { writes: true, renders: false });
  try {
    return await stateRestoreOpened(rt, opened, { to: req.to, reason: req.reason, ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}) });
  } finally {
    opened.close();
  }
}

/** What the restore writes, decided on one read of the state refs. */
interface Decision {
  point: RestorePoint;
  result: RestoreResult;
  changes: DocumentChanges;
}

/** The current state; a damaged unit document is left out (the restore replaces it), damaged state.yaml refuses. */
async function readCurrent(opened: OpenedEnvironment, refs: RefSnapshot): Promise<EnvironmentStateView> {
  const { store, loc } = opened;
  const view = await readEnvironmentState(store.reader, loc, refs, store.cache, { tolerate: true });
  requireUndamaged(
    loc.environment,
    view.damage.filter((d) => d.document === 'state'),
  );
  return view;
}

/** The unit documents at the restore point; a damaged one refuses (restore to another commit). */
async function readTarget(opened: OpenedEnvironment, point: RestorePoint): Promise<UnitDocs> {
  const { store, loc } = opened;
  const [desired, observed] = await Promise.all([
    readUnitDocs<DesiredUnitDoc>(store.reader, loc, 'desired', point.desired, store.cache),
    readUnitDocs<ObservedUnitDoc>(store.reader, loc, 'observed', point.observed, store.cache),
  ]);
  requireUndamaged(loc.environment, [...desired.damage, ...observed.damage]);
  return { desired: desired.units, observed: observed.units };
}

async function decide(opened: OpenedEnvironment, refs: RefSnapshot, view: EnvironmentStateView, to: string): Promise<Decision> {
  const point = await resolveRestorePoint(opened.store.reader, opened.loc, refs, to);
  const current = { desired: view.desiredUnits, observed: view.observedUnits };
  const result = restoreDocuments(current, await readTarget(opened, point));
  const changes = documentChanges(current, result.after);
  // A damaged document is missing from the current maps: remove it where the restore point has none.
  for (const d of view.damage) {
    if (!d.unit || (d.document !== 'desired-unit' && d.document !== 'observed-unit')) continue;
    const side = d.document === 'desired-unit' ? 'desired' : 'observed';
    if (!result.after[side].has(d.unit)) changes[side].set(`units/${d.unit}.yaml`, null);
  }
  return { point, result, changes };
}

const nothingChanges = (d: Decision): boolean => d.changes.desired.size === 0 && d.changes.observed.size === 0;

export async function stateRestoreOpened(rt: Runtime, opened: OpenedEnvironment, req: RestoreOptions): Promise<StateOperationReport> {
  checkUsage(req);
  const { store, env, loc } = opened;
  await store.ensureOpen();
  const report = stateOperationReport('state-restore', env.name);
  const refs0 = await store.snapshot();
  const view0 = await readCurrent(opened, refs0);
  await requireActive(opened, { refs: refs0, view: view0 });
  await opened.local.requireNoUnpublishedWork(refs0);
  const first = await decide(opened, refs0, view0, req.to);
  if (nothingChanges(first)) return unchanged(opened, report, first, refs0);
  return withLease(rt, store, leaseOptionsOf(rt, opened, 'state-restore', { initial: refs0, waitMs: req.waitMs }), async (tx) => {
    const refs = tx.snapshot;
    const moved = stateRefsMoved(loc, refs0, refs);
    const view = moved ? await readCurrent(opened, refs) : view0;
    await requireActive(opened, { refs, view });
    refuseUnimported(env.name, unimportedRuns(loc, refs));
    const decision = moved ? await decide(opened, refs, view, req.to) : first;
    if (nothingChanges(decision)) {
      await tx.end('nothing-to-write');
      return unchanged(opened, report, decision, refs);
    }
    const published = await tx.publish(transitionsOf(loc, refs, env.name, decision.changes, restoreBody(decision), trailersOf(opened, req.reason), 'changed'));
    describe(report, decision);
    report.result = 'done';
    report.desired = published.refs.get(loc.desiredRef);
    report.observed = published.refs.get(loc.observedRef);
    report.warnings.push(...incarnationWarnings(opened, decision.result), ...divergedWarnings(env.name, await opened.local.syncKnownBranches(published.refs)));
    return report;
  });
}

/**
 * A run ref nobody imported may hold the only record of receipts newer than the restore point;
 * imported after the restore, they would land on top of it. Import first, then restore.
 */
function refuseUnimported(env: string, runs: string[]): void {
  if (runs.length === 0) return;
  const what = runs.length === 1 ? `run ${runs[0]!} is` : `runs ${runs.join(', ')} are`;
  throw new NylError(
    diagnostic('NYL-RESTORE-RUNS-UNIMPORTED', 'error', `${what} not imported yet: a run ref may hold receipts the restore would not see; nothing was written`, {
      env,
      data: { runs },
    }),
  );
}

function unchanged(opened: OpenedEnvironment, report: StateOperationReport, d: Decision, refs: RefSnapshot): StateOperationReport {
  const env = opened.env.name;
  describe(report, d);
  report.desired = refs.get(opened.loc.desiredRef);
  report.observed = refs.get(opened.loc.observedRef);
  report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `the unit documents of ${env} already are those of ${d.point.commit}; nothing changed`, { env }));
  return report;
}

/** The units whose documents the restore changes: restored (a document remains) or removed. */
function unitActions(d: Decision): Record<string, 'restored' | 'removed'> {
  const names = new Set([...d.changes.desired.keys(), ...d.changes.observed.keys()].map((p) => p.slice('units/'.length, -'.yaml'.length)));
  const after = d.result.after;
  return Object.fromEntries([...names].sort().map((u) => [u, after.desired.has(u) || after.observed.has(u) ? 'restored' : 'removed']));
}

function describe(report: StateOperationReport, d: Decision): void {
  const { commit, desired, observed } = d.point;
  report.details.restoredFrom = { commit, ...(desired ? { desired } : {}), ...(observed ? { observed } : {}) };
  report.details.restored = unitActions(d);
  report.details.resurrected = d.result.resurrected;
  report.details.dropped = d.result.dropped;
  report.details.holdsKept = d.result.holdsKept;
}

function restoreBody(d: Decision) {
  const { commit, desired, observed } = d.point;
  const r = d.result;
  return {
    operation: 'state-restore',
    restoredFrom: { commit, desired, observed },
    units: unitActions(d),
    resurrected: r.resurrected,
    dropped: r.dropped,
    holdsKept: r.holdsKept,
  };
}

/**
 * NYL-RESTORE-INCARNATIONS for each incarnation the restore brings back or takes away; one brought
 * back names what it is now (a released record, a unit source no longer declares, ...), so that its
 * fix names a command that takes it.
 */
function incarnationWarnings(opened: OpenedEnvironment, r: RestoreResult): Diagnostic[] {
  const env = opened.env.name;
  const owned = new Set(ownershipSet(opened.project, opened.env).map((u) => u.name));
  const out: Diagnostic[] = [];
  for (const [unit, uid] of Object.entries(r.resurrected)) {
    out.push(
      diagnostic('NYL-RESTORE-INCARNATIONS', 'warning', `the restore brings back incarnation ${uid} of ${unit}, which the state no longer had`, {
        env,
        unit,
        units: [unit],
        incarnation: 'resurrected',
        as: resurrectedAs(r.after, unit, owned.has(unit)),
        data: { uid, as: resurrectedAs(r.after, unit, owned.has(unit)) },
      }),
    );
  }
  for (const [unit, uid] of Object.entries(r.dropped)) {
    out.push(
      diagnostic('NYL-RESTORE-INCARNATIONS', 'warning', `the restore drops incarnation ${uid} of ${unit}, which the restored commit does not have`, {
        env,
        unit,
        units: [unit],
        incarnation: 'dropped',
        data: { uid },
      }),
    );
  }
  return out;
}
