/**
 * `nyl state forget`: drop a retained tombstone, a pending teardown or a released record.
 */
import type { StateOperationReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { AUTHOR, ENV, OUTPUT, REASON, WAIT } from '../options';

export const stateForgetCommand: Command = reporting<StateOperationReport>({
  words: ['state', 'forget'],
  summary: 'Drop a retained tombstone, a pending teardown or a released record from state',
  usage: 'nyl state forget -e <env> --unit <name> --reason <text> [options] [PATH]',
  description:
    "Removes the unit's desired and observed files without touching its resources: a retained tombstone, a unit whose teardown waits (pending-teardown), " +
    "or the record of a released unit. One transition commit per state ref it changes (operation forget), and the unit's evidence refs are deleted in the same push. " +
    'A unit that returns to source later starts a new incarnation. A unit that still has an incarnation (active, deleting or held) is refused with NYL-FORGET-REFUSED: ' +
    'tear it down with nyl teardown instead. --reason is required and recorded as the Nyl-Reason trailer.',
  options: [
    ENV,
    { name: 'unit', completes: 'units', type: 'string', value: '<name>', help: 'The unit to drop from state. Required.' },
    { ...REASON, help: 'Why; required, recorded as the Nyl-Reason trailer.' },
    WAIT,
    AUTHOR,
    OUTPUT,
  ],
  examples: ['nyl state forget -e dev --unit cache --reason "removed by hand"'],
  // The transition commits say `nyl: forget dev (cache)`; its reports name the same operation.
  operation: 'forget',
  report: 'StateOperationReport',
  async run(rt, p) {
    const { common, requireUnit, waitOf } = await import('../request');
    const { forget } = await import('./forget');
    return forget(rt, { ...common(p), unit: requireUnit(p), ...waitOf(p) });
  },
  async renderer() {
    const { renderStateOperation } = await import('../text/render');
    return (report) => renderStateOperation(report);
  },
});
