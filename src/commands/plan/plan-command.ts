/**
 * `nyl plan`: what the next reconcile would do, per unit and why, without a lease or a write.
 * It reads only, so it takes neither --author nor a reason.
 */
import type { ReconcileReport } from '../../report/types';
import { acrossCommand } from '../across';
import type { Command } from '../command';
import { OUTPUT, SELECTION, WORKTREE, selectedUnitOption } from '../options';

export const planCommand: Command = acrossCommand<ReconcileReport>({
  words: ['plan'],
  summary: 'Say what the next reconcile would do, per unit and why, without taking a lease or writing anything',
  usage: 'nyl plan (-e <env>... | -l <key=value> | -g <group>) [--unit <name> | --units <a>,<b>] [--source <rev> | --worktree] [-o table|json] [PATH]',
  description:
    'Resolves the environment exactly as the next reconcile would and lists, per unit, what it would do (ACTION: execute, wait, current, blocked, held, awaiting-approval, drifted, teardown, retain, release, pending-teardown, ...) and why (the leaving section first). ' +
    "For every unit that would execute it shows the digest that a plan-bound approval names (nyl reconcile --approve <unit>=<digest>): for Terraform and OpenTofu units the driver's plan runs in a scratch copy of the source commit (its output on stderr) and the row shows its change summary; for other kinds the digest is the execution key. " +
    'A unit that waits for its dependencies, or gets its first incarnation, has no digest yet. A unit whose rendering changed shows the diff of its desired rendering against the recorded one. ' +
    'Takes no lease and writes nothing: no state ref, no run ref, not even a ref of this clone. ' +
    'A unit whose run: hands a ${{ }} reference to a shell as its text (sh -c "... ${{ units.db.outputs.url }} ...") is warned about (NYL-SOURCE-SHELL-REFERENCE): pass the value through env: instead. ' +
    'Exit codes as reconcile: 0 nothing to do, 2 something would change or waits, 3 a unit failed and needs an operator, 4 a unit is uncertain, 1 an error.',
  options: [
    ...SELECTION,
    selectedUnitOption('Plan only this unit (repeatable), as reconcile --unit would run it.'),
    { name: 'units', completes: 'units', type: 'string', multiple: true, list: true, value: '<a>,<b>', help: 'Plan only these units (comma-separated).' },
    { name: 'source', type: 'string', value: '<rev>', help: "Render units at this revision instead of the Environment's source." },
    WORKTREE,
    OUTPUT,
  ],
  examples: [
    'nyl plan -e prod',
    'nyl plan -e prod -o json',
    'nyl plan -e prod --unit network',
    'nyl plan -e prod --source release-42',
    'nyl plan -e dev --worktree',
  ],
  report: 'ReconcileReport',
  across: { operation: 'plan', gate: 'none', unitsFrom: 'source' },
  async runOne(rt, p, { environment, units }) {
    const { stringOpt, worktreeOf } = await import('../request');
    const { plan } = await import('./plan');
    const source = stringOpt(p, 'source');
    const worktree = await worktreeOf(p);
    return plan(rt, {
      path: p.path,
      environment,
      ...(units.length > 0 ? { units } : {}),
      ...(source !== undefined ? { source } : {}),
      ...(worktree ? { worktree } : {}),
    });
  },
  async renderer() {
    return (await import('./render')).renderPlan;
  },
});
