/**
 * `--unit`/`--units` of the commands that resolve the environment (reconcile, plan): names that
 * must be units of the ownership set, checked before anything is read or taken.
 */
import { fail } from '../errors/diagnostic';
import { ownershipSet } from '../project/selectors';
import type { OpenedEnvironment } from './context';

/** The named units, or undefined when none are named; an unknown name is NYL-UNIT-UNKNOWN. */
export function selectedUnits(opened: OpenedEnvironment, units: string[] | undefined): Set<string> | undefined {
  if (!units || units.length === 0) return undefined;
  const owned = new Set(ownershipSet(opened.project, opened.env).map((u) => u.name));
  const unknown = units.filter((u) => !owned.has(u));
  if (unknown.length > 0) {
    fail('NYL-UNIT-UNKNOWN', `environment ${opened.env.name} has no unit ${unknown.join(', ')}`, {
      env: opened.env.name,
      units: unknown,
      fix: `pick units of ${opened.env.name}: ${[...owned].sort().join(', ') || '(none)'}`,
    });
  }
  return new Set(units);
}
