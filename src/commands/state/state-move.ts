/**
 * `nyl state move -e ENV [--from URL|NAME|local] [--desired-ref R] [--observed-ref R]
 * [--state-path P] [--coordination-refs P]`: moves an environment's state to the location its
 * Environment configures now. The options name the old location; each defaults to the
 * configured value.
 *
 * In two steps, each a lease transaction of its own location, so that a move killed anywhere
 * completes when run again:
 * 1. Under the old location's lease, one commit per old state ref marks state.yaml `moved`
 *    (`movedTo`, a `moved` event): from then on every command pointed there refuses with
 *    NYL-STATE-MOVED. The history of its state refs stays there for audit.
 * 2. Under the new location's lease, one commit per new state ref continues the old history:
 *    its parents are the ref's current tip (if any) and the old ref's marked commit, so every old
 *    commit is an ancestor of the new tips and nothing is rewritten or force-pushed. The
 *    environment's files are copied as they are (units keep uids, receipts and conditions), and
 *    the old location's run and evidence refs are copied under the new prefix in the same atomic
 *    push, so the next importer there finds what a dead run left; then they go at the old one.
 * A second run finds the old location marked (step 1 done) or the new one continuing it (done).
 *
 * A move of the coordination prefix alone has one state.yaml at both ends: it is one transaction
 * under the old lease that records the new prefix in state.yaml (so commands still configured
 * with the old prefix refuse) and copies the run refs.
 *
 * The new location must hold no state of the environment, unless that state is already in the
 * old location's history (its tips are ancestors of the old tips): moving back to a location the
 * state once left, or publishing a clone's branches that continue the remote's.
 */
import { existsSync } from 'node:fs';
import { fail, NylError } from '../../errors/diagnostic';
import type { RefUpdate } from '../../git/refs';
import type { RefTransition } from '../../lease/publish';
import { withLease } from '../../lease/transaction';
import type { StateOperationReport } from '../../report/types';
import type { EnvironmentStateDoc, StateEvent } from '../../state/documents';
import { toYaml } from '../../state/documents';
import {
  coordinationNamespace,
  describeEnd,
  isCheckoutOrigin,
  localLocation,
  locationMovedFrom,
  type MoveFrom,
  sameLocation,
  type StateLocation,
  statePathOf,
  stateRefsOf,
} from '../../state/location';
import { continuedAt, markedMoved, type MoveEnds, movedEvent } from './state-move-documents';
import { readStateDoc } from '../../state/read';
import type { LocalState } from '../../state/local-state';
import type { RefSnapshot, StateStore } from '../../state/store';
import { transitionMessage } from '../../state/transition';
import { cacheRoot } from '../../util/cache-dir';
import { isoSeconds } from '../../util/clock';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, trailersOf } from '../shared/context';
import { stateOperationReport } from '../shared/report-base';
import { inactiveStateDiagnostic } from './state-checks';

interface StateMoveRequest extends EnvironmentRequest, MoveFrom {
  reason?: string;
  waitMs?: number;
}

type MoveOptions = Pick<StateMoveRequest, 'reason' | 'waitMs'>;

/** Both ends of a move, opened. */
interface Move {
  opened: OpenedEnvironment;
  old: StateStore;
  /** The old location's known branches and --local work. */
  oldLocal: LocalState;
  ends: MoveEnds;
  options: MoveOptions;
}

export async function stateMove(rt: Runtime, req: StateMoveRequest): Promise<StateOperationReport> {
  const opened = await openEnvironment(rt, req, { writes: true, renders: false });
  let old: StateStore | undefined;
  try {
    // Only a checkout opens a second location; an in-process caller without one is a programming error.
    if (!opened.checkout || !opened.openStoreAt) throw new Error('state move needs an environment opened from a checkout (openEnvironment)');
    const oldLoc = await oldLocationOf(rt, opened, req);
    if (sameLocation(oldLoc, opened.loc, opened.checkout.workTree)) refuseNothingToMove(opened.loc);
    const opening = opened.openStoreAt(oldLoc);
    old = opening.store;
    const move: Move = {
      opened,
      old,
      oldLocal: opening.local,
      ends: { from: describeEnd(oldLoc), to: describeEnd(opened.loc) },
      options: { ...(req.reason ? { reason: req.reason } : {}), ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}) },
    };
    return await stateMoveOpened(rt, move);
  } finally {
    old?.close();
    opened.close();
  }
}

