/**
 * `nyl state init`: create an environment's state (or start it over with --fresh).
 */
import type { StateOperationReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { AUTHOR, ENV, OUTPUT, REASON, WAIT } from '../options';

export const stateInitCommand: Command = reporting<StateOperationReport>({
  words: ['state', 'init'],
  summary: "Create an environment's state",
  usage: 'nyl state init -e <env> [--fresh [--reason <text>]] [options] [PATH]',
  description:
    "Creates state.yaml on the environment's desired and observed refs. Running it again changes nothing. " +
    'A missing local bare repository (an absolute path or file:// URL) is created with its parents. ' +
    '--fresh starts over deliberately: every unit becomes a new incarnation and executes again at the next reconcile; ' +
    'it is also the way to start over at a location whose state was deleted, and at a state repository that has no state ' +
    "while this clone's known branches hold some (re-created empty): a plain init refuses there with NYL-STATE-DIVERGED, " +
    'and --fresh continues the known history so that the branches fast-forward. ' +
    '--reason is recorded with a fresh start (the fresh event and the Nyl-Reason trailer); say why whenever you can.',
  options: [
    ENV,
    {
      name: 'fresh',
      type: 'boolean',
      help: "Start over deliberately: every unit becomes a new incarnation (also after state delete, or where the clone's known branches hold state the repository lacks).",
    },
    REASON,
    WAIT,
    AUTHOR,
    OUTPUT,
  ],
  examples: ['nyl state init -e dev', 'nyl state init -e dev --fresh --reason "start over after restoring the cluster"'],
  report: 'StateOperationReport',
  async run(rt, p) {
    const { common, waitOf } = await import('../request');
    const { stateInit } = await import('./state-init');
    return stateInit(rt, { ...common(p), fresh: p.values.fresh === true, ...waitOf(p) });
  },
  async renderer() {
    const { renderStateOperation } = await import('../text/render');
    return (report) => renderStateOperation(report);
  },
});
