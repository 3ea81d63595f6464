/**
 * The options several commands share, declared once: the environment and its selection, the
 * reason, lease wait, author, --local, -o, --worktree, and what runs and approvals take. A command
 * spreads or overrides them in its own option list (its help text may differ).
 */
import type { OptionSpec } from './command';

export const ENV: OptionSpec = {
  name: 'environment',
  short: 'e',
  type: 'string',
  value: '<name>',
  completes: 'environments',
  help: 'The environment: a declared one, or an instance of an EnvironmentTemplate (pr-123).',
};
/**
 * The selection of the commands that make sense across environments (reconcile, plan, status,
 * teardown, verify): repeated -e, -l labels or -g group, exactly one form. Other commands take
 * one -e and refuse a second.
 */
export const SELECTION: OptionSpec[] = [
  { ...ENV, multiple: true, help: 'Select this environment; repeatable. Use exactly one of -e, -l and -g.' },
  {
    name: 'labels',
    short: 'l',
    type: 'string',
    multiple: true,
    value: '<key=value>[,<key=value>]',
    help: 'Select the declared environments that have all these labels (literal values; comma-separated pairs and repeats use AND).',
  },
  { name: 'group', short: 'g', type: 'string', value: '<name>', completes: 'groups', help: 'Select the members of this EnvironmentGroup.' },
  {
    name: 'environment-concurrency',
    type: 'string',
    value: '<n>',
    help: 'Environments of a multi-environment run that run at once, where their order allows (reconcile: dependencies first; teardown: consumers first). Default 1.',
  },
];
export const REASON: OptionSpec = { name: 'reason', type: 'string', value: '<text>', help: 'Why; recorded as the Nyl-Reason trailer.' };
export const WAIT: OptionSpec = {
  name: 'wait-lease',
  type: 'string',
  value: '<duration>',
  help: 'Wait up to this long (such as 10m; 0s to 24h) while another run holds the lease, instead of exiting 2 with NYL-LEASE-HELD.',
};
export const WORKTREE: OptionSpec = {
  name: 'worktree',
  type: 'boolean',
  help:
    'Render from a snapshot of the working files (tracked files as modified, deletions, untracked files that are not ignored), the Environment included, instead of a commit; ' +
    'one named environment only; conflicts with --source. The snapshot is pushed with the state (a parent of the desired transition): .gitignore what must not be. Warns NYL-SOURCE-WORKTREE.',
};
/**
 * `--unit` of a command that selects environments: repeatable, comma lists, unit names completed;
 * `does` says what it does to the unit, and the help adds how a name picks its environment.
 */
export function selectedUnitOption(does: string): OptionSpec {
  return {
    name: 'unit',
    completes: 'units',
    type: 'string',
    multiple: true,
    list: true,
    value: '<name>',
    help: `${does} <env>/<unit> names a unit of one selected environment; a plain name must exist in every selected one.`,
  };
}
export const AUTHOR: OptionSpec = {
  name: 'author',
  type: 'string',
  value: '"Name <email>"',
  help: "Author of the state commits. Default: Git's user.name and user.email.",
};
export const LOCAL: OptionSpec = {
  name: 'local',
  type: 'boolean',
  help: "Operate on the local state repository without fetching, pushing or taking a remote lease: a path or file:// state repository itself, the clone's own branches and lease when the state repository is its origin, else the remote's cache repository (an online command creates it).",
};
export const OUTPUT: OptionSpec = {
  name: 'output',
  short: 'o',
  type: 'string',
  value: '<text|table|json>',
  choices: ['text', 'table', 'json'],
  help: 'Human-readable output, or the versioned JSON report.',
};

const QUIET_UNIT_OUTPUT: OptionSpec = { name: 'quiet-unit-output', type: 'boolean', help: "Hide the tools' own output on stderr (start and end lines stay)." };
const UNIT_LOG_DIR: OptionSpec = {
  name: 'unit-log-dir',
  type: 'string',
  value: '<dir>',
  help: "Append each unit's output, with its start and end lines, to <dir>/<env>/<unit>.log.",
};
/** What every run (reconcile, teardown) takes last: its output controls and the shared options. */
export const RUN_OPTIONS: OptionSpec[] = [QUIET_UNIT_OUTPUT, UNIT_LOG_DIR, REASON, WAIT, AUTHOR, OUTPUT];
export const ALLOW_TEARDOWN: OptionSpec = {
  name: 'allow-teardown',
  type: 'boolean',
  help: 'Start the teardown of units that left the ownership set, or changed their kind, under deletionPolicy: Teardown. Without it they stay pending-teardown (exit 2).',
};
export const ALLOW_DEPENDENTS: OptionSpec = {
  name: 'allow-dependents',
  type: 'boolean',
  help: 'Tear down a unit although retained tombstones cite it; recorded under allowDependents.',
};
export const ALLOW_INCOMPLETE: OptionSpec = {
  name: 'allow-incomplete',
  type: 'boolean',
  help: 'Remove a unit whose driver cannot claim its removal (a Command without teardown:) all the same; recorded under incomplete.',
};
