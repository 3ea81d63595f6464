/**
 * `nyl verify`: run each unit's drift check and record what it observed (a state operation);
 * its text shows the units' drift as a table between the headline and the fields.
 */
import type { StateOperationReport } from '../../report/types';
import { acrossCommand } from '../across';
import type { Command } from '../command';
import { AUTHOR, OUTPUT, SELECTION, WAIT, selectedUnitOption } from '../options';

export const verifyCommand: Command = acrossCommand<StateOperationReport>({
  words: ['verify'],
  summary: "Run each unit's drift check and record what it observed",
  usage: 'nyl verify (-e <env>... | -l <key=value> | -g <group>) [--unit <name>] [options] [PATH]',
  description:
    "A state operation: takes the environment's lease, runs the drift check of every unit with a receipt (a Command's check:, a Terraform or OpenTofu refresh-only plan; kinds without a check are recorded unknown) " +
    'against the rendering and source commit its receipt was produced for, and writes one observed commit with the operation verify that records drift: {status, observedAt, run, receipt, detail} per unit, keeping the last 10 observations. ' +
    'Units without a receipt, held units and tombstones are skipped and listed with why. Nothing executes, and the desired state never changes. ' +
    "The next reconcile repairs a drifted unit as the Environment's driftRepair says. Run it from a scheduled CI job to detect drift. " +
    'Exit codes: 0 nothing drifted, 2 a unit drifted (or the lease is held), 1 a check failed or an error.',
  options: [...SELECTION, selectedUnitOption('Check only this unit (repeatable).'), WAIT, AUTHOR, OUTPUT],
  examples: ['nyl verify -e prod', 'nyl verify -e prod --unit network -o json'],
  report: 'StateOperationReport',
  across: { operation: 'verify', gate: 'none', unitsFrom: 'verifiable' },
  async runOne(rt, p, { environment, units }) {
    const { common, waitOf } = await import('../request');
    const { verify } = await import('./verify');
    return verify(rt, { ...common(p, environment), ...(units.length > 0 ? { units } : {}), ...waitOf(p) });
  },
  async renderer() {
    return (await import('./render')).renderVerify;
  },
});
