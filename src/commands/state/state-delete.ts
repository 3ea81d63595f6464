/**
 * `nyl state delete -e ENV --reason R [--teardown [--allow-dependents] [--allow-incomplete]
 * [--source REV]]`: removes an environment's state once no unit has an incarnation left.
 *
 * One commit per state ref, operation `state-delete`, removes every file of the environment's
 * directory but state.yaml, which it leaves with `status: deleted` and a `state-deleted` event.
 * The state refs and their history stay; on refs shared through `path` only this directory
 * changes. The environment's evidence and signal refs are deleted in the same atomic push, which
 * releases the lease. Refusals (./state-delete-checks.ts) change nothing.
 *
 * --teardown first runs `nyl teardown --all` through the injected TeardownAll, which takes and
 * releases the lease itself, then decides (./state-delete-verdict.ts) whether to go on to the
 * deletion, which takes the lease again and checks the state anew.
 */
import { fail, NylError } from '../../errors/diagnostic';
import { brokenError, formatIdentity, readLease } from '../../lease/lease';
import { leaseStatus, leaseTiming } from '../../lease/record';
import type { RefTransition } from '../../lease/publish';
import { type LeaseTransaction, withLease } from '../../lease/transaction';
import type { RefUpdate } from '../../git/refs';
import type { ReconcileReport, StateOperationReport } from '../../report/types';
import { type EnvironmentStateDoc, type StateEvent, toYaml } from '../../state/documents';
import { evidencePrefix, signalsPrefix, type StateLocation, stateRefsOf, unimportedRuns } from '../../state/location';
import { type EnvironmentStateView, readEnvironmentState } from '../../state/read';
import type { RefSnapshot, StateStore } from '../../state/store';
import { transitionMessage } from '../../state/transition';
import { isoSeconds } from '../../util/clock';
import { byCodeUnits } from '../../util/compare';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, trailersOf } from '../shared/context';
import { divergedWarnings, stateOperationReport } from '../shared/report-base';
import { refuseBlocked, refuseUnclaimed, unclaimedRemovals, unitBlockers } from './state-delete-checks';
import { removedByTeardown, summarizeIncomplete, teardownVerdict, verdictErrors } from './state-delete-verdict';
import { liveHolder, requireActive, type StateRead, stateUnderLease } from './state-checks';

/** What `state delete --teardown` hands on to `nyl teardown --all`. */
interface TeardownAllOptions {
  reason?: string;
  waitMs?: number;
  allowDependents: boolean;
  allowIncomplete: boolean;
}

/**
 * `nyl teardown -e ENV --all` on an opened environment (rendered at --source when given): a run
 * that takes and releases the lease itself, records a teardown request for every unit and carries
 * it out, consumers first. Returns its ReconcileReport (operation `teardown`); throws NylError for
 * a refusal before it ran. Injected by the CLI, so that state delete does not depend on how
 * teardown is built.
 */
export type TeardownAll = (rt: Runtime, opened: OpenedEnvironment, options: TeardownAllOptions) => Promise<ReconcileReport>;

interface StateDeleteOptions {
  reason?: string;
  waitMs?: number;
  teardown: boolean;
  allowDependents: boolean;
  allowIncomplete: boolean;
}

interface StateDeleteRequest extends EnvironmentRequest, StateDeleteOptions {}

/** Option checks, before anything is read: the teardown's options need --teardown; a reason is required. */
function checkUsage(req: StateDeleteOptions & { source?: string }): void {
  const stray = [req.allowDependents && '--allow-dependents', req.allowIncomplete && '--allow-incomplete', req.source !== undefined && '--source'].filter(
    (o): o is string => typeof o === 'string',
  );
  if (!req.teardown && stray.length > 0) {
    fail(
      'NYL-USAGE',
      `${stray.join(', ')} ${stray.length === 1 ? 'applies' : 'apply'} to the teardown and ${stray.length === 1 ? 'needs' : 'need'} --teardown`,
      { fix: `pass --teardown, or leave out ${stray.join(' and ')}` },
    );
  }
  if (!req.reason?.trim())
    fail('NYL-REASON-REQUIRED', 'deleting the state of an environment needs a --reason, recorded in its state-deleted event', {
      operation: 'nyl state delete',
    });
}

