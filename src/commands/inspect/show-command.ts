/**
 * `nyl show`: one unit's documents, receipt, outputs and last runs.
 */
import type { ShowReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { ENV, LOCAL, OUTPUT } from '../options';

export const showCommand: Command = reporting<ShowReport>({
  words: ['show'],
  summary: "Show one unit's documents, receipt, outputs and last runs",
  usage: 'nyl show -e <env> --unit <name> [-o text|json] [PATH]',
  description:
    "Prints the unit's receipt (run, execution key, when it finished, its outputs: a sensitive output by its keyed digest only, which tells nothing without the key, never its value), its condition, hold and drift, " +
    'its desired document from the desired ref and its observed document, and the last 5 operations that named it or changed its documents (as nyl log --unit shows them). ' +
    'An unknown unit is NYL-UNIT-UNKNOWN. Takes no lease and writes nothing. Exit 0, or 1 on an error.',
  options: [ENV, { name: 'unit', completes: 'units', type: 'string', value: '<name>', help: 'The unit to show. Required.' }, LOCAL, OUTPUT],
  examples: ['nyl show -e prod --unit database', 'nyl show -e prod --unit database -o json'],
  report: 'ShowReport',
  async run(rt, p) {
    const { readRequestOf, requireUnit } = await import('../request');
    const { show } = await import('./show');
    return show(rt, { ...readRequestOf(p), unit: requireUnit(p) });
  },
  async renderer() {
    return (await import('./render-inspect')).renderShow;
  },
});
