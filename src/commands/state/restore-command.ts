/**
 * `nyl state restore`: the unit documents of an earlier state commit, written forward. --to and
 * --reason are checked by the operation.
 */
import type { StateOperationReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { AUTHOR, ENV, OUTPUT, REASON, WAIT } from '../options';

export const stateRestoreCommand: Command = reporting<StateOperationReport>({
  words: ['state', 'restore'],
  summary: "Restore an environment's unit documents to those of an earlier state commit",
  usage: 'nyl state restore -e <env> --to <commit> --reason <text> [options] [PATH]',
  description:
    'Writes forward commits (one per state ref it changes, operation state-restore, never a force push) whose unit documents are those of <commit>, ' +
    "a commit of the first-parent history of the environment's desired or observed ref (on refs shared through path, one that changed the environment's directory); " +
    "the other ref's documents come from the commit of the same operation, else its newest commit not newer than <commit>. " +
    'Current admission stays: state.yaml (generation, status, events), the lease, and holds (a unit held now stays held with its current hold; one not held now is not held by the restore). ' +
    'Incarnations the restore brings back or takes away are listed (details.resurrected, details.dropped) with the warning NYL-RESTORE-INCARNATIONS. ' +
    'It refuses a commit outside the state history (NYL-RESTORE-FOREIGN-COMMIT) and run refs not imported yet (NYL-RESTORE-RUNS-UNIMPORTED), and writes nothing when the documents already are those of <commit>.',
  options: [
    ENV,
    {
      name: 'to',
      type: 'string',
      value: '<commit>',
      help: 'The state commit whose unit documents to restore: its full id, or an abbreviation of at least 7 hex digits that names one commit of the state history. Required.',
    },
    { ...REASON, help: 'Why; required, recorded as the Nyl-Reason trailer.' },
    WAIT,
    AUTHOR,
    OUTPUT,
  ],
  examples: ['nyl state restore -e dev --to 3f9c2e1a --reason "undo a bad hand edit of units/db.yaml"'],
  report: 'StateOperationReport',
  async run(rt, p) {
    const { common, stringOpt, waitOf } = await import('../request');
    const { stateRestore } = await import('./state-restore');
    const to = stringOpt(p, 'to');
    return stateRestore(rt, { ...common(p), ...(to !== undefined ? { to } : {}), ...waitOf(p) });
  },
  async renderer() {
    const { renderStateOperation } = await import('../text/render');
    return (report) => renderStateOperation(report);
  },
});
