/**
 * `nyl teardown`: tear the named units (or all) down through their drivers, consumers first;
 * across environments, consumers first too, each gated on the environments that depend on it.
 * With --cancel, a state operation of one environment instead: withdraw requests that have not
 * started (./teardown-cancel.ts).
 */
import type { ReconcileReport, StateOperationReport } from '../../report/types';
import { acrossCommand } from '../across';
import type { Command } from '../command';
import { ALLOW_DEPENDENTS, ALLOW_INCOMPLETE, RUN_OPTIONS, SELECTION, selectedUnitOption } from '../options';

export const teardownCommand: Command = acrossCommand<ReconcileReport | StateOperationReport>({
  words: ['teardown'],
  summary: 'Tear units down through their drivers, consumers first, and record it',
  usage:
    'nyl teardown (-e <env>... | -l <key=value> | -g <group>) (--unit <name>... | --all) [--allow-dependents] [--allow-incomplete] [--source <rev>] [options] [PATH]\n       nyl teardown -e <env> --cancel (--unit <name>... | --all) [--reason <text>] [--wait-lease <duration>] [PATH]',
  description:
    "A run like reconcile (lease, run ref, signals, takeover of dead runs, one transition commit with the operation teardown) that records a teardown request on each named unit and carries it out, consumers first, whatever the unit's deletionPolicy. " +
    'A unit that others with an incarnation still depend on waits for them (exit 2): name them too. On a held unit the request is only recorded; the first reconcile or teardown after `nyl resume` carries it out. ' +
    'A unit still in the ownership set gets a new incarnation at the next reconcile. Exit codes as reconcile: 0 done, 2 something waits, 3 a teardown failed, 4 one is uncertain. ' +
    '--cancel withdraws recorded requests whose teardown has not started, in one environment: a state operation like `nyl resume` (lease, one commit with the operation teardown-cancel, a StateOperationReport; NYL-UNCHANGED when there is nothing to withdraw). The units keep their uid, receipt, condition and hold. A unit named whose teardown started (deleting, uncertain, or started by a run not imported yet) is refused with NYL-TEARDOWN-STARTED (exit 1) and nothing is withdrawn; --all withdraws every other request and warns about those.',
  options: [
    ...SELECTION,
    selectedUnitOption('Tear down this unit (repeatable, or comma-separated).'),
    { name: 'all', type: 'boolean', help: 'Tear down every unit of the environment that has an incarnation (with --cancel: withdraw every request).' },
    {
      name: 'cancel',
      type: 'boolean',
      help: 'Withdraw the teardown requests of the named units (or --all) whose teardown has not started; tears nothing down.',
    },
    ALLOW_DEPENDENTS,
    ALLOW_INCOMPLETE,
    {
      name: 'source',
      type: 'string',
      value: '<rev>',
      help: "Resolve the environment at this revision instead of the Environment's source, for this run only.",
    },
    { name: 'concurrency', type: 'string', value: '<n>', help: 'Teardowns a wave runs at once. Default 4.' },
    { name: 'fail-fast', type: 'boolean', help: 'Start no further teardown after the first failure or uncertain outcome.' },
    ...RUN_OPTIONS,
  ],
  examples: [
    'nyl teardown -e dev --unit cache --reason "replaced by redis"',
    'nyl teardown -e pr-123 --all --reason "pull request closed"',
    'nyl teardown -e dev --unit legacy --allow-incomplete -o json',
    'nyl teardown -e dev --cancel --unit migrate --reason "requested by mistake"',
  ],
  report: 'ReconcileReport',
  // --cancel is a state operation: its report, and its refusals, are StateOperationReports.
  variant: (values) => (values.cancel === true ? { report: 'StateOperationReport', operation: 'teardown-cancel' } : undefined),
  across: { operation: 'teardown', gate: 'dependents', unitsFrom: 'incarnations' },
  async check(p, units) {
    const checks = await import('./checks');
    checks.teardownScope(p, units);
    checks.cancelScope(p);
  },
  async runOne(rt, p, { environment, units }) {
    if (p.values.cancel === true) {
      const [{ teardownCancel }, { common, waitOf }] = await Promise.all([import('./teardown-cancel'), import('../request')]);
      return teardownCancel(rt, { ...common(p, environment), ...waitOf(p), units: p.values.all === true ? 'all' : units });
    }
    const { runOptions } = await import('./run-options');
    const { reconcile } = await import('./reconcile');
    return reconcile(rt, { ...runOptions(p, environment), teardown: { units: p.values.all === true ? 'all' : units } });
  },
  async renderer() {
    const [{ renderReconcile }, { renderStateOperation }] = await Promise.all([import('./render'), import('../text/render')]);
    return (report) => (report.kind === 'StateOperationReport' ? renderStateOperation(report) : renderReconcile(report));
  },
});
