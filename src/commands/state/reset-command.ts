/**
 * `nyl state reset --local`: move this machine's local state branches back to the state
 * repository's.
 */
import type { StateOperationReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { AUTHOR, ENV, LOCAL, OUTPUT, REASON, WAIT } from '../options';

export const stateResetCommand: Command = reporting<StateOperationReport>({
  words: ['state', 'reset'],
  summary: "Move this machine's local state branches back to the state repository's, after --local runs",
  usage: 'nyl state reset -e <env> --local [--discard <unit>... | --discard-all] [options] [PATH]',
  description:
    "Reads the state repository (online) and moves only local refs to its tips: the clone's branches of the state refs and, for a remote that is not the checkout's origin, " +
    "its cache repository's own branches, which --local runs write. Nothing is pushed. A branch that held local work keeps its old tip under refs/nyl-discarded/<env>/<time>/ in its repository. " +
    'Units whose local receipts the state repository lacks must be named with --discard (repeatable, or comma-separated) or accepted with --discard-all, else it exits 1 with NYL-STATE-RESET-DISCARD listing them. ' +
    "A --local run's lease, run or checkpoint refs must be imported first, as NYL-STATE-LOCAL-WORK names (nyl recover -e <env> --local after nyl lease break -e <env> --local for a killed run; nyl reconcile -e <env> --local for one that ended). --local is required.",
  options: [
    ENV,
    { ...LOCAL, help: 'Required: the reset moves local refs only.' },
    {
      name: 'discard',
      type: 'string',
      multiple: true,
      list: true,
      value: '<unit>',
      help: 'Lose the local receipt of this unit (repeatable, or comma-separated).',
    },
    { name: 'discard-all', type: 'boolean', help: 'Lose every local receipt the state repository lacks.' },
    { ...REASON, help: 'Why; shown in the report (the reset writes no commit).' },
    { ...WAIT, help: 'Accepted as by every state command; the reset takes no lease (it moves only local refs), so it never waits.' },
    { ...AUTHOR, help: 'Accepted as by every state command; the reset writes no commit.' },
    OUTPUT,
  ],
  examples: ['nyl state reset -e dev --local', 'nyl state reset -e dev --local --discard cache,web', 'nyl state reset -e dev --local --discard-all'],
  report: 'StateOperationReport',
  async run(rt, p) {
    const { common, listOpt } = await import('../request');
    const { stateReset } = await import('./state-reset');
    return stateReset(rt, { ...common(p), discard: listOpt(p, 'discard'), discardAll: p.values['discard-all'] === true });
  },
  async renderer() {
    const { renderStateOperation } = await import('../text/render');
    return (report) => renderStateOperation(report);
  },
});