export async function stateDelete(rt: Runtime, req: StateDeleteRequest, teardownAll: TeardownAll): Promise<StateOperationReport> {
  checkUsage(req);
  // Only the teardown renders units: a plain delete reads HEAD, like the other state operations.
  const opened = await openEnvironment(rt, req, { writes: true, renders: req.teardown });
  try {
    return await stateDeleteOpened(rt, opened, req, teardownAll);
  } finally {
    opened.close();
  }
}

export async function stateDeleteOpened(
  rt: Runtime,
  opened: OpenedEnvironment,
  req: StateDeleteOptions,
  teardownAll: TeardownAll,
): Promise<StateOperationReport> {
  // Again for callers that open the environment themselves: a source override there is --source.
  checkUsage({ ...req, ...(opened.sourceOverride ? { source: opened.sourceCommit } : {}) });
  await opened.store.ensureOpen();
  const report = stateOperationReport('state-delete', opened.env.name);
  let first = await readActive(opened);
  if (req.teardown) {
    const after = await tearDownFirst(rt, opened, req, first, teardownAll, report);
    if (!after) return report;
    first = after;
  } else {
    await refuseBeforeLease(rt, opened, first);
  }
  const options = leaseOptionsOf(rt, opened, 'state-delete', { initial: first.refs, waitMs: req.waitMs });
  try {
    return await withLease(rt, opened.store, options, (tx) => deleteUnderLease(rt, opened, req, tx, first, report));
  } catch (error) {
    // After a teardown, a refusal keeps the teardown's report: it says what the teardown did.
    if (!(error instanceof NylError) || report.details.teardown === undefined) throw error;
    report.result = 'refused';
    report.errors.push(...error.diagnostics);
    return report;
  }
}

interface ActiveRead extends StateRead {
  generation: number;
}

/** The state as it is now: present, active, and without unpublished local work. */
async function readActive(opened: OpenedEnvironment): Promise<ActiveRead> {
  const { store, loc } = opened;
  const refs = await store.snapshot();
  const view = await readEnvironmentState(store.reader, loc, refs, store.cache);
  const generation = await requireActive(opened, { refs, view });
  await opened.local.requireNoUnpublishedWork(refs);
  return { refs, view, generation };
}

/**
 * Refuses before taking the lease what the lease would not change: blocking units, and the refs
 * of runs nobody runs any more. A broken lease's run is among them, so that the refusal names
 * `nyl recover -e ENV`, which imports it.
 */
async function refuseBeforeLease(rt: Runtime, opened: OpenedEnvironment, read: ActiveRead): Promise<void> {
  const runs = (await liveHolder(rt, opened, read.refs)) ? [] : unimportedRuns(opened.loc, read.refs);
  refuseBlocked(opened.env.name, unitBlockers(read.view, read.generation), runs);
}

/**
 * --teardown: refuses a broken lease first (its run is imported deliberately, with recover, not by
 * a decommission), runs the teardown unless nothing is left to tear down, and decides. Returns the
 * state to delete, or undefined when the command stops (the report then says why).
 */
async function tearDownFirst(
  rt: Runtime,
  opened: OpenedEnvironment,
  req: StateDeleteOptions,
  read: ActiveRead,
  teardownAll: TeardownAll,
  report: StateOperationReport,
): Promise<ActiveRead | undefined> {
  const lease = await readLease(opened.store, read.refs);
  // Broken as leaseStatus says: a live recover's carried break is its lease's holder at work.
  if (lease && leaseStatus(lease.record, rt.clock.now(), leaseTiming(opened.env.spec.lease).skewMs) === 'broken')
    throw brokenError(opened.env.name, lease, false);
  if (unitBlockers(read.view, read.generation).length === 0 && unimportedRuns(opened.loc, read.refs).length === 0) return read;
  // Before anything is torn down: a teardown that cannot claim its removal would fail, and its dependencies wait.
  if (!req.allowIncomplete) refuseUnclaimed(opened.env.name, unclaimedRemovals(read.view, read.generation, opened.drivers), optionsAgain(opened, req));
  const teardown = await teardownAll(rt, opened, teardownOptionsOf(req));
  report.details.teardown = teardown;
  report.warnings.push(...summarizeIncomplete(opened.env.name, teardown));
  const verdict = teardownVerdict(teardown);
  if (verdict.kind === 'delete') return readActive(opened);
  report.result = 'refused';
  report.errors.push(...verdictErrors(opened.env.name, teardown, verdict));
  return undefined;
}

