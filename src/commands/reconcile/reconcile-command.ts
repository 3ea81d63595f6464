/**
 * `nyl reconcile`: execute an environment's ready units in dependency order and record the
 * results; across environments, dependencies first, each gated on those it depends on. Also its
 * approval flags (--approve and its companions), declared and read here as given: the run checks
 * them against the environment.
 */
import type { ReconcileReport } from '../../report/types';
import { acrossCommand } from '../across';
import type { Command, OptionSpec, ParsedCommand } from '../command';
import { ALLOW_DEPENDENTS, ALLOW_INCOMPLETE, ALLOW_TEARDOWN, LOCAL, RUN_OPTIONS, SELECTION, WORKTREE, selectedUnitOption } from '../options';

/** --approve and its companions: reconcile's (and later teardown's) approval flags. */
const APPROVAL_OPTIONS: OptionSpec[] = [
  {
    name: 'approve',
    completes: 'units',
    type: 'string',
    multiple: true,
    list: true,
    value: '<unit>[=<digest>]',
    help: 'Approve a unit that waits for an approval (approval.required, a drift repair or --reapply of a unit not safe to re-run, a manual unit in a --local run). <unit> covers the execution key it resolves to in this run; <unit>=<digest> only the reviewed plan `nyl plan` printed. Repeatable or comma-separated.',
  },
  {
    name: 'approve-all',
    type: 'boolean',
    help: 'Approve every unit that waits for an approval, except those whose policy requires a reviewed digest (requireDigest).',
  },
  {
    name: 'approved-by',
    type: 'string',
    multiple: true,
    list: true,
    value: '<name>',
    help: 'Who approves (repeatable or comma-separated); recorded as asserted. Default: the CI user (GITHUB_ACTOR, GITLAB_USER_LOGIN, BUILD_REQUESTEDFOR), else the Git user.',
  },
  {
    name: 'approval-source',
    type: 'string',
    value: '<source>',
    help: 'Where the --approved-by names come from (such as a change ticket system); recorded with them. Default: asserted.',
  },
];

/** --approve, --approve-all, --approved-by, --approval-source, as given (checked against the environment later). */
async function approvalOptions(p: ParsedCommand) {
  const { listOpt, stringOpt } = await import('../request');
  const source = stringOpt(p, 'approval-source');
  return {
    approve: listOpt(p, 'approve'),
    approveAll: p.values['approve-all'] === true,
    approvedBy: listOpt(p, 'approved-by'),
    ...(source !== undefined ? { approvalSource: source } : {}),
  };
}

export const reconcileCommand: Command = acrossCommand<ReconcileReport>({
  words: ['reconcile'],
  summary: "Execute an environment's ready units in dependency order and record the results",
  usage:
    'nyl reconcile (-e <env>... | -l <key=value> | -g <group>) [--unit <name> | --units <a>,<b>] [--approve <unit>[=<digest>]] [--reapply] [--fail-fast] [--concurrency <n>] [--source <rev> | --worktree] [options] [PATH]',
  description:
    "Takes the environment's lease, executes waves of ready units until nothing is ready, writes one transition commit per state ref it changes, " +
    'and releases the lease in the same atomic push. A run that changes nothing writes no commit. ' +
    'A unit that needs an approval (approval.required; a drift repair, --reapply or --local run of a unit under recovery: manual) waits as awaiting-approval until --approve names it. ' +
    'Exit codes: 0 every selected unit is current, 1 an error, 2 something waits (blocked, held, awaiting approval, drifted, lease held), 3 a unit failed, 4 a unit is uncertain, the lease was lost or the run cancelled; 4 > 3 > 1 > 2 > 0.',
  options: [
    ...SELECTION,
    selectedUnitOption('Execute only this unit (repeatable); no lifecycle work.'),
    { name: 'units', completes: 'units', type: 'string', multiple: true, list: true, value: '<a>,<b>', help: 'Execute only these units (comma-separated).' },
    { name: 'fail-fast', type: 'boolean', help: 'Start no further unit after the first failure or uncertain outcome.' },
    { name: 'concurrency', type: 'string', value: '<n>', help: 'Units a wave executes at once. Default 4.' },
    { name: 'source', type: 'string', value: '<rev>', help: "Render units at this revision instead of the Environment's source, for this run only." },
    WORKTREE,
    ALLOW_TEARDOWN,
    ALLOW_DEPENDENTS,
    ALLOW_INCOMPLETE,
    { name: 'leaving', type: 'boolean', help: 'Do only the lifecycle work of units outside the ownership set. Conflicts with --unit.' },
    {
      name: 'reapply',
      type: 'boolean',
      help: 'Execute the units named by --unit although their receipts are current, such as to repair drift under driftRepair: manual. Needs --unit and --reason; recorded under reapplied. A unit that is not safe to re-run awaits approval, or runs with --approve.',
    },
    ...APPROVAL_OPTIONS,
    LOCAL,
    ...RUN_OPTIONS,
  ],
  examples: [
    'nyl reconcile -e dev',
    'nyl reconcile -e dev --units database,migrate --concurrency 2',
    'nyl reconcile -e dev --fail-fast -o json',
    'nyl reconcile -e dev --worktree',
    'nyl reconcile -e dev --allow-teardown',
    'nyl reconcile -e dev --leaving --allow-teardown',
    'nyl reconcile -e prod --approve migrate',
    'nyl reconcile -e prod --approve network=sha256:<digest from nyl plan>',
    'nyl reconcile -e dev --unit config --reapply --reason "rotate credentials"',
  ],
  report: 'ReconcileReport',
  across: { operation: 'reconcile', gate: 'dependencies', unitsFrom: 'source' },
  async check(p, units) {
    const { leavingConflict, reapplyOf } = await import('./checks');
    leavingConflict(p, units);
    reapplyOf(p, units);
  },
  async runOne(rt, p, { environment, units }) {
    const { worktreeOf } = await import('../request');
    const { reapplyOf } = await import('./checks');
    const { runOptions } = await import('./run-options');
    const { reconcile } = await import('./reconcile');
    const worktree = await worktreeOf(p);
    return reconcile(rt, {
      ...runOptions(p, environment),
      ...(worktree ? { worktree } : {}),
      allowTeardown: p.values['allow-teardown'] === true,
      leaving: p.values.leaving === true,
      ...(units.length > 0 ? { units } : {}),
      ...(reapplyOf(p, units) ? { reapply: true } : {}),
      approval: await approvalOptions(p),
    });
  },
  async renderer() {
    return (await import('./render')).renderReconcile;
  },
});
