/**
 * `nyl hold`: freeze a unit at the desired document of its latest receipt.
 */
import type { StateOperationReport } from '../../report/types';
import { type Command, type ParsedCommand, reporting } from '../command';
import { AUTHOR, ENV, OUTPUT, REASON, WAIT } from '../options';

export const holdCommand: Command = reporting<StateOperationReport>({
  words: ['hold'],
  summary: 'Freeze a unit: reconcile changes nothing about it until resume',
  usage: 'nyl hold -e <env> --unit <name> [--reason <text>] [options] [PATH]',
  description:
    'Writes one desired commit that holds the unit at the desired document of its latest receipt (a unit that never ran gets a held marker), without touching its resources ' +
    'and without rendering source. While a reconcile holds the lease, the hold is delivered to that run (NYL-HOLD-DELIVERED), which records it. Holding a held unit changes nothing.',
  options: [ENV, { name: 'unit', completes: 'units', type: 'string', value: '<name>', help: 'The unit to hold. Required.' }, REASON, WAIT, AUTHOR, OUTPUT],
  examples: ['nyl hold -e dev --unit database --reason "incident 4711"'],
  report: 'StateOperationReport',
  async run(rt, p) {
    const { hold } = await import('./hold');
    return hold(rt, await unitRequestOf(p));
  },
  async renderer() {
    const { renderStateOperation } = await import('../text/render');
    return (report) => renderStateOperation(report);
  },
});

/** What hold and resume ask for: the unit, with what every state command carries. */
export async function unitRequestOf(p: ParsedCommand) {
  const { common, requireUnit, waitOf } = await import('../request');
  return { ...common(p), unit: requireUnit(p), ...waitOf(p) };
}
