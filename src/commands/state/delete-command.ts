/**
 * `nyl state delete`: delete an environment's state once no unit has an incarnation; with
 * --teardown its first step is `nyl teardown --all`.
 */
import type { StateOperationReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { ALLOW_DEPENDENTS, ALLOW_INCOMPLETE, AUTHOR, ENV, OUTPUT, REASON, WAIT } from '../options';

export const stateDeleteCommand: Command = reporting<StateOperationReport>({
  words: ['state', 'delete'],
  summary: "Delete an environment's state once no unit has an incarnation",
  usage: 'nyl state delete -e <env> --reason <text> [--teardown [--allow-dependents] [--allow-incomplete] [--source <rev>]] [options] [PATH]',
  description:
    "Removes the environment's state, for template instances and declared environments alike: one commit per state ref (operation state-delete) removes every unit file, " +
    'including held markers and released records, and leaves state.yaml with status: deleted and a state-deleted event. The state refs and their history stay; ' +
    "on refs shared through path only the environment's directory changes. The environment's evidence and signal refs are deleted in the same push. " +
    'It refuses (exit 1, NYL-STATE-DELETE-INCARNATIONS) while a unit still has an incarnation, a teardown in progress or a recorded teardown request, ' +
    'and while a run ref waits for its import. --teardown runs nyl teardown --all first and continues to the deletion once nothing is left: ' +
    'it stops with exit 2 when every remaining unit waits, exit 1 when a teardown failed or is uncertain, and running it again resumes. ' +
    'Every later command for the environment exits 1 with NYL-STATE-DELETED; nyl state init --fresh starts it over.',
  options: [
    ENV,
    { ...REASON, help: 'Why; required. Recorded in the state-deleted event and as the Nyl-Reason trailer.' },
    { name: 'teardown', type: 'boolean', help: 'Tear every unit down first (nyl teardown --all), then delete the state in the same command.' },
    { ...ALLOW_DEPENDENTS, help: `${ALLOW_DEPENDENTS.help} Needs --teardown.` },
    { ...ALLOW_INCOMPLETE, help: `${ALLOW_INCOMPLETE.help} Needs --teardown.` },
    { name: 'source', type: 'string', value: '<rev>', help: "Teardown: render units at this revision instead of the Environment's source. Needs --teardown." },
    WAIT,
    AUTHOR,
    OUTPUT,
  ],
  examples: ['nyl state delete -e pr-123 --reason "pull request closed"', 'nyl state delete -e staging --teardown --reason "decommission staging"'],
  report: 'StateOperationReport',
  async run(rt, p) {
    const { common, stringOpt, waitOf } = await import('../request');
    const { stateDelete } = await import('./state-delete');
    const { teardownAll } = await import('../reconcile/reconcile');
    const source = stringOpt(p, 'source');
    const req = {
      ...common(p),
      teardown: p.values.teardown === true,
      allowDependents: p.values['allow-dependents'] === true,
      allowIncomplete: p.values['allow-incomplete'] === true,
      ...(source !== undefined ? { source } : {}),
      ...waitOf(p),
    };
    return stateDelete(rt, req, teardownAll);
  },
  async renderer() {
    return (await import('./render-delete')).renderStateDelete;
  },
});