/**
 * The old location the options name. `--from local` names the local state: where `--local` runs
 * of the configured location commit. For a remote that is not the checkout's origin that is its
 * cache repository's own branches, once a --local command made them there; otherwise (the clone,
 * origin, and the state a clone held before a repository was configured) the clone's own branches.
 */
async function oldLocationOf(rt: Runtime, opened: OpenedEnvironment, req: StateMoveRequest): Promise<StateLocation> {
  const checkout = opened.checkout!;
  const named = locationMovedFrom(opened.project, opened.loc, req, checkout);
  if (req.from !== 'local' || opened.loc.kind !== 'remote' || isCheckoutOrigin(opened.loc, checkout)) return named;
  // Every command creates a remote's cache repository on first use; the move may be the first.
  await opened.store.ensureOpen();
  if (!(await opened.local.cacheHasBranch(named.desiredRef))) return named;
  const { environment, desiredRef, observedRef, statePath, coordinationPrefix } = named;
  return localLocation({ ...opened.loc, environment, desiredRef, observedRef, statePath, coordinationPrefix }, checkout, cacheRoot(rt.env));
}

function refuseNothingToMove(loc: StateLocation): never {
  fail('NYL-USAGE', `nothing to move: the old location of ${loc.environment} is the configured one, ${describeEnd(loc)}`, {
    fix: `name where the state was with --from (a URL, a GitRepository or local), --desired-ref, --observed-ref, --state-path or --coordination-refs: \`nyl state move -e ${loc.environment} --from <old repository>\``,
  });
}

async function stateMoveOpened(rt: Runtime, move: Move): Promise<StateOperationReport> {
  const { opened, old, ends } = move;
  const report = stateOperationReport('state-move', opened.env.name, { from: ends.from, to: ends.to });
  await old.ensureOpen();
  requireDestinationRepository(opened.loc);
  await opened.store.ensureOpen();
  if (sameStateFile(move)) return moveInPlace(rt, move, report);
  const oldRefs = await old.snapshot();
  const oldState = await readStateDoc(old.reader, old.loc, old.loc.desiredRef, oldRefs.get(old.loc.desiredRef));
  const movedHere = oldState?.status === 'moved' && oldState.movedTo === ends.to;
  if (!movedHere) {
    requireMovable(old.loc, oldState, ends);
    // Checked before the old location is marked, so that a refusal changes nothing. A new
    // location that already continues the old history (a second `--from local`) is done.
    if ((await destinationOf(move, oldRefs)) === 'continues') return alreadyMoved(move, report, await opened.store.snapshot());
  }
  const marked = movedHere ? oldRefs : await markOld(rt, move, oldRefs);
  return continueAtNew(rt, move, marked, report);
}

/**
 * A move of the prefix alone: both ends are the same state.yaml (the same repository, however its
 * URL is spelled, the same refs and path).
 */
function sameStateFile(move: Move): boolean {
  const { old } = move;
  const loc = move.opened.loc;
  return sameLocation(old.loc, { ...loc, coordinationPrefix: old.loc.coordinationPrefix }, move.opened.checkout!.workTree);
}

/** A move creates no repository (only `state init` does): a missing one is named with its fix. */
function requireDestinationRepository(loc: StateLocation): void {
  if (loc.kind !== 'path' || existsSync(loc.localPath!)) return;
  fail('NYL-STATE-UNAVAILABLE', `the new state repository ${loc.localPath} of ${loc.environment} does not exist: a move creates no repository`, {
    env: loc.environment,
    fix: `create it with \`git init --bare ${loc.localPath}\`, then run the move again`,
  });
}

/** The old location must hold active state; a location moved elsewhere or deleted says where to go. */
function requireMovable(loc: StateLocation, state: EnvironmentStateDoc | undefined, ends: MoveEnds): asserts state is EnvironmentStateDoc {
  if (!state) {
    fail('NYL-STATE-MISSING', `the old location ${ends.from} holds no state of ${loc.environment}`, {
      env: loc.environment,
      oldLocation: true,
    });
  }
  // The same ref names in another repository (the clone's branches of another environment's
  // state): moving them would copy that environment's history and mark its branches.
  if (state.environment !== loc.environment) {
    fail(
      'NYL-STATE-MISSING',
      `the old location ${ends.from} holds no state of ${loc.environment}: its state.yaml is the state of environment ${state.environment}; nothing was changed`,
      {
        env: loc.environment,
        oldLocation: true,
      },
    );
  }
  const inactive = inactiveStateDiagnostic(loc.environment, state, loc);
  if (inactive) throw new NylError(inactive);
}

