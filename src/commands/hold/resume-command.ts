/**
 * `nyl resume`: lift a hold; the unit keeps its uid, receipt and condition.
 */
import type { StateOperationReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { AUTHOR, ENV, OUTPUT, REASON, WAIT } from '../options';
import { unitRequestOf } from './hold-command';

export const resumeCommand: Command = reporting<StateOperationReport>({
  words: ['resume'],
  summary: 'Lift a hold',
  usage: 'nyl resume -e <env> --unit <name> [--reason <text>] [options] [PATH]',
  description:
    "Lifts the hold only: keeps the unit's uid, receipt and condition. The next reconcile renders the unit from source again and applies what changed. Resuming a unit that is not held changes nothing.",
  options: [ENV, { name: 'unit', completes: 'units', type: 'string', value: '<name>', help: 'The unit to resume. Required.' }, REASON, WAIT, AUTHOR, OUTPUT],
  examples: ['nyl resume -e dev --unit database --reason "incident 4711 resolved"'],
  report: 'StateOperationReport',
  async run(rt, p) {
    const { resume } = await import('./resume');
    return resume(rt, await unitRequestOf(p));
  },
  async renderer() {
    const { renderStateOperation } = await import('../text/render');
    return (report) => renderStateOperation(report);
  },
});
