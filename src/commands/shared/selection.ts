/**
 * `--unit`/`--units` of the commands that resolve the environment (reconcile, plan): names that
 * must be units of the ownership set, checked before anything is read or taken; and the source
 * warnings of the units they select.
 */
import { closest } from '../../util/closest';
import { type Diagnostic, fail } from '../../errors/diagnostic';
import { ownershipSet } from '../../project/selectors';
import { shellReferenceWarnings } from '../../project/shell-argv';
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
      guess: closest(unknown[0]!, owned),
      fix: `pick units of ${opened.env.name}: ${[...owned].sort().join(', ') || '(none)'}`,
    });
  }
  return new Set(units);
}

/**
 * The selected units (all without a selection) whose `run:` hands a reference to a shell as its
 * text (sh -c): a warning of the source, in `plan` where the user reviews what would run, and in
 * `reconcile`, which runs it.
 */
export function shellTextWarnings(opened: OpenedEnvironment, only: Set<string> | undefined): Diagnostic[] {
  const units = ownershipSet(opened.project, opened.env).filter((u) => !only || only.has(u.name));
  return units.flatMap((u) => shellReferenceWarnings(u, opened.env.name));
}