/** The old refs each new state ref continues: desired from desired, observed from observed. */
function pairs(move: Move, oldRefs: RefSnapshot): Array<{ ref: string; oldRef: string; oldTip: string }> {
  const { loc } = move.opened;
  const list = [{ ref: loc.desiredRef, oldRef: move.old.loc.desiredRef }];
  if (loc.observedRef !== loc.desiredRef) list.push({ ref: loc.observedRef, oldRef: move.old.loc.observedRef });
  return list.map((p) => ({ ...p, oldTip: oldRefs.get(p.oldRef)! })).filter((p) => p.oldTip !== undefined);
}

/**
 * What the new location holds of the environment, judged against the old tips:
 * - `continues`: its tips descend from the old ones and its state is active: the move is done;
 * - `free`: no state.yaml, or only state the old history already has (moving back to a location
 *   the state once left; a clone's branches that continue the remote's);
 * anything else refuses with NYL-STATE-MOVE-DESTINATION.
 */
async function destinationOf(move: Move, oldRefs: RefSnapshot, refs?: RefSnapshot): Promise<'continues' | 'free'> {
  const { store, loc } = move.opened;
  const now = refs ?? (await store.snapshot());
  const state = await readStateDoc(store.reader, loc, loc.desiredRef, now.get(loc.desiredRef));
  if (!state) return 'free';
  const list = pairs(move, oldRefs);
  await store.importObjects(
    move.old,
    list.map((p) => p.oldTip),
  );
  const tips = list.map((p) => ({ ...p, tip: now.get(p.ref) }));
  const continues = state.status === 'active' && (await everyTrue(tips.map((t) => (t.tip ? store.isAncestor(t.oldTip, t.tip) : Promise.resolve(false)))));
  if (continues) return 'continues';
  if (await everyTrue(tips.map((t) => (t.tip ? store.isAncestor(t.tip, t.oldTip) : Promise.resolve(true))))) return 'free';
  fail(
    'NYL-STATE-MOVE-DESTINATION',
    `the new location ${move.ends.to} already holds state of ${loc.environment} that the old location's history does not have`,
    {
      env: loc.environment,
      data: { status: state.status, desired: now.get(loc.desiredRef) ?? null },
    },
  );
}

async function everyTrue(checks: Promise<boolean>[]): Promise<boolean> {
  return (await Promise.all(checks)).every(Boolean);
}

/** Step 1: under the old location's lease, state.yaml there says where the state went. */
async function markOld(rt: Runtime, move: Move, oldRefs: RefSnapshot): Promise<RefSnapshot> {
  const { opened, old, ends } = move;
  await move.oldLocal.requireNoUnpublishedWork(oldRefs);
  const lease = leaseOptionsOf(rt, opened, 'state-move', { initial: oldRefs, waitMs: move.options.waitMs });
  return withLease(rt, old, lease, async (tx) => {
    const refs = tx.snapshot;
    const state = await readStateDoc(old.reader, old.loc, old.loc.desiredRef, refs.get(old.loc.desiredRef));
    if (state?.status === 'moved' && state.movedTo === ends.to) {
      await tx.end('nothing-to-write');
      return refs;
    }
    requireMovable(old.loc, state, ends);
    const transitions = await stateYamlTransitions(rt, move, refs, state, { to: ends.to }, markedMoved);
    const published = await tx.publish(transitions);
    await move.oldLocal.syncKnownBranches(published.refs);
    return published.refs;
  });
}

/**
 * One commit per old state ref that rewrites only its state.yaml with the move's event (`state`
 * is the desired ref's copy, already read; the observed ref's is read here).
 */
