/**
 * The state a command needs before it changes anything: present, not deleted, not moved. Also
 * the state under the lease, read again only when the state refs moved since the read before it.
 */
import { diagnostic, type Diagnostic, NylError, type Severity } from '../../errors/diagnostic';
import { findLiveRun, readLease } from '../../lease/lease';
import { leaseStatus, leaseTiming } from '../../lease/record';
import type { EnvironmentStateDoc } from '../../state/documents';
import type { StateLocation } from '../../state/location';
import { type EnvironmentStateView, readEnvironmentState } from '../../state/read';
import type { RefSnapshot } from '../../state/store';
import type { Runtime } from '../../util/runtime';
import type { OpenedEnvironment } from '../shared/context';

/** How an inactive state is reported: its severity, and what tells the ways forward apart. */
interface InactiveOptions {
  severity?: Severity;
  /** The clone's own branches hold the missing state (a remote was configured since): the way forward is moving it there, never starting over. */
  fromLocal?: boolean;
  /** The EnvironmentTemplate the environment is an instance of: there is no Environment in source to remove. */
  template?: string | undefined;
}

/** Missing, deleted or moved state: an error where a command refuses, a warning where it goes on. */
export function inactiveStateDiagnostic(
  envName: string,
  state: EnvironmentStateDoc | undefined,
  loc: StateLocation,
  options: InactiveOptions = {},
): Diagnostic | undefined {
  const { severity = 'error', fromLocal = false, template } = options;
  if (!state) return missingStateDiagnostic(envName, loc, severity, fromLocal);
  if (state.status === 'deleted') {
    const instance = template !== undefined ? `; ${envName} is an instance of EnvironmentTemplate ${template}` : '';
    return diagnostic('NYL-STATE-DELETED', severity, `the state of ${envName} was deleted with \`nyl state delete\`${instance}`, {
      env: envName,
      ...(template !== undefined ? { template } : {}),
    });
  }
  if (state.status === 'moved')
    return diagnostic('NYL-STATE-MOVED', severity, `the state of ${envName} moved to ${state.movedTo ?? 'another location'}`, {
      env: envName,
      movedTo: state.movedTo,
    });
  return otherPrefixDiagnostic(envName, state, loc, severity);
}

/**
 * State whose state.yaml records another coordination prefix than the configured one (state
 * init and state move record it): the lease and runs of this environment live under that
 * prefix, so a command under the configured one would run beside them. Either the state moved
 * away from the configured prefix (a checkout not updated since), or the configuration changed
 * before the state was moved (the fix then names the move).
 */
function otherPrefixDiagnostic(envName: string, state: EnvironmentStateDoc, loc: StateLocation, severity: Severity): Diagnostic | undefined {
  const prefix = state.coordinationRefPrefix;
  if (prefix === undefined || prefix === loc.coordinationPrefix) return undefined;
  const moves = state.events.filter((e) => e.type === 'moved');
  const movedAway = moves[moves.length - 1]?.from?.endsWith(`coordination ${loc.coordinationPrefix})`) === true;
  if (movedAway) {
    return diagnostic('NYL-STATE-MOVED', severity, `the coordination refs of ${envName} moved from ${loc.coordinationPrefix} to ${prefix}`, {
      env: envName,
      movedTo: `coordinationRefPrefix ${prefix}`,
    });
  }
  return diagnostic(
    'NYL-STATE-MOVED',
    severity,
    `the state of ${envName} is coordinated under ${prefix}, not under the configured ${loc.coordinationPrefix}: its lease and runs live there`,
    { env: envName, prefix },
  );
}

function missingStateDiagnostic(envName: string, loc: StateLocation, severity: Severity, fromLocal: boolean): Diagnostic {
  const local = fromLocal ? `; the clone's own branches hold its state` : '';
  return diagnostic('NYL-STATE-MISSING', severity, `${loc.desiredRef} of ${loc.url ?? 'the clone'} holds no state for ${envName}${local}`, {
    env: envName,
    ...(fromLocal ? { fromLocal: true } : {}),
  });
}

/** As inactiveStateDiagnostic, telling missing state apart from state the clone's own branches hold. */
export async function inactiveStateOf(
  opened: OpenedEnvironment,
  refs: RefSnapshot,
  state: EnvironmentStateDoc | undefined,
  severity: Severity = 'error',
): Promise<Diagnostic | undefined> {
  const fromLocal = !state && (await opened.local.knownStateBeyond(refs)).size > 0;
  return inactiveStateDiagnostic(opened.env.name, state, opened.loc, { severity, fromLocal, template: opened.env.instance?.template });
}

/** Returns the state's generation; refuses missing, deleted or moved state, naming the way forward. */
export async function requireActive(opened: OpenedEnvironment, read: StateRead): Promise<number> {
  const inactive = await inactiveStateOf(opened, read.refs, read.view.state);
  if (inactive) throw new NylError(inactive);
  return read.view.state!.generation;
}

/** The refs one read saw and the state read at them: a write under the lease decides on them unless they moved. */
export interface StateRead {
  refs: RefSnapshot;
  view: EnvironmentStateView;
}

/** Did a state ref move between two snapshots (coordination refs aside)? */
export function stateRefsMoved(loc: StateLocation, before: RefSnapshot, after: RefSnapshot): boolean {
  return after.get(loc.desiredRef) !== before.get(loc.desiredRef) || after.get(loc.observedRef) !== before.get(loc.observedRef);
}

/**
 * The state under the lease: the view read before taking it, unless a state ref moved since.
 * The lease decides on the refs it was given first, so most often nothing moved: no second read.
 */
export async function stateUnderLease(opened: OpenedEnvironment, first: StateRead, snapshot: RefSnapshot): Promise<EnvironmentStateView> {
  const { loc, store } = opened;
  return stateRefsMoved(loc, first.refs, snapshot) ? readEnvironmentState(store.reader, loc, snapshot, store.cache) : first.view;
}

/**
 * Does a live holder keep the environment (a live lease, a damaged one nobody can judge, or a live
 * run whose lease ref is gone)? Then its run refs are the lease's business: the lease waits for
 * it (--wait-lease) or refuses NYL-LEASE-HELD, and the run consumes its own ref when it ends.
 */
export async function liveHolder(rt: Runtime, opened: OpenedEnvironment, refs: RefSnapshot): Promise<boolean> {
  const { store, env } = opened;
  const lease = await readLease(store, refs);
  const now = rt.clock.now();
  const { skewMs } = leaseTiming(env.spec.lease);
  if (lease) return lease.damage !== undefined || leaseStatus(lease.record, now, skewMs) === 'live';
  return (await findLiveRun(store, refs, now, skewMs)) !== undefined;
}
