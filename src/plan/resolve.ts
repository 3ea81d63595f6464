/**
 * Pure resolution of an environment: project + state -> what each unit is now and what a
 * reconcile would do with it. No I/O. `nyl status` shows it; `nyl reconcile` starts from it and
 * re-resolves units as receipts arrive.
 */
import { type Diagnostic } from '../errors/diagnostic';
import { DRIVER_VERSIONS } from '../drivers/versions';
import { canonicalJson, executionKey } from '../project/execution-key';
import { dependencyOrder } from '../project/graph';
import { renderUnit } from '../project/render';
import { ownershipSet } from '../project/selectors';
import type { EnvironmentResource, Project, UnitResource } from '../project/types';
import type { DesiredUnitDoc, ObservedUnitDoc } from '../state/documents';

export type UnitPhase =
  /** The receipt's execution key equals the resolved one. */
  | 'current'
  /** No receipt yet: the next reconcile executes it. */
  | 'pending'
  /** A receipt for another execution key: the next reconcile executes it again. */
  | 'outdated'
  /** Waits for a dependency that will not get a current receipt by itself. */
  | 'blocked'
  | 'failed'
  | 'uncertain'
  | 'held'
  /** In state but no longer in the ownership set. */
  | 'leaving';

export interface Wait {
  pointer: string;
  unit: string;
  reason: string;
}

export interface ResolvedUnit {
  name: string;
  kind: string;
  unit?: UnitResource;
  desired?: DesiredUnitDoc;
  observed?: ObservedUnitDoc;
  phase: UnitPhase;
  /** The incarnation the unit has now (undefined: a new one starts at its first execution). */
  uid?: string;
  rendering?: Record<string, unknown>;
  executionKey?: string;
  waits: Wait[];
  errors: Diagnostic[];
  detail: string;
}

export interface ResolveInput {
  project: Project;
  env: EnvironmentResource;
  /** state.yaml generation: incarnations of older generations are over (--fresh). */
  generation: number;
  desired: Map<string, DesiredUnitDoc>;
  observed: Map<string, ObservedUnitDoc>;
  /** The source commit being resolved, named when a held unit's changes wait. */
  sourceCommit?: string;
}

export interface Resolution {
  /** Units of the ownership set in dependency order, then leaving units by name. */
  order: string[];
  units: Map<string, ResolvedUnit>;
}

/** The incarnation a unit keeps: its desired uid unless --fresh started a new generation. */
export function currentUid(desired: DesiredUnitDoc | undefined, generation: number): string | undefined {
  if (!desired?.uid) return undefined;
  if ((desired.generation ?? 1) < generation) return undefined;
  return desired.uid;
}

export function driverVersionOf(kind: string): string {
  return (DRIVER_VERSIONS as Record<string, string>)[kind] ?? `${kind.toLowerCase()}/1`;
}

/** Renders one unit against the outputs of current receipts and computes its execution key. */
export function resolveUnit(
  unit: UnitResource,
  env: EnvironmentResource,
  uid: string | undefined,
  outputsOf: (name: string) => Record<string, unknown> | undefined,
): Pick<ResolvedUnit, 'rendering' | 'executionKey' | 'waits' | 'errors'> {
  const waits: Wait[] = [];
  unit.declaredDependsOn.forEach((dep, i) => {
    if (outputsOf(dep) === undefined) waits.push({ pointer: `/dependsOn/${i}`, unit: dep, reason: 'no-current-receipt' });
  });
  const rendered = renderUnit(unit, env, outputsOf);
  if (!rendered.ok) {
    if ('errors' in rendered) return { waits, errors: rendered.errors };
    for (const w of rendered.waits) if (!waits.some((x) => x.unit === w.unit)) waits.push(w);
    return { waits, errors: [] };
  }
  if (waits.length > 0) return { waits, errors: [] };
  const out: Pick<ResolvedUnit, 'rendering' | 'executionKey' | 'waits' | 'errors'> = { rendering: rendered.rendering, waits, errors: [] };
  if (uid) out.executionKey = executionKey({ kind: unit.kind, rendering: rendered.rendering, uid, driverVersion: driverVersionOf(unit.kind) });
  return out;
}

