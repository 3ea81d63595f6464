/**
 * `nyl outputs`: the outputs of the units' receipts, for scripts.
 */
import type { OutputsReport } from '../../report/types';
import { type Command, reporting } from '../command';
import { ENV, LOCAL, OUTPUT } from '../options';

export const outputsCommand: Command = reporting<OutputsReport>({
  words: ['outputs'],
  summary: "Print the outputs of the units' receipts, for scripts",
  usage: 'nyl outputs -e <env> [--unit <name>] [-o text|json] [PATH]',
  description:
    "Text: one KEY=VALUE line per output (UNIT.KEY=VALUE without --unit), a one-line string as it is and any other value as JSON; read it with `while IFS='=' read -r key value`, not with eval. " +
    'JSON: outputs is {unit: {key: value}}, or {key: value} with --unit. A sensitive output is never printed: text shows KEY=(sensitive), and JSON leaves it out of outputs and names it under sensitive. ' +
    'Units without a receipt have no outputs. An unknown --unit is NYL-UNIT-UNKNOWN. Takes no lease and writes nothing. Exit 0, or 1 on an error.',
  options: [ENV, { name: 'unit', completes: 'units', type: 'string', value: '<name>', help: "Only this unit's outputs, as {key: value}." }, LOCAL, OUTPUT],
  examples: ['nyl outputs -e prod', 'nyl outputs -e prod --unit database -o json | jq -r .outputs.url'],
  report: 'OutputsReport',
  async run(rt, p) {
    const { readRequestOf, stringOpt } = await import('../request');
    const { outputs } = await import('./outputs');
    const unit = stringOpt(p, 'unit');
    return outputs(rt, { ...readRequestOf(p), ...(unit !== undefined ? { unit } : {}) });
  },
  async renderer() {
    return (await import('./render-inspect')).renderOutputs;
  },
});
