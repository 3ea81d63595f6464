/**
 * `nyl status`: the units of an environment and what needs attention. Its reports and refusals
 * name no operation.
 */
import type { StatusReport } from '../../report/types';
import { acrossCommand } from '../across';
import type { Command } from '../command';
import { OUTPUT, SELECTION } from '../options';

export const statusCommand: Command = acrossCommand<StatusReport>({
  words: ['status'],
  summary: 'Show the units of an environment and what needs attention',
  usage: 'nyl status [-e <env>... | -l <key=value> | -g <group>] [-o table|json] [PATH]',
  description:
    'Lists each unit of the environment with its kind, state, receipt, last run and detail, then warnings with their fixes. ' +
    'Exit codes follow reconcile: 0 everything current, 2 something waits (pending, blocked, held), 3 a unit failed, 4 a unit is uncertain, 1 an error. ' +
    "Without -e, -l or -g it lists the environments to name: those the project declares, and the EnvironmentTemplate instances whose refs the templates' state holds (exit 0).",
  options: [...SELECTION, OUTPUT],
  examples: ['nyl status', 'nyl status -e dev', 'nyl status -e dev -o json'],
  report: 'StatusReport',
  operation: null,
  across: { operation: 'status', gate: 'none', unitsFrom: 'source' },
  async runOne(rt, p, { environment }) {
    const { common } = await import('../request');
    const { status } = await import('./status');
    return status(rt, common(p, environment));
  },
  async renderer() {
    return (await import('./render-status')).renderStatus;
  },
  unselected: {
    async run(rt, p) {
      return (await import('./environment-list')).listEnvironments(rt, p.path);
    },
    async renderer() {
      return (await import('./environment-list')).renderEnvironmentList;
    },
  },
});
