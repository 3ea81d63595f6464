/**
 * The options of reconcile and teardown that are wrong whatever the environment: checked once,
 * before the first environment runs, so that a multi-environment run refuses them as a whole.
 */
import { fail } from '../../errors/diagnostic';
import type { ParsedCommand } from '../command';
import { stringOpt } from '../request';

/** reconcile: --leaving does only lifecycle work, --unit none. */
export function leavingConflict(p: ParsedCommand, units: string[]): void {
  if (p.values.leaving === true && units.length > 0) {
    fail('NYL-USAGE', '--leaving conflicts with --unit/--units: --unit does no lifecycle work, --leaving only lifecycle work', {
      fix: 'pass either --leaving or --unit, not both',
    });
  }
}

/** reconcile: --reapply needs --unit and --reason: it runs named units again on purpose, and says why. */
export function reapplyOf(p: ParsedCommand, units: string[]): boolean {
  if (p.values.reapply !== true) return false;
  if (units.length === 0 || !stringOpt(p, 'reason')?.trim()) {
    fail('NYL-USAGE', '--reapply needs --unit and --reason: it executes the named units again although their receipts are current', {
      fix: 'pass --reapply --unit <name> --reason "<why>"',
    });
  }
  return true;
}

/** teardown: exactly one of --unit U... and --all. */
export function teardownScope(p: ParsedCommand, units: string[]): void {
  const all = p.values.all === true;
  if (all === units.length > 0) {
    fail('NYL-USAGE', all ? 'nyl teardown takes --unit or --all, not both' : 'nyl teardown needs --unit <name> or --all', {
      fix: 'pass --unit <name> (repeatable) to tear down those units, or --all to tear down every unit',
    });
  }
}
