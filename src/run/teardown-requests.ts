/**
 * `nyl teardown`'s requests: which units it names (`--unit U...` or `--all`) and the
 * `teardownRequest` each gets on its desired file. Pure. A request stays until the unit is torn
 * down: on a held unit it is all the teardown does (the first run after `nyl resume` carries it
 * out), and a unit whose teardown fails keeps it, so the next reconcile goes on without
 * --allow-teardown.
 */
import { hasIncarnation } from '../plan/lifecycle';
import type { DesiredUnitDoc, TeardownRequest } from '../state/documents';

/** The units a teardown names: every unit with an incarnation for --all (held ones and tombstones included). */
export function requestedUnits(desired: ReadonlyMap<string, DesiredUnitDoc>, generation: number, units: string[] | 'all'): string[] {
  if (units !== 'all') return [...new Set(units)];
  return [...desired]
    .filter(([, doc]) => hasIncarnation(doc, generation))
    .map(([name]) => name)
    .sort();
}

/** Named units the state has no incarnation of: a teardown cannot remove what it does not know. */
export function unknownUnits(desired: ReadonlyMap<string, DesiredUnitDoc>, generation: number, names: string[]): string[] {
  return names.filter((n) => !hasIncarnation(desired.get(n), generation));
}

/**
 * The desired documents with each named unit's request recorded (an earlier request is kept as it
 * is); the same map when every named unit has one already, so that a caller sees nothing changed.
 */
export function withRequests(desired: ReadonlyMap<string, DesiredUnitDoc>, names: string[], request: TeardownRequest): ReadonlyMap<string, DesiredUnitDoc> {
  const missing = names.filter((n) => desired.get(n) && !desired.get(n)!.teardownRequest);
  if (missing.length === 0) return desired;
  const out = new Map(desired);
  for (const name of missing) out.set(name, { ...desired.get(name)!, teardownRequest: request });
  return out;
}
