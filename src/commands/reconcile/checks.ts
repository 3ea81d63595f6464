/**
 * The options of reconcile and teardown that are wrong whatever the environment: checked once,
 * before the first environment runs, so that a multi-environment run refuses them as a whole.
 */
import { fail } from '../../errors/diagnostic';
import type { ParsedCommand } from '../command';
import { stringOpt } from '../request';
import { environmentSelectorOf } from '../selection';

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

/** The options of a teardown run that a withdrawal (--cancel) does not take. */
const RUN_ONLY = ['allow-dependents', 'allow-incomplete', 'source', 'concurrency', 'fail-fast', 'quiet-unit-output', 'unit-log-dir', 'local', 'worktree'];

/**
 * teardown --cancel: a state operation of one environment (a request withdrawn in one and torn
 * down in another would leave the gate between them meaningless), without the run's options.
 */
export function cancelScope(p: ParsedCommand): void {
  if (p.values.cancel !== true) return;
  const stray = RUN_ONLY.filter((o) => p.values[o] !== undefined && p.values[o] !== false).map((o) => `--${o}`);
  if (stray.length > 0)
    fail('NYL-USAGE', `--cancel tears nothing down and takes no ${stray.join(', ')}`, { fix: `leave out ${stray.join(' and ')}, or --cancel` });
  const selector = environmentSelectorOf(p);
  if (!('names' in selector) || new Set(selector.names).size > 1)
    fail('NYL-USAGE', 'nyl teardown --cancel withdraws requests in one environment', { fix: 'pass one -e <env>, and run it once per environment' });
}
