/**
 * `nyl log`: the environment's history, one entry per operation, newest first.
 */
import type { LogReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { ENV, LOCAL, OUTPUT } from '../options';

export const logCommand: Command = reporting<LogReport>({
  words: ['log'],
  summary: "Show the environment's history: one entry per operation, newest first",
  usage: 'nyl log -e <env> [--unit <name>] [-n <count>] [-o text|json] [PATH]',
  description:
    "Reads the transition commits of the environment's desired and observed refs (first parents; through a state move's second parent to the old location's history) and merges them into one entry per operation: " +
    'a desired and an observed commit with the same message and commit time are one operation, and an operation that changed one ref only is an entry of its own. ' +
    'Each entry shows when, the operation, who asked (Nyl-Requested-By, else the author), why (Nyl-Reason), the run, the source, the commits and what happened to each unit it names. ' +
    "On state refs shared through state.path only the commits that changed this environment's directory are shown. --unit follows one unit: the operations that name it or changed its documents. " +
    'Shows the newest 20 entries unless -n says otherwise (-n 0: all). A deleted or moved state still shows its history, with a warning. Takes no lease and writes nothing. Exit 0, or 1 on an error.',
  options: [
    ENV,
    {
      name: 'unit',
      completes: 'units',
      type: 'string',
      value: '<name>',
      help: 'Only the operations that name this unit or changed its desired or observed document.',
    },
    { name: 'max-count', short: 'n', type: 'string', value: '<count>', help: 'Show at most this many entries, newest first. Default 20; 0 shows all.' },
    LOCAL,
    OUTPUT,
  ],
  examples: ['nyl log -e prod', 'nyl log -e prod --unit database -n 5', 'nyl log -e prod -n 0 -o json'],
  report: 'LogReport',
  async run(rt, p) {
    const { countOf, readRequestOf, stringOpt } = await import('../request');
    const { log } = await import('./log');
    const unit = stringOpt(p, 'unit');
    const count = stringOpt(p, 'max-count');
    return log(rt, { ...readRequestOf(p), ...(unit !== undefined ? { unit } : {}), ...(count !== undefined ? { limit: countOf(count) } : {}) });
  },
  async renderer() {
    return (await import('./render-inspect')).renderLog;
  },
});