/** The options of this command line a fix repeats besides --allow-incomplete: --allow-dependents, --source. */
function optionsAgain(opened: OpenedEnvironment, req: StateDeleteOptions): string[] {
  return [...(req.allowDependents ? ['--allow-dependents'] : []), ...(opened.sourceOverride ? [`--source ${opened.sourceCommit}`] : [])];
}

function teardownOptionsOf(req: StateDeleteOptions): TeardownAllOptions {
  return {
    allowDependents: req.allowDependents,
    allowIncomplete: req.allowIncomplete,
    ...(req.reason !== undefined ? { reason: req.reason } : {}),
    ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}),
  };
}

/** Under the lease: decide again on the state as it is now, then delete it in one push. */
async function deleteUnderLease(
  rt: Runtime,
  opened: OpenedEnvironment,
  req: StateDeleteOptions,
  tx: LeaseTransaction,
  first: StateRead,
  report: StateOperationReport,
): Promise<StateOperationReport> {
  const { loc, env } = opened;
  const refs = tx.snapshot;
  const view = await stateUnderLease(opened, first, refs);
  const generation = await requireActive(opened, { refs, view });
  // Under the lease no run lives any more: every run ref left waits for its import.
  refuseBlocked(env.name, unitBlockers(view, generation), unimportedRuns(loc, refs));
  const removed = removedUnits(view);
  // What the teardown removed is gone from the state read here: it counts as removed all the same.
  const counted = [...new Set([...removedByTeardown(report.details.teardown as ReconcileReport | undefined), ...removed])].sort(byCodeUnits);
  const transitions = await deletionTransitions(rt, opened, refs, view, removed, req.reason);
  const published = await tx.publish(transitions, () => coordinationDeletions(loc, refs));
  report.result = 'done';
  report.desired = published.commits.get(loc.desiredRef);
  report.observed = published.commits.get(loc.observedRef);
  report.details.removed = counted;
  report.warnings.push(...divergedWarnings(env.name, await opened.local.syncKnownBranches(published.refs)));
  return report;
}

/** Every unit whose file goes: desired and observed documents, held markers, released records. */
function removedUnits(view: EnvironmentStateView): string[] {
  return [...new Set([...view.desiredUnits.keys(), ...view.observedUnits.keys()])].sort(byCodeUnits);
}

/** The entries of the environment's directory on a state commit, state.yaml aside: each goes, a directory with all it holds. */
async function entriesToDelete(store: StateStore, commit: string | undefined): Promise<string[]> {
  if (!commit) return [];
  const dir = store.loc.statePath ? `${commit}:${store.loc.statePath}` : `${commit}^{tree}`;
  return ((await store.reader.readTree(dir)) ?? []).map((e) => e.name).filter((name) => name !== 'state.yaml');
}

/** state.yaml as the deletion leaves it: the deleted marker, read from state.yaml by every later command. */
function deletedStateDoc(state: EnvironmentStateDoc, event: StateEvent): EnvironmentStateDoc {
  return { ...state, status: 'deleted', events: [...state.events, event] };
}

/** One commit per state ref (one when both are the same ref): every file but state.yaml removed. */
async function deletionTransitions(
  rt: Runtime,
  opened: OpenedEnvironment,
  refs: RefSnapshot,
  view: EnvironmentStateView,
  removed: string[],
  reason: string | undefined,
): Promise<RefTransition[]> {
  const { loc, store, env } = opened;
  const event: StateEvent = { type: 'state-deleted', at: isoSeconds(rt.clock.now()), by: formatIdentity(opened.author!), ...(reason ? { reason } : {}) };
  const state = toYaml(deletedStateDoc(view.state!, event));
  const message = transitionMessage(env.name, { operation: 'state-delete', removed }, trailersOf(opened, reason));
  const stateRefs = stateRefsOf(loc);
  return Promise.all(
    stateRefs.map(async (ref) => {
      const base = refs.get(ref);
      const changes = new Map<string, string | null>((await entriesToDelete(store, base)).map((name) => [name, null]));
      changes.set('state.yaml', state);
      return { ref, base, changes, message };
    }),
  );
}

/** The environment's evidence and signal refs, deleted with the state (damaged/ refs stay for inspection). */
function coordinationDeletions(loc: StateLocation, refs: RefSnapshot): RefUpdate[] {
  const prefixes = [evidencePrefix(loc), signalsPrefix(loc)];
  return [...refs].filter(([ref]) => prefixes.some((p) => ref.startsWith(p))).map(([ref, oid]) => ({ ref, expect: oid, to: null }));
}
