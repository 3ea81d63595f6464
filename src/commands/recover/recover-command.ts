/**
 * `nyl recover`: the import of a broken lease's run, or one unit with --retry / --accept.
 */
import type { StateOperationReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { AUTHOR, ENV, LOCAL, OUTPUT, REASON, WAIT } from '../options';

export const recoverCommand: Command = reporting<StateOperationReport>({
  words: ['recover'],
  summary: 'Import a broken run, retry a unit, or adopt a checkpoint',
  usage: 'nyl recover -e <env> [--unit <name> (--retry | --accept <run>)] [--reason <text>] [options] [PATH]',
  description:
    'Without --unit, imports the run of a broken lease without executing anything: checkpoints with the current execution key become receipts, ' +
    "units the run left without a checkpoint become uncertain. --unit U --retry clears the unit's condition so the next reconcile executes it; " +
    "--unit U --accept RUN adopts the receipt RUN checkpointed, when its execution key and uid equal the unit's desired document. " +
    'One transition commit; exit 0 also when units are left uncertain.',
  options: [
    ENV,
    { name: 'unit', completes: 'units', type: 'string', value: '<name>', help: 'The unit to recover; needs --retry or --accept.' },
    { name: 'retry', type: 'boolean', help: 'Clear the condition; the next reconcile executes the unit.' },
    { name: 'accept', type: 'string', value: '<run>', help: 'Adopt what this run checkpointed for the unit. Needs --unit and --reason.' },
    LOCAL,
    REASON,
    WAIT,
    AUTHOR,
    OUTPUT,
  ],
  examples: [
    'nyl recover -e dev --reason "the CI runner was killed"',
    'nyl recover -e dev --unit migrate --retry --reason "verified nothing was applied"',
    'nyl recover -e dev --unit database --accept 0192f0c4-8d0a-7c3e-9a51-3c1f0e7d2b90 --reason "the runner finished after losing its lease"',
  ],
  report: 'StateOperationReport',
  async run(rt, p) {
    const { common, stringOpt, waitOf } = await import('../request');
    const { recover } = await import('./recover');
    const unit = stringOpt(p, 'unit');
    const accept = stringOpt(p, 'accept');
    return recover(rt, {
      ...common(p),
      retry: p.values.retry === true,
      ...(unit !== undefined ? { unit } : {}),
      ...(accept !== undefined ? { accept } : {}),
      ...waitOf(p),
    });
  },
  async renderer() {
    const { renderStateOperation } = await import('../text/render');
    return (report) => renderStateOperation(report);
  },
});