/** "pending changes from COMMIT" when source now renders the held unit differently. */
function heldDetail(unit: UnitResource, input: ResolveInput, desired: DesiredUnitDoc, outputsOf: (name: string) => Record<string, unknown> | undefined): string {
  if (!desired.uid) return '';
  const now = resolveUnit(unit, input.env, desired.uid, outputsOf);
  const changed = now.rendering !== undefined && desired.rendering !== undefined && canonicalJson(now.rendering) !== canonicalJson(desired.rendering);
  if (changed && input.sourceCommit) return `pending changes from ${input.sourceCommit}`;
  if (desired.hold?.pending) return `pending changes from ${desired.hold.pending}`;
  return 'held';
}

export function formatWait(w: Wait): string {
  return `${w.pointer} waits for ${w.unit} (${w.reason})`;
}

/** Resolves every unit as it stands, without executing anything. */
export function resolveEnvironment(input: ResolveInput): Resolution {
  const owned = ownershipSet(input.project, input.env);
  const ownedNames = new Set(owned.map((u) => u.name));
  const graph = new Map(owned.map((u) => [u.name, { dependsOn: u.dependsOn.filter((d) => ownedNames.has(d)) }]));
  const order = dependencyOrder(graph);
  const units = new Map<string, ResolvedUnit>();
  const byName = new Map(owned.map((u) => [u.name, u]));

  const outputsOf = (name: string): Record<string, unknown> | undefined => {
    const r = units.get(name);
    if (!r) return undefined;
    if (r.phase === 'current' || (r.phase === 'held' && r.observed?.receipt)) return r.observed?.receipt?.outputs ?? {};
    return undefined;
  };

  for (const name of order) {
    const unit = byName.get(name)!;
    const desired = input.desired.get(name);
    const observed = input.observed.get(name);
    const uid = currentUid(desired, input.generation);
    const base: ResolvedUnit = { name, kind: unit.kind, unit, phase: 'pending', waits: [], errors: [], detail: '' };
    if (desired) base.desired = desired;
    if (observed) base.observed = observed;
    if (uid) base.uid = uid;

    if (desired?.lifecycle?.state === 'held') {
      base.phase = 'held';
      base.detail = heldDetail(unit, input, desired, outputsOf);
      if (observed?.condition?.type === 'uncertain') base.detail = `held (uncertain): ${observed.condition.reason}`;
      units.set(name, base);
      continue;
    }
    const condition = observed?.uid === uid ? observed?.condition : undefined;
    const resolved = resolveUnit(unit, input.env, uid, outputsOf);
    Object.assign(base, resolved);
    if (resolved.errors.length > 0) {
      base.phase = 'blocked';
      base.detail = resolved.errors[0]!.message;
    } else if (condition?.type === 'uncertain') {
      base.phase = 'uncertain';
      base.detail = condition.reason;
    } else if (condition?.type === 'failed' && !condition.retryable) {
      base.phase = 'failed';
      base.detail = condition.reason;
    } else if (resolved.waits.length > 0) {
      // A dependency that the next reconcile will execute first makes this one pending, not blocked.
      const stuck = resolved.waits.filter((w) => {
        const dep = units.get(w.unit);
        return !dep || !['pending', 'outdated'].includes(dep.phase) && !(dep.phase === 'failed' && dep.observed?.condition?.retryable);
      });
      base.phase = stuck.length > 0 ? 'blocked' : 'pending';
      base.detail = formatWait((stuck[0] ?? resolved.waits[0])!);
    } else if (condition?.type === 'failed') {
      base.phase = 'failed';
      base.detail = `${condition.reason} (retried by the next reconcile)`;
    } else if (uid && observed?.uid === uid && observed.receipt && observed.receipt.executionKey === resolved.executionKey) {
      base.phase = 'current';
      base.detail = '';
    } else if (observed?.receipt && observed.uid === uid) {
      base.phase = 'outdated';
      base.detail = 'execution key changed';
    } else {
      base.phase = 'pending';
      base.detail = uid ? 'no receipt' : 'no incarnation yet';
    }
    units.set(name, base);
  }

  const leaving = [...input.desired.keys()].filter((n) => !ownedNames.has(n)).sort();
  for (const name of leaving) {
    const desired = input.desired.get(name)!;
    const observed = input.observed.get(name);
    const r: ResolvedUnit = {
      name,
      kind: desired.kind ?? '-',
      desired,
      phase: desired.lifecycle?.state === 'held' ? 'held' : 'leaving',
      waits: [],
      errors: [],
      detail: desired.lifecycle?.state === 'held' ? 'held with a pending deletion' : 'left the ownership set',
    };
    if (observed) r.observed = observed;
    if (desired.uid) r.uid = desired.uid;
    units.set(name, r);
  }
  return { order: [...order, ...leaving], units };
}