async function stateYamlTransitions(
  rt: Runtime,
  move: Move,
  refs: RefSnapshot,
  state: EnvironmentStateDoc,
  body: { from?: string; to?: string },
  rewrite: (doc: EnvironmentStateDoc, event: StateEvent) => EnvironmentStateDoc,
): Promise<RefTransition[]> {
  const { old, opened, ends } = move;
  const event = movedEvent(ends, isoSeconds(rt.clock.now()), trailersOf(opened, undefined).requestedBy!, move.options.reason);
  const message = moveMessage(move, { operation: 'state-move', ...body });
  return Promise.all(
    stateRefsOf(old.loc).map(async (ref) => {
      const doc = ref === old.loc.desiredRef ? state : ((await readStateDoc(old.reader, old.loc, ref, refs.get(ref))) ?? state);
      return { ref, base: refs.get(ref), changes: new Map([['state.yaml', toYaml(rewrite(doc, event))]]), message };
    }),
  );
}

function moveMessage(move: Move, body: { operation: string; from?: string; to?: string }): string {
  return transitionMessage(move.opened.env.name, body, trailersOf(move.opened, move.options.reason));
}

/** Step 2: under the new location's lease, its state refs continue the old marked history. */
async function continueAtNew(rt: Runtime, move: Move, marked: RefSnapshot, report: StateOperationReport): Promise<StateOperationReport> {
  const { opened, old } = move;
  const store = opened.store;
  const list = pairs(move, marked);
  const carried = carriedRefs(move, marked);
  await store.importObjects(old, [...list.map((p) => p.oldTip), ...carried.map((c) => c.oid)]);
  const first = await store.snapshot();
  if ((await destinationOf(move, marked, first)) === 'continues') return alreadyMoved(move, report, first);
  const lease = leaseOptionsOf(rt, opened, 'state-move', { initial: first, waitMs: move.options.waitMs });
  return withLease(rt, store, lease, async (tx) => {
    if ((await destinationOf(move, marked, tx.snapshot)) === 'continues') {
      await tx.end('nothing-to-write');
      return alreadyMoved(move, report, tx.snapshot);
    }
    const transitions = await Promise.all(list.map((p) => continuation(move, p, tx.snapshot.get(p.ref))));
    const published = await tx.publish(transitions, () => carried.map((c) => ({ ref: c.ref, expect: null, to: c.oid }) satisfies RefUpdate));
    report.result = 'done';
    await move.opened.local.syncKnownBranches(published.refs);
    await dropCarried(move, carried);
    return finished(
      report,
      opened.loc,
      published.refs,
      carried.map((c) => c.ref),
    );
  });
}

/**
 * The new location continues the old history: nothing to write. Copies of carried refs that a
 * move killed after its push left at the old location go, where the new one still holds them,
 * and the clone's known branches follow the new location (with `--from local` they still carry
 * the mark).
 */
async function alreadyMoved(move: Move, report: StateOperationReport, refs: RefSnapshot): Promise<StateOperationReport> {
  const left = carriedRefs(move, await move.old.snapshot()).filter((c) => refs.get(c.ref) === c.oid);
  await dropCarried(move, left);
  await move.opened.local.syncKnownBranches(refs);
  return finished(report, move.opened.loc, refs, []);
}

function finished(report: StateOperationReport, loc: StateLocation, refs: RefSnapshot, carried: string[]): StateOperationReport {
  const desired = refs.get(loc.desiredRef);
  const observed = refs.get(loc.observedRef);
  if (desired) report.desired = desired;
  if (observed) report.observed = observed;
  report.details.carried = carried;
  return report;
}

/**
 * The old location's run and evidence refs, under the new prefix: what a dead run left there is
 * imported at the new location. Refs whose name does not change (same repository and prefix)
 * stay as they are.
 */
function carriedRefs(move: Move, oldRefs: RefSnapshot): Array<{ from: string; ref: string; oid: string }> {
  const from = coordinationNamespace(move.old.loc);
  const to = coordinationNamespace(move.opened.loc);
  const sameRepository = move.old.localRepository === move.opened.store.localRepository && move.old.loc.pushURL === move.opened.loc.pushURL;
  if (sameRepository && from === to) return [];
  const out: Array<{ from: string; ref: string; oid: string }> = [];
  for (const [ref, oid] of oldRefs) {
    const rest = ref.startsWith(from) ? ref.slice(from.length) : undefined;
    if (rest !== undefined && (rest.startsWith('runs/') || rest.startsWith('evidence/'))) out.push({ from: ref, ref: `${to}${rest}`, oid });
  }
  return out;
}

