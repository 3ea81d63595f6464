/**
 * `nyl state init -e ENV [--fresh --reason]`: creates state.yaml on both state refs.
 * Running it again changes nothing and takes no lease. A missing local bare repository (path or
 * file://) is created with its parents; nothing else creates repositories.
 *
 * A state repository without state while the clone's known branches hold some (re-created empty,
 * or a new one configured) is refused: a plain init would start over silently. `--fresh` starts
 * over deliberately, on top of the known branches, so that they fast-forward.
 */
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { dirname } from 'node:path';
import { diagnostic, fail, NylError } from '../../errors/diagnostic';
import { formatIdentity } from '../../lease/lease';
import { withLease } from '../../lease/transaction';
import { type EnvironmentStateDoc, type StateEvent, newStateDoc, toYaml } from '../../state/documents';
import { describeLocation, type StateLocation } from '../../state/location';
import type { RefTransition } from '../../lease/publish';
import { readStateDoc } from '../../state/read';
import { gitDirOf } from '../../git/ref-files';
import type { RefSnapshot, StateStore } from '../../state/store';
import { transitionMessage } from '../../state/transition';
import { isoSeconds } from '../../util/clock';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, trailersOf } from '../shared/context';
import type { StateOperationReport } from '../../report/types';
import { divergedWarnings, stateOperationReport } from '../shared/report-base';
import { inactiveStateDiagnostic, stateRefsMoved } from './state-checks';

interface StateInitRequest extends EnvironmentRequest {
  fresh: boolean;
  reason?: string;
  waitMs?: number;
}

type Decision =
  | { kind: 'unchanged'; state: EnvironmentStateDoc }
  | { kind: 'write'; desired: EnvironmentStateDoc; observed: EnvironmentStateDoc; fresh: boolean };

