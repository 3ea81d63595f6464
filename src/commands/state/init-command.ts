/**
 * `nyl state init`: create an environment's state (or start it over with --fresh); over several
 * environments (repeated -e, -l, -g) each in turn, dependencies first, as its own command. A
 * fresh start names one environment: it makes every unit of it execute again, so it is never
 * the side effect of a label or a group.
 */
import type { StateOperationReport } from '../../report/types';
import { acrossCommand } from '../across';
import type { Command } from '../command';
import { AUTHOR, OUTPUT, REASON, SELECTION, WAIT } from '../options';

export const stateInitCommand: Command = acrossCommand<StateOperationReport>({
  words: ['state', 'init'],
  summary: "Create an environment's state",
  usage: 'nyl state init (-e <env>... | -l <key=value> | -g <group>) [--fresh [--reason <text>]] [options] [PATH]',
  description:
    "Creates state.yaml on the environment's desired and observed refs. Running it again changes nothing. " +
    'A missing local bare repository (an absolute path or file:// URL) is created with its parents. ' +
    '--fresh starts over deliberately: every unit becomes a new incarnation and executes again at the next reconcile; ' +
    'it is also the way to start over at a location whose state was deleted, and at a state repository that has no state ' +
    "while this clone's known branches hold some (re-created empty): a plain init refuses there with NYL-STATE-DIVERGED, " +
    'and --fresh continues the known history so that the branches fast-forward. ' +
    '--reason is recorded with a fresh start (the fresh event and the Nyl-Reason trailer); say why whenever you can. ' +
    'Several environments (repeated -e, -l, -g) are initialized one after another, dependencies first, each as its own command; --fresh names exactly one environment.',
  options: [
    ...SELECTION,
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
  examples: ['nyl state init -e dev', 'nyl state init -g previews', 'nyl state init -e dev --fresh --reason "start over after restoring the cluster"'],
  report: 'StateOperationReport',
  across: { operation: 'state-init', gate: 'none', unitsFrom: 'source' },
  async check(p) {
    if (p.values.fresh !== true) return;
    const { environmentSelectorOf } = await import('../selection');
    const selector = environmentSelectorOf(p);
    if ('names' in selector && new Set(selector.names).size === 1) return;
    const { fail } = await import('../../errors/diagnostic');
    fail('NYL-USAGE', 'nyl state init --fresh starts over one environment, and was given a selection of several', {
      fix: 'pass --fresh with one -e <environment>, and run it again for each environment to start over',
    });
  },
  async runOne(rt, p, { environment }) {
    const { common, waitOf } = await import('../request');
    const { stateInit } = await import('./state-init');
    return stateInit(rt, { ...common(p, environment), fresh: p.values.fresh === true, ...waitOf(p) });
  },
  async renderer() {
    const { renderStateOperation } = await import('../text/render');
    return (report) => renderStateOperation(report);
  },
});