/**
 * Once the new location holds them, the old location's copies of the carried refs go: nothing
 * reads a moved location, and a clone's own refs left behind by `--from local` would read as
 * unpublished local work. Each is deleted only as it was carried (the same id), and only one
 * the new location is known to hold: the refs of a later `--local` run are never touched. A
 * deletion that fails is left for the next move: the copies are at the new location either way.
 */
async function dropCarried(move: Move, carried: Array<{ from: string; oid: string }>): Promise<void> {
  if (carried.length === 0) return;
  await move.old.write(carried.map((c) => ({ ref: c.from, expect: c.oid, to: null })));
}

/**
 * One new commit continuing the old marked tip: the environment's files as the old location has
 * them (state.yaml active again), on top of the ref's current tip when it exists (environments
 * sharing the ref keep their files), with the old tip as a further parent.
 */
async function continuation(move: Move, pair: { ref: string; oldTip: string }, base: string | undefined): Promise<RefTransition> {
  const files = await environmentFiles(move, pair.oldTip);
  const message = moveMessage(move, { operation: 'state-move', from: move.ends.from });
  if (base === undefined) return { ref: pair.ref, base, parent: pair.oldTip, clearTree: true, changes: files, message };
  // The environment's directory is replaced whole: `units` first goes, then every unit file comes.
  const changes = new Map<string, string | Buffer | null>([['units', null], ...files]);
  return { ref: pair.ref, base, ...(base === pair.oldTip ? {} : { merges: [pair.oldTip] }), changes, message };
}

/** state.yaml (continued) and every unit file of the environment at an old commit, relative to its directory. */
async function environmentFiles(move: Move, commit: string): Promise<Map<string, string | Buffer>> {
  const { old, opened } = move;
  const doc = await readStateDoc(old.reader, old.loc, old.loc.desiredRef, commit);
  const event = doc!.events[doc!.events.length - 1]!;
  const files = new Map<string, string | Buffer>([['state.yaml', toYaml(continuedAt(doc!, event, opened.loc.coordinationPrefix))]]);
  const units = (await old.reader.readTree(`${commit}:${statePathOf(old.loc, 'units')}`)) ?? [];
  const blobs = units.filter((e) => e.type === 'blob');
  const contents = await old.reader.readMany(blobs.map((e) => e.oid));
  blobs.forEach((e, i) => files.set(`units/${e.name}`, contents[i]!.content));
  return files;
}

/**
 * A move of the coordination prefix alone: one commit per state ref records the new prefix in
 * state.yaml and the run refs are copied, in one atomic push under the old lease.
 */
async function moveInPlace(rt: Runtime, move: Move, report: StateOperationReport): Promise<StateOperationReport> {
  const { opened, old, ends } = move;
  const refs0 = await old.snapshot();
  const state0 = await readStateDoc(old.reader, old.loc, old.loc.desiredRef, refs0.get(old.loc.desiredRef));
  if (state0?.coordinationRefPrefix === opened.loc.coordinationPrefix) return finished(report, opened.loc, refs0, []);
  requireMovable(old.loc, state0, ends);
  await move.oldLocal.requireNoUnpublishedWork(refs0);
  return withLease(rt, old, leaseOptionsOf(rt, opened, 'state-move', { initial: refs0, waitMs: move.options.waitMs }), async (tx) => {
    const refs = tx.snapshot;
    const state = await readStateDoc(old.reader, old.loc, old.loc.desiredRef, refs.get(old.loc.desiredRef));
    requireMovable(old.loc, state, ends);
    const prefix = opened.loc.coordinationPrefix;
    const transitions = await stateYamlTransitions(rt, move, refs, state, { from: ends.from, to: ends.to }, (doc, event) => continuedAt(doc, event, prefix));
    const carried = carriedRefs(move, refs);
    const published = await tx.publish(transitions, () =>
      carried.flatMap((c) => [
        { ref: c.ref, expect: null, to: c.oid },
        { ref: c.from, expect: c.oid, to: null },
      ]),
    );
    report.result = 'done';
    await opened.local.syncKnownBranches(published.refs);
    return finished(
      report,
      opened.loc,
      published.refs,
      carried.map((c) => c.ref),
    );
  });
}