async function createLocalRepository(rt: Runtime, loc: StateLocation): Promise<boolean> {
  if (loc.kind !== 'path') return false;
  const path = loc.localPath!;
  if (existsSync(path)) {
    refuseNonRepository(loc, path);
    return false;
  }
  mkdirSync(dirname(path), { recursive: true });
  // Built beside its place and renamed into it: a concurrent init never sees a half-made
  // repository, and of several creating it at once exactly one rename lands.
  const scratch = mkdtempSync(`${path}.creating-`);
  try {
    await rt.git.text(dirname(path), ['init', '--bare', '--quiet', scratch]);
    renameSync(scratch, path);
    return true;
  } catch (e) {
    if (!existsSync(path)) throw e;
    refuseNonRepository(loc, path); // another init created it first
    return false;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

function refuseNonRepository(loc: StateLocation, path: string): void {
  if (gitDirOf(path)) return;
  fail('NYL-STATE-UNAVAILABLE', `${path} exists but is not a Git repository`, {
    env: loc.environment,
    fix: `point the Environment ${loc.environment} at a Git repository, or remove ${path} so that state init creates one`,
  });
}

/**
 * Refuses when the clone's known branches hold state the state repository lacks (a plain init
 * would start over silently, abandoning it): NYL-STATE-DIVERGED naming `state move` and `--fresh`.
 */
function refuseKnownState(loc: StateLocation, known: RefSnapshot): void {
  if (known.size === 0) return;
  const refs = [...known.keys()];
  fail(
    'NYL-STATE-DIVERGED',
    `the state repository ${loc.url ?? ''} holds no ${refs.join(' or ')} for ${loc.environment}, but the clone's known branch${refs.length > 1 ? 'es hold' : ' holds'} its state (was the repository re-created empty?); nothing was written`,
    { env: loc.environment, ref: refs[0], init: true },
  );
}

/** The known branches a --fresh init continues (their commits made usable); refused without --fresh. */
async function knownStateToContinue(opened: OpenedEnvironment, refs: RefSnapshot, req: { fresh: boolean }): Promise<RefSnapshot> {
  const known = await opened.local.knownStateBeyond(refs);
  if (!req.fresh) refuseKnownState(opened.loc, known);
  await opened.local.adoptKnownBranches(known);
  return known;
}

function decide(
  loc: StateLocation,
  desired: EnvironmentStateDoc | undefined,
  observed: EnvironmentStateDoc | undefined,
  req: { fresh: boolean; template?: string | undefined },
  event: StateEvent,
  continued = false,
): Decision {
  const env = loc.environment;
  if (desired && desired.environment !== env) {
    fail('NYL-SOURCE-INVALID', `the state refs already hold the state of environment ${desired.environment}, not ${env}`, {
      env,
      fix: `give ${env} its own state.desiredRef and state.observedRef, or a state.path, in its Environment`,
    });
  }
  // Moved state stays where it went; deleted state comes back only --fresh. (A known branch's
  // copy describes another location: a --fresh init here continues it whatever it says.)
  if (desired && !continued) {
    const inactive = inactiveStateDiagnostic(env, desired, loc, { template: req.template });
    if (inactive && (inactive.code === 'NYL-STATE-MOVED' || !req.fresh)) throw new NylError(inactive);
  }
  if (desired && !req.fresh) {
    if (observed && observed.generation === desired.generation && observed.status === desired.status) {
      return { kind: 'unchanged', state: desired };
    }
    // The observed ref lacks its copy (an init interrupted by hand, a ref restored): complete it.
    return { kind: 'write', desired, observed: desired, fresh: false };
  }
  if (!desired) {
    // The prefix is recorded so that a later change of it alone is refused until the state moves.
    const doc = { ...newStateDoc(env, event), coordinationRefPrefix: loc.coordinationPrefix };
    return { kind: 'write', desired: doc, observed: doc, fresh: false };
  }
  const generation = Math.max(desired.generation, observed?.generation ?? 0) + 1;
  const doc: EnvironmentStateDoc = {
    ...desired,
    generation,
    status: 'active',
    coordinationRefPrefix: loc.coordinationPrefix,
    events: [...desired.events, { ...event, type: 'fresh', generation }],
  };
  delete doc.movedTo;
  return { kind: 'write', desired: doc, observed: doc, fresh: true };
}

/** state.yaml on both refs (one commit when they are the same ref); a known branch continued is the parent. */
function initTransitions(
  opened: OpenedEnvironment,
  refs: RefSnapshot,
  known: RefSnapshot,
  decision: Extract<Decision, { kind: 'write' }>,
  req: { reason?: string },
): RefTransition[] {
  const { loc } = opened;
  const body = { operation: 'state-init', generation: decision.desired.generation, ...(decision.fresh ? { fresh: true } : {}) };
  const message = transitionMessage(loc.environment, body, trailersOf(opened, req.reason));
  const transition = (ref: string, doc: EnvironmentStateDoc): RefTransition => {
    const parent = known.get(ref);
    return { ref, base: refs.get(ref), ...(parent ? { parent } : {}), changes: new Map([['state.yaml', toYaml(doc)]]), message };
  };
  const transitions = [transition(loc.desiredRef, decision.desired)];
  if (loc.observedRef !== loc.desiredRef) transitions.push(transition(loc.observedRef, decision.observed));
  return transitions;
}

/** state.yaml of both refs: as the state repository has them, else as a known branch continued has them. */
async function readDocs(store: StateStore, refs: RefSnapshot, known: RefSnapshot) {
  const at = (ref: string) => refs.get(ref) ?? known.get(ref);
  const { desiredRef, observedRef } = store.loc;
  return Promise.all([readStateDoc(store.reader, store.loc, desiredRef, at(desiredRef)), readStateDoc(store.reader, store.loc, observedRef, at(observedRef))]);
}

/** The known branches still missing from the state repository at these refs. */
function stillMissing(known: RefSnapshot, refs: RefSnapshot): RefSnapshot {
  return new Map([...known].filter(([ref]) => !refs.has(ref)));
}

export async function stateInit(rt: Runtime, req: StateInitRequest): Promise<StateOperationReport> {
  const opened = await openEnvironment(rt, req, { writes: true, renders: false });
  try {
    // A missing repository holds nothing: refuse before creating it, so that a refusal changes nothing.
    if (!req.fresh && opened.loc.kind === 'path' && !existsSync(opened.loc.localPath!))
      refuseKnownState(opened.loc, await opened.local.knownStateBeyond(new Map()));
    const created = await createLocalRepository(rt, opened.loc);
    return await stateInitOpened(rt, opened, req, created);
  } finally {
    opened.close();
  }
}

/** state init on an opened environment (its repository exists, or was just created). */
export async function stateInitOpened(
  rt: Runtime,
  opened: OpenedEnvironment,
  req: Omit<StateInitRequest, keyof EnvironmentRequest>,
  created = false,
): Promise<StateOperationReport> {
  const { loc, store } = opened;
  const author = opened.author!;
  const envName = loc.environment;
  await store.ensureOpen();
  const location = { ...describeLocation(loc, store.localRepository), ...(created ? { created: 'true' } : {}) };
  const report = stateOperationReport('state-init', envName, { location });
  const now = rt.clock.now();
  const event: StateEvent = { type: 'initialized', at: isoSeconds(now), by: formatIdentity(author) };
  if (req.reason) event.reason = req.reason;

  const decideAt = async (refs: RefSnapshot, known: RefSnapshot) => {
    const [desired, observed] = await readDocs(store, refs, known);
    return decide(loc, desired, observed, { fresh: req.fresh, template: opened.env.instance?.template }, event, known.has(loc.desiredRef));
  };
  // State init usually finds no state refs: read them in the way that costs no extra round trip then.
  const first = await store.snapshot({ stateMayBeMissing: true });
  const known = await knownStateToContinue(opened, first, req);
  const initial = await decideAt(first, known);
  await opened.local.requireNoUnpublishedWork(first);
  if (initial.kind === 'unchanged') {
    report.desired = first.get(loc.desiredRef);
    report.observed = first.get(loc.observedRef);
    report.details.state = { generation: initial.state.generation, status: initial.state.status };
    report.notes.push(diagnostic('NYL-UNCHANGED', 'note', `the state of ${envName} already exists; nothing changed`, { env: envName }));
    await opened.local.syncKnownBranches(first);
    return report;
  }

  return await withLease(rt, store, leaseOptionsOf(rt, opened, 'state-init', { initial: first, waitMs: req.waitMs }), async (tx) => {
    // Decide again on what the lease protects when the state refs moved: another init may have
    // landed while we waited.
    const refs = tx.snapshot;
    const continued = stillMissing(known, refs);
    const decision = stateRefsMoved(loc, first, refs) ? await decideAt(refs, continued) : initial;
    if (decision.kind === 'unchanged') {
      await tx.end('nothing-to-write');
      report.desired = refs.get(loc.desiredRef);
      report.observed = refs.get(loc.observedRef);
      return report;
    }
    const published = await tx.publish(initTransitions(opened, refs, continued, decision, req));
    report.result = 'done';
    report.desired = published.commits.get(loc.desiredRef) ?? published.refs.get(loc.desiredRef);
    report.observed = published.commits.get(loc.observedRef) ?? published.refs.get(loc.observedRef);
    report.details.state = { generation: decision.desired.generation, status: decision.desired.status, fresh: decision.fresh };
    report.warnings.push(...divergedWarnings(envName, await opened.local.syncKnownBranches(published.refs)));
    return report;
  });
}
