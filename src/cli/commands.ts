/**
 * The command table: names, options and help of every `nyl` command. Kept free of heavy
 * imports so that `nyl --version` and `--help` start fast; handlers are loaded on demand.
 */
export interface OptionSpec {
  name: string;
  short?: string;
  type: 'string' | 'boolean';
  multiple?: boolean;
  /** The value is a comma-separated list of names (each must be non-empty). */
  list?: boolean;
  value?: string;
  help: string;
}

export interface CommandSpec {
  /** Words after `nyl`, e.g. ['state', 'init']. */
  words: string[];
  summary: string;
  usage: string;
  description: string;
  options: OptionSpec[];
  examples: string[];
  /** The operation its reports and refusals name, when not its words joined by '-'. */
  operation?: string;
}

const ENV: OptionSpec = { name: 'environment', short: 'e', type: 'string', value: '<name>', help: 'The environment: a declared one, or an instance of an EnvironmentTemplate (pr-123).' };
/**
 * The selection of the commands that make sense across environments (reconcile, plan, status,
 * teardown, verify): repeated -e, -l labels or -g group, exactly one form. Other commands take
 * one -e and refuse a second.
 */
const SELECTION: OptionSpec[] = [
  { ...ENV, multiple: true, help: 'Select this environment; repeatable. Use exactly one of -e, -l and -g.' },
  { name: 'labels', short: 'l', type: 'string', multiple: true, value: '<key=value>[,<key=value>]', help: 'Select the declared environments that have all these labels (literal values; comma-separated pairs and repeats use AND).' },
  { name: 'group', short: 'g', type: 'string', value: '<name>', help: 'Select the members of this EnvironmentGroup.' },
  {
    name: 'environment-concurrency',
    type: 'string',
    value: '<n>',
    help: 'Environments of a multi-environment run that run at once, where their order allows (reconcile: dependencies first; teardown: consumers first). Default 1.',
  },
];
const REASON: OptionSpec = { name: 'reason', type: 'string', value: '<text>', help: 'Why; recorded as the Nyl-Reason trailer.' };
const WAIT: OptionSpec = { name: 'wait-lease', type: 'string', value: '<duration>', help: 'Wait up to this long (such as 10m; 0s to 24h) while another run holds the lease, instead of exiting 2 with NYL-LEASE-HELD.' };
const WORKTREE: OptionSpec = {
  name: 'worktree',
  type: 'boolean',
  help:
    'Render from a snapshot of the working files (tracked files as modified, deletions, untracked files that are not ignored), the Environment included, instead of a commit; ' +
    'one named environment only; conflicts with --source. The snapshot is pushed with the state (a parent of the desired transition): .gitignore what must not be. Warns NYL-SOURCE-WORKTREE.',
};
const AUTHOR: OptionSpec = { name: 'author', type: 'string', value: '"Name <email>"', help: "Author of the state commits. Default: Git's user.name and user.email." };
const LOCAL: OptionSpec = {
  name: 'local',
  type: 'boolean',
  help: "Operate on the local state repository without fetching, pushing or taking a remote lease: a path or file:// state repository itself, the clone's own branches and lease when the state repository is its origin, else the remote's cache repository (an online command creates it).",
};
const OUTPUT: OptionSpec = { name: 'output', short: 'o', type: 'string', value: '<text|table|json>', help: 'Human-readable output, or the versioned JSON report.' };

const QUIET_UNIT_OUTPUT: OptionSpec = { name: 'quiet-unit-output', type: 'boolean', help: "Hide the tools' own output on stderr (start and end lines stay)." };
const UNIT_LOG_DIR: OptionSpec = { name: 'unit-log-dir', type: 'string', value: '<dir>', help: "Append each unit's output, with its start and end lines, to <dir>/<env>/<unit>.log." };
/** What every run (reconcile, teardown) takes last: its output controls and the shared options. */
const RUN_OPTIONS: OptionSpec[] = [QUIET_UNIT_OUTPUT, UNIT_LOG_DIR, REASON, WAIT, AUTHOR, OUTPUT];
const ALLOW_TEARDOWN: OptionSpec = { name: 'allow-teardown', type: 'boolean', help: 'Start the teardown of units that left the ownership set, or changed their kind, under deletionPolicy: Teardown. Without it they stay pending-teardown (exit 2).' };
const ALLOW_DEPENDENTS: OptionSpec = { name: 'allow-dependents', type: 'boolean', help: 'Tear down a unit although retained tombstones cite it; recorded under allowDependents.' };
const ALLOW_INCOMPLETE: OptionSpec = { name: 'allow-incomplete', type: 'boolean', help: 'Remove a unit whose driver cannot claim its removal (a Command without teardown:) all the same; recorded under incomplete.' };

/** --approve and its companions: reconcile's (and later teardown's) approval flags. */
const APPROVAL_OPTIONS: OptionSpec[] = [
  {
    name: 'approve',
    type: 'string',
    multiple: true,
    list: true,
    value: '<unit>[=<digest>]',
    help: 'Approve a unit that waits for an approval (approval.required, a drift repair or --reapply of a unit not safe to re-run, a manual unit in a --local run). <unit> covers the execution key it resolves to in this run; <unit>=<digest> only the reviewed plan `nyl plan` printed. Repeatable or comma-separated.',
  },
  { name: 'approve-all', type: 'boolean', help: 'Approve every unit that waits for an approval, except those whose policy requires a reviewed digest (requireDigest).' },
  { name: 'approved-by', type: 'string', multiple: true, list: true, value: '<name>', help: 'Who approves (repeatable or comma-separated); recorded as asserted. Default: the CI user (GITHUB_ACTOR, GITLAB_USER_LOGIN, BUILD_REQUESTEDFOR), else the Git user.' },
  { name: 'approval-source', type: 'string', value: '<source>', help: 'Where the --approved-by names come from (such as a change ticket system); recorded with them. Default: asserted.' },
];

export const COMMANDS: CommandSpec[] = [
  {
    words: ['state', 'init'],
    summary: "Create an environment's state",
    usage: 'nyl state init -e <env> [--fresh [--reason <text>]] [options] [PATH]',
    description:
      "Creates state.yaml on the environment's desired and observed refs. Running it again changes nothing. " +
      'A missing local bare repository (an absolute path or file:// URL) is created with its parents. ' +
      '--fresh starts over deliberately: every unit becomes a new incarnation and executes again at the next reconcile; ' +
      'it is also the way to start over at a location whose state was deleted, and at a state repository that has no state ' +
      "while this clone's known branches hold some (re-created empty): a plain init refuses there with NYL-STATE-DIVERGED, " +
      'and --fresh continues the known history so that the branches fast-forward. ' +
      '--reason is recorded with a fresh start (the fresh event and the Nyl-Reason trailer); say why whenever you can.',
    options: [
      ENV,
      { name: 'fresh', type: 'boolean', help: "Start over deliberately: every unit becomes a new incarnation (also after state delete, or where the clone's known branches hold state the repository lacks)." },
      REASON,
      WAIT,
      AUTHOR,
      OUTPUT,
    ],
    examples: ['nyl state init -e dev', 'nyl state init -e dev --fresh --reason "start over after restoring the cluster"'],
  },
  {
    words: ['state', 'move'],
    summary: "Move an environment's state to the location its Environment configures",
    usage: 'nyl state move -e <env> [--from <url|repository|local>] [--desired-ref <ref>] [--observed-ref <ref>] [--state-path <path>] [--coordination-refs <prefix>] [options] [PATH]',
    description:
      'Moves the state to the location the Environment configures now; the options name the old location, each defaulting to the configured value. ' +
      'The history of both state refs moves (every old commit stays an ancestor of the new tips; nothing is rewritten or force-pushed), and units keep their uids, receipts and conditions. ' +
      "First the old location records the move (state.yaml: status moved, movedTo, a moved event; one commit per ref, under the old location's lease), so every command pointed there refuses with NYL-STATE-MOVED; " +
      "then the new location continues that history under its own lease, with the old location's unimported run and evidence refs copied beside it. " +
      'An interrupted move completes when run again. The old refs stay for audit; removing them is a manual step. ' +
      'A move refuses while a run or a broken lease holds the old location (NYL-LEASE-HELD, NYL-LEASE-BROKEN), and when the new location holds other state of the environment (NYL-STATE-MOVE-DESTINATION).',
    options: [
      ENV,
      { name: 'from', type: 'string', value: '<url|repository|local>', help: "The old repository: a URL, a GitRepository's name, or local (the clone's own branches). Default: the configured repository." },
      { name: 'desired-ref', type: 'string', value: '<ref>', help: 'The old desired ref. Default: the configured one.' },
      { name: 'observed-ref', type: 'string', value: '<ref>', help: 'The old observed ref. Default: the configured one.' },
      { name: 'state-path', type: 'string', value: '<path>', help: "The old state.path (the environment's directory on the refs). Default: the configured one." },
      { name: 'coordination-refs', type: 'string', value: '<prefix>', help: 'The old coordinationRefPrefix, such as refs/nyl/. Default: the configured one.' },
      REASON,
      WAIT,
      AUTHOR,
      OUTPUT,
    ],
    examples: [
      'nyl state move -e dev --from https://git.example.com/old-state.git',
      'nyl state move -e dev --desired-ref nyl/dev/desired --observed-ref nyl/dev/observed',
      'nyl state move -e dev --from local',
      'nyl state move -e dev --coordination-refs refs/nyl/',
    ],
  },
  {
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
      { name: 'unit', type: 'string', value: '<name>', help: 'The unit to drop from state. Required.' },
      { ...REASON, help: 'Why; required, recorded as the Nyl-Reason trailer.' },
      WAIT,
      AUTHOR,
      OUTPUT,
    ],
    examples: ['nyl state forget -e dev --unit cache --reason "removed by hand"'],
    // The transition commits say `nyl: forget dev (cache)`; its reports name the same operation.
    operation: 'forget',
  },
  {
    words: ['state', 'restore'],
    summary: "Restore an environment's unit documents to those of an earlier state commit",
    usage: 'nyl state restore -e <env> --to <commit> --reason <text> [options] [PATH]',
    description:
      'Writes forward commits (one per state ref it changes, operation state-restore, never a force push) whose unit documents are those of <commit>, ' +
      "a commit of the first-parent history of the environment's desired or observed ref (on refs shared through path, one that changed the environment's directory); " +
      'the other ref\'s documents come from the commit of the same operation, else its newest commit not newer than <commit>. ' +
      'Current admission stays: state.yaml (generation, status, events), the lease, and holds (a unit held now stays held with its current hold; one not held now is not held by the restore). ' +
      'Incarnations the restore brings back or takes away are listed (details.resurrected, details.dropped) with the warning NYL-RESTORE-INCARNATIONS. ' +
      'It refuses a commit outside the state history (NYL-RESTORE-FOREIGN-COMMIT) and run refs not imported yet (NYL-RESTORE-RUNS-UNIMPORTED), and writes nothing when the documents already are those of <commit>.',
    options: [
      ENV,
      { name: 'to', type: 'string', value: '<commit>', help: 'The state commit whose unit documents to restore: its full id, or an abbreviation of at least 7 hex digits that names one commit of the state history. Required.' },
      { ...REASON, help: 'Why; required, recorded as the Nyl-Reason trailer.' },
      WAIT,
      AUTHOR,
      OUTPUT,
    ],
    examples: ['nyl state restore -e dev --to 3f9c2e1a --reason "undo a bad hand edit of units/db.yaml"'],
  },
  {
    words: ['state', 'reseal'],
    summary: "Seal an environment's sensitive values again with the first key, after a key rotation",
    usage: 'nyl state reseal -e <env> [--reason <text>] [options] [PATH]',
    description:
      'After a rotation (the new key first in NYL_SECRETS_KEY or NYL_SECRETS_KEY_FILE, the old one after it), opens every sealed value of the observed state and seals it again with the first key ' +
      '(aes256gcm:v2, bound to the environment, the unit and the output), and replaces the digest of each by the first key\'s: one observed commit (operation state-reseal), under the lease; ' +
      'the desired state does not change. Values already sealed and digested by the first key are left alone; when nothing changes nothing is written. ' +
      'A value no configured key opens refuses the whole reseal (NYL-RESEAL-UNOPENED, exit 1), and so do run refs not imported yet, whose checkpoints may hold old-key seals (NYL-RESEAL-RUNS-UNIMPORTED, exit 1: import them with nyl reconcile or nyl recover first); nothing is written. ' +
      "Digests of values a Terraform or OpenTofu backend keeps are left (NYL-RESEAL-KEPT): the key they name stays needed until their units execute again (nyl reconcile --unit <unit> --reapply). " +
      'A unit that consumes a value whose digest changed executes once on the next reconcile (NYL-RESEAL-CONSUMERS), since its execution key covers the digest. ' +
      'Remove the old key once the next reconcile has run those consumers. The state history keeps the old seals: after a key leak, rotate the secrets themselves.',
    options: [ENV, REASON, WAIT, AUTHOR, OUTPUT],
    examples: ['nyl state reseal -e prod --reason "yearly key rotation"'],
  },
  {
    words: ['state', 'reset'],
    summary: "Move this machine's local state branches back to the state repository's, after --local runs",
    usage: 'nyl state reset -e <env> --local [--discard <unit>... | --discard-all] [options] [PATH]',
    description:
      "Reads the state repository (online) and moves only local refs to its tips: the clone's branches of the state refs and, for a remote that is not the checkout's origin, " +
      "its cache repository's own branches, which --local runs write. Nothing is pushed. A branch that held local work keeps its old tip under refs/nyl-discarded/<env>/<time>/ in its repository. " +
      'Units whose local receipts the state repository lacks must be named with --discard (repeatable, or comma-separated) or accepted with --discard-all, else it exits 1 with NYL-STATE-RESET-DISCARD listing them. ' +
      "A --local run's lease, run or checkpoint refs must be imported first, as NYL-STATE-LOCAL-WORK names (nyl recover -e <env> --local after nyl lease break -e <env> --local for a killed run; nyl reconcile -e <env> --local for one that ended). --local is required.",
    options: [
      ENV,
      { ...LOCAL, help: 'Required: the reset moves local refs only.' },
      { name: 'discard', type: 'string', multiple: true, list: true, value: '<unit>', help: 'Lose the local receipt of this unit (repeatable, or comma-separated).' },
      { name: 'discard-all', type: 'boolean', help: 'Lose every local receipt the state repository lacks.' },
      { ...REASON, help: 'Why; shown in the report (the reset writes no commit).' },
      { ...WAIT, help: 'Accepted as by every state command; the reset takes no lease (it moves only local refs), so it never waits.' },
      { ...AUTHOR, help: 'Accepted as by every state command; the reset writes no commit.' },
      OUTPUT,
    ],
    examples: ['nyl state reset -e dev --local', 'nyl state reset -e dev --local --discard cache,web', 'nyl state reset -e dev --local --discard-all'],
  },
  {
    words: ['state', 'delete'],
    summary: "Delete an environment's state once no unit has an incarnation",
    usage: 'nyl state delete -e <env> --reason <text> [--teardown [--allow-dependents] [--allow-incomplete] [--source <rev>]] [options] [PATH]',
    description:
      "Removes the environment's state, for template instances and declared environments alike: one commit per state ref (operation state-delete) removes every unit file, " +
      'including held markers and released records, and leaves state.yaml with status: deleted and a state-deleted event. The state refs and their history stay; ' +
      "on refs shared through path only the environment's directory changes. The environment's evidence and signal refs are deleted in the same push. " +
      'It refuses (exit 1, NYL-STATE-DELETE-INCARNATIONS) while a unit still has an incarnation, a teardown in progress or a recorded teardown request, ' +
      'and while a run ref waits for its import. --teardown runs nyl teardown --all first and continues to the deletion once nothing is left: ' +
      'it stops with exit 2 when every remaining unit waits, exit 1 when a teardown failed or is uncertain, and running it again resumes. ' +
      'Every later command for the environment exits 1 with NYL-STATE-DELETED; nyl state init --fresh starts it over.',
    options: [
      ENV,
      { ...REASON, help: 'Why; required. Recorded in the state-deleted event and as the Nyl-Reason trailer.' },
      { name: 'teardown', type: 'boolean', help: 'Tear every unit down first (nyl teardown --all), then delete the state in the same command.' },
      { ...ALLOW_DEPENDENTS, help: `${ALLOW_DEPENDENTS.help} Needs --teardown.` },
      { ...ALLOW_INCOMPLETE, help: `${ALLOW_INCOMPLETE.help} Needs --teardown.` },
      { name: 'source', type: 'string', value: '<rev>', help: "Teardown: render units at this revision instead of the Environment's source. Needs --teardown." },
      WAIT,
      AUTHOR,
      OUTPUT,
    ],
    examples: ['nyl state delete -e pr-123 --reason "pull request closed"', 'nyl state delete -e staging --teardown --reason "decommission staging"'],
  },
  {
    words: ['reconcile'],
    summary: "Execute an environment's ready units in dependency order and record the results",
    usage: 'nyl reconcile (-e <env>... | -l <key=value> | -g <group>) [--unit <name> | --units <a>,<b>] [--approve <unit>[=<digest>]] [--reapply] [--fail-fast] [--concurrency <n>] [--source <rev> | --worktree] [options] [PATH]',
    description:
      "Takes the environment's lease, executes waves of ready units until nothing is ready, writes one transition commit per state ref it changes, " +
      'and releases the lease in the same atomic push. A run that changes nothing writes no commit. ' +
      'A unit that needs an approval (approval.required; a drift repair, --reapply or --local run of a unit under recovery: manual) waits as awaiting-approval until --approve names it. ' +
      'Exit codes: 0 every selected unit is current, 1 an error, 2 something waits (blocked, held, awaiting approval, drifted, lease held), 3 a unit failed, 4 a unit is uncertain, the lease was lost or the run cancelled; 4 > 3 > 1 > 2 > 0.',
    options: [
      ...SELECTION,
      { name: 'unit', type: 'string', multiple: true, list: true, value: '<name>', help: 'Execute only this unit (repeatable); no lifecycle work. <env>/<unit> names a unit of one selected environment; a plain name must exist in every selected one.' },
      { name: 'units', type: 'string', multiple: true, list: true, value: '<a>,<b>', help: 'Execute only these units (comma-separated).' },
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
  },
  {
    words: ['teardown'],
    summary: 'Tear units down through their drivers, consumers first, and record it',
    usage: 'nyl teardown (-e <env>... | -l <key=value> | -g <group>) (--unit <name>... | --all) [--allow-dependents] [--allow-incomplete] [--source <rev>] [options] [PATH]',
    description:
      "A run like reconcile (lease, run ref, signals, takeover of dead runs, one transition commit with the operation teardown) that records a teardown request on each named unit and carries it out, consumers first, whatever the unit's deletionPolicy. " +
      'A unit that others with an incarnation still depend on waits for them (exit 2): name them too. On a held unit the request is only recorded; the first reconcile or teardown after `nyl resume` carries it out. ' +
      'A unit still in the ownership set gets a new incarnation at the next reconcile. Exit codes as reconcile: 0 done, 2 something waits, 3 a teardown failed, 4 one is uncertain.',
    options: [
      ...SELECTION,
      { name: 'unit', type: 'string', multiple: true, list: true, value: '<name>', help: 'Tear down this unit (repeatable, or comma-separated). <env>/<unit> names a unit of one selected environment; a plain name must exist in every selected one.' },
      { name: 'all', type: 'boolean', help: 'Tear down every unit of the environment that has an incarnation.' },
      ALLOW_DEPENDENTS,
      ALLOW_INCOMPLETE,
      { name: 'source', type: 'string', value: '<rev>', help: "Resolve the environment at this revision instead of the Environment's source, for this run only." },
      { name: 'concurrency', type: 'string', value: '<n>', help: 'Teardowns a wave runs at once. Default 4.' },
      { name: 'fail-fast', type: 'boolean', help: 'Start no further teardown after the first failure or uncertain outcome.' },
      ...RUN_OPTIONS,
    ],
    examples: ['nyl teardown -e dev --unit cache --reason "replaced by redis"', 'nyl teardown -e pr-123 --all --reason "pull request closed"', 'nyl teardown -e dev --unit legacy --allow-incomplete -o json'],
  },
  {
    words: ['recover'],
    summary: 'Import a broken run, retry a unit, or adopt a checkpoint',
    usage: 'nyl recover -e <env> [--unit <name> (--retry | --accept <run>)] [--reason <text>] [options] [PATH]',
    description:
      'Without --unit, imports the run of a broken lease without executing anything: checkpoints with the current execution key become receipts, ' +
      'units the run left without a checkpoint become uncertain. --unit U --retry clears the unit\'s condition so the next reconcile executes it; ' +
      '--unit U --accept RUN adopts the receipt RUN checkpointed, when its execution key and uid equal the unit\'s desired document. ' +
      'One transition commit; exit 0 also when units are left uncertain.',
    options: [
      ENV,
      { name: 'unit', type: 'string', value: '<name>', help: 'The unit to recover; needs --retry or --accept.' },
      { name: 'retry', type: 'boolean', help: 'Clear the condition; the next reconcile executes the unit.' },
      { name: 'accept', type: 'string', value: '<run>', help: 'Adopt what this run checkpointed for the unit. Needs --unit and --reason.' },
      LOCAL,
      REASON,
      WAIT,
      AUTHOR,
      OUTPUT,
    ],
    examples: [
      'nyl recover -e dev --reason "the CI runner was killed"',
      'nyl recover -e dev --unit migrate --retry --reason "verified nothing was applied"',
      'nyl recover -e dev --unit database --accept 0192f0c4-8d0a-7c3e-9a51-3c1f0e7d2b90 --reason "the runner finished after losing its lease"',
    ],
  },
  {
    words: ['lease', 'break'],
    summary: 'Declare the holder of the lease gone',
    usage: 'nyl lease break -e <env> --reason <text> [options] [PATH]',
    description:
      'Marks the lease broken, for example after a runner was killed. Only an importer (nyl reconcile, nyl recover -e <env>) takes a broken lease over, ' +
      'and records the break in its transition commit; until then every other state writer refuses with NYL-LEASE-BROKEN. A lease already broken is reported as such. ' +
      'With --wait-lease, a holder that releases the lease in time is not broken.',
    options: [ENV, REASON, { ...WAIT, help: 'Give the holder up to this long (such as 10m; 0s to 24h) to release the lease by itself; break it only if it still holds it then.' }, LOCAL, AUTHOR, OUTPUT],
    examples: [
      'nyl lease break -e dev --reason "runner was killed"',
      'nyl lease break -e dev --wait-lease 10m --reason "runner stopped reporting"',
      'nyl lease break -e dev --local --reason "local run was killed"',
    ],
  },
  {
    words: ['hold'],
    summary: 'Freeze a unit: reconcile changes nothing about it until resume',
    usage: 'nyl hold -e <env> --unit <name> [--reason <text>] [options] [PATH]',
    description:
      'Writes one desired commit that holds the unit at the desired document of its latest receipt (a unit that never ran gets a held marker), without touching its resources ' +
      'and without rendering source. While a reconcile holds the lease, the hold is delivered to that run (NYL-HOLD-DELIVERED), which records it. Holding a held unit changes nothing.',
    options: [ENV, { name: 'unit', type: 'string', value: '<name>', help: 'The unit to hold. Required.' }, REASON, WAIT, AUTHOR, OUTPUT],
    examples: ['nyl hold -e dev --unit database --reason "incident 4711"'],
  },
  {
    words: ['resume'],
    summary: 'Lift a hold',
    usage: 'nyl resume -e <env> --unit <name> [--reason <text>] [options] [PATH]',
    description:
      "Lifts the hold only: keeps the unit's uid, receipt and condition. The next reconcile renders the unit from source again and applies what changed. Resuming a unit that is not held changes nothing.",
    options: [ENV, { name: 'unit', type: 'string', value: '<name>', help: 'The unit to resume. Required.' }, REASON, WAIT, AUTHOR, OUTPUT],
    examples: ['nyl resume -e dev --unit database --reason "incident 4711 resolved"'],
  },
  {
    words: ['status'],
    summary: 'Show the units of an environment and what needs attention',
    usage: 'nyl status (-e <env>... | -l <key=value> | -g <group>) [-o table|json] [PATH]',
    description:
      'Lists each unit of the environment with its kind, state, receipt, last run and detail, then warnings with their fixes. ' +
      'Exit codes follow reconcile: 0 everything current, 2 something waits (pending, blocked, held), 3 a unit failed, 4 a unit is uncertain, 1 an error.',
    options: [...SELECTION, OUTPUT],
    examples: ['nyl status -e dev', 'nyl status -e dev -o json'],
  },
  {
    words: ['plan'],
    summary: 'Say what the next reconcile would do, per unit and why, without taking a lease or writing anything',
    usage: 'nyl plan (-e <env>... | -l <key=value> | -g <group>) [--unit <name> | --units <a>,<b>] [--source <rev> | --worktree] [-o table|json] [PATH]',
    description:
      'Resolves the environment exactly as the next reconcile would and lists, per unit, what it would do (ACTION: execute, wait, current, blocked, held, awaiting-approval, drifted, teardown, retain, release, pending-teardown, ...) and why (the leaving section first). ' +
      "For every unit that would execute it shows the digest that a plan-bound approval names (nyl reconcile --approve <unit>=<digest>): for Terraform and OpenTofu units the driver's plan runs in a scratch copy of the source commit (its output on stderr) and the row shows its change summary; for other kinds the digest is the execution key. " +
      'A unit that waits for its dependencies, or gets its first incarnation, has no digest yet. A unit whose rendering changed shows the diff of its desired rendering against the recorded one. ' +
      'Takes no lease and writes nothing: no state ref, no run ref, not even a ref of this clone. ' +
      'A unit whose run: hands a ${{ }} reference to a shell as its text (sh -c "... ${{ units.db.outputs.url }} ...") is warned about (NYL-SOURCE-SHELL-REFERENCE): pass the value through env: instead. ' +
      'Exit codes as reconcile: 0 nothing to do, 2 something would change or waits, 3 a unit failed and needs an operator, 4 a unit is uncertain, 1 an error.',
    options: [
      ...SELECTION,
      { name: 'unit', type: 'string', multiple: true, list: true, value: '<name>', help: 'Plan only this unit (repeatable), as reconcile --unit would run it. <env>/<unit> names a unit of one selected environment; a plain name must exist in every selected one.' },
      { name: 'units', type: 'string', multiple: true, list: true, value: '<a>,<b>', help: 'Plan only these units (comma-separated).' },
      { name: 'source', type: 'string', value: '<rev>', help: "Render units at this revision instead of the Environment's source." },
      WORKTREE,
      OUTPUT,
    ],
    examples: ['nyl plan -e prod', 'nyl plan -e prod -o json', 'nyl plan -e prod --unit network', 'nyl plan -e prod --source release-42', 'nyl plan -e dev --worktree'],
  },
  {
    words: ['verify'],
    summary: "Run each unit's drift check and record what it observed",
    usage: 'nyl verify (-e <env>... | -l <key=value> | -g <group>) [--unit <name>] [options] [PATH]',
    description:
      "A state operation: takes the environment's lease, runs the drift check of every unit with a receipt (a Command's check:, a Terraform or OpenTofu refresh-only plan; kinds without a check are recorded unknown) " +
      'against the rendering and source commit its receipt was produced for, and writes one observed commit with the operation verify that records drift: {status, observedAt, run, receipt, detail} per unit, keeping the last 10 observations. ' +
      'Units without a receipt, held units and tombstones are skipped and listed with why. Nothing executes, and the desired state never changes. ' +
      'The next reconcile repairs a drifted unit as the Environment\'s driftRepair says. Run it from a scheduled CI job to detect drift. ' +
      'Exit codes: 0 nothing drifted, 2 a unit drifted (or the lease is held), 1 a check failed or an error.',
    options: [...SELECTION, { name: 'unit', type: 'string', multiple: true, list: true, value: '<name>', help: 'Check only this unit (repeatable). <env>/<unit> names a unit of one selected environment; a plain name must exist in every selected one.' }, WAIT, AUTHOR, OUTPUT],
    examples: ['nyl verify -e prod', 'nyl verify -e prod --unit network -o json'],
  },
  {
    words: ['log'],
    summary: "Show the environment's history: one entry per operation, newest first",
    usage: 'nyl log -e <env> [--unit <name>] [-n <count>] [-o text|json] [PATH]',
    description:
      "Reads the transition commits of the environment's desired and observed refs (first parents; through a state move's second parent to the old location's history) and merges them into one entry per operation: " +
      'a desired and an observed commit with the same message and commit time are one operation, and an operation that changed one ref only is an entry of its own. ' +
      'Each entry shows when, the operation, who asked (Nyl-Requested-By, else the author), why (Nyl-Reason), the run, the source, the commits and what happened to each unit it names. ' +
      "On state refs shared through state.path only the commits that changed this environment's directory are shown. --unit follows one unit: the operations that name it or changed its documents. " +
      'Shows the newest 20 entries unless -n says otherwise (-n 0: all). A deleted or moved state still shows its history, with a warning. Takes no lease and writes nothing. Exit 0, or 1 on an error.',
    options: [
      ENV,
      { name: 'unit', type: 'string', value: '<name>', help: 'Only the operations that name this unit or changed its desired or observed document.' },
      { name: 'max-count', short: 'n', type: 'string', value: '<count>', help: 'Show at most this many entries, newest first. Default 20; 0 shows all.' },
      LOCAL,
      OUTPUT,
    ],
    examples: ['nyl log -e prod', 'nyl log -e prod --unit database -n 5', 'nyl log -e prod -n 0 -o json'],
  },
  {
    words: ['show'],
    summary: "Show one unit's documents, receipt, outputs and last runs",
    usage: 'nyl show -e <env> --unit <name> [-o text|json] [PATH]',
    description:
      "Prints the unit's receipt (run, execution key, when it finished, its outputs: a sensitive output by its keyed digest only, which tells nothing without the key, never its value), its condition, hold and drift, " +
      'its desired document from the desired ref and its observed document, and the last 5 operations that named it or changed its documents (as nyl log --unit shows them). ' +
      'An unknown unit is NYL-UNIT-UNKNOWN. Takes no lease and writes nothing. Exit 0, or 1 on an error.',
    options: [ENV, { name: 'unit', type: 'string', value: '<name>', help: 'The unit to show. Required.' }, LOCAL, OUTPUT],
    examples: ['nyl show -e prod --unit database', 'nyl show -e prod --unit database -o json'],
  },
  {
    words: ['outputs'],
    summary: "Print the outputs of the units' receipts, for scripts",
    usage: 'nyl outputs -e <env> [--unit <name>] [-o text|json] [PATH]',
    description:
      "Text: one KEY=VALUE line per output (UNIT.KEY=VALUE without --unit), a one-line string as it is and any other value as JSON; read it with `while IFS='=' read -r key value`, not with eval. " +
      'JSON: outputs is {unit: {key: value}}, or {key: value} with --unit. A sensitive output is never printed: text shows KEY=(sensitive), and JSON leaves it out of outputs and names it under sensitive. ' +
      'Units without a receipt have no outputs. An unknown --unit is NYL-UNIT-UNKNOWN. Takes no lease and writes nothing. Exit 0, or 1 on an error.',
    options: [ENV, { name: 'unit', type: 'string', value: '<name>', help: "Only this unit's outputs, as {key: value}." }, LOCAL, OUTPUT],
    examples: ['nyl outputs -e prod', 'nyl outputs -e prod --unit database -o json | jq -r .outputs.url'],
  },
  {
    words: ['graph'],
    summary: "Draw the dependency graph of an environment's units, each with its state",
    usage: 'nyl graph -e <env> [-o text|dot|mermaid|json] [PATH]',
    description:
      'Each unit of the environment with its state as nyl status resolves it (current, pending, failed, held, uncertain, ...), and an edge from each unit to every unit that waits for it: ' +
      "an explicit dependsOn, a triggers entry, or a reference to its outputs (the edge names the output and where the consumer's spec reads it). " +
      'Text is an indented tree from the units that depend on nothing (a unit with several dependencies is written in full once, then as "(see above)"); ' +
      '-o dot writes Graphviz (dot -Tsvg), -o mermaid a Mermaid flowchart, -o json the GraphReport. Takes no lease and writes nothing. Exit 0, or 1 on an error.',
    options: [ENV, LOCAL, { ...OUTPUT, value: '<text|dot|mermaid|json>', help: 'An indented tree, Graphviz DOT, a Mermaid flowchart, or the versioned JSON report.' }],
    examples: ['nyl graph -e dev', 'nyl graph -e dev -o dot | dot -Tsvg > dev.svg', 'nyl graph -e dev -o mermaid'],
  },
  {
    words: ['doctor', 'host'],
    summary: 'Check whether a Git host can hold orchestration state',
    usage: 'nyl doctor host <url> [--prefix <refs/.../>] [-o text|json]',
    description:
      'Runs the five pushes of the host check against a scratch namespace of the repository at <url> (refs/heads/nyl-doctor/ and <prefix>nyl-doctor/): create a state branch and a lease ref in one atomic push, ' +
      'a stale lease must reject the whole push, matching leases move both, the lease ref is listed by pattern, both are deleted together. ' +
      'It checks the default coordination prefix refs/nyl/ and the branch prefix refs/heads/nyl-run/, or only --prefix, and deletes everything it created, and what an earlier run killed midway left. ' +
      'Use a scratch repository. Exit 0 when a prefix works (a warning names state.coordinationRefPrefix when only the branch prefix does), 1 when none does (NYL-HOST-INCOMPATIBLE, naming atomic pushes when the host lacks them).',
    options: [{ name: 'prefix', type: 'string', value: '<refs/.../>', help: 'Check only this coordination prefix (a ref namespace ending in /).' }, OUTPUT],
    examples: ['nyl doctor host https://git.example.com/platform/scratch.git', 'nyl doctor host ssh://git@git.example.com/platform/scratch.git --prefix refs/heads/nyl-run/ -o json'],
  },
  {
    words: ['ui'],
    summary: 'Serve a read-only web view of the environments, units, runs and history',
    usage: 'nyl ui [--listen <host>:<port>] [--allow-host <name>] [--poll-interval <duration>] [--local] [PATH]',
    description:
      'Serves pages rendered from the state refs (no database, nothing to install): the environments with their units\' states, last operation and lease holder; ' +
      'per environment the units with their state and why each one waits (the planner\'s reason), the dependency graph drawn, and the latest operations; ' +
      'per unit its receipt, outputs (a sensitive output by its name only: no value, no digest), condition, hold and documents; the history with who asked and why; and each run\'s units. ' +
      'Open pages refresh when the state refs change. It answers GET and HEAD only, only requests addressed to one of its own names (on loopback, the default 127.0.0.1:4780, its loopback addresses and localhost), ' +
      "and never another site's page but to open one of its pages; an address that is not loopback warns NYL-UI-EXPOSED. Takes no lease and writes no state. Runs until interrupted (Ctrl-C), then exits 0.",
    options: [
      { name: 'listen', type: 'string', value: '<host>:<port>', help: 'The address to serve on. Default 127.0.0.1:4780; port 0 takes any free port. A bare port means 127.0.0.1:<port>.' },
      { name: 'allow-host', type: 'string', multiple: true, value: '<name>', help: 'Also answer requests addressed to this host name (a proxy in front of nyl ui); repeatable. localhost is always answered, and off loopback this machine\'s name.' },
      { name: 'poll-interval', type: 'string', value: '<duration>', help: 'How often an open page asks whether the state refs changed (the refs are read at most this often). Default 2s.' },
      LOCAL,
    ],
    examples: ['nyl ui', 'nyl ui --listen 127.0.0.1:0 ./infra', 'nyl ui --listen 8080 --poll-interval 10s'],
  },
];

export function findCommand(args: string[]): { spec: CommandSpec; rest: string[] } | undefined {
  for (const spec of COMMANDS) {
    if (spec.words.every((w, i) => args[i] === w)) return { spec, rest: args.slice(spec.words.length) };
  }
  return undefined;
}

/**
 * The first word of commands that have subcommands (`state`, `lease`) when args name no command:
 * `nyl state`, `nyl state --help` list the subcommands, as `git remote -h` does.
 */
export function groupOf(args: string[]): string | undefined {
  const word = args[0];
  return word !== undefined && subcommandsOf(word).length > 0 ? word : undefined;
}

/** The subcommands of a group (`state` -> state init, state show, ...), in table order; none for another word. */
export function subcommandsOf(group: string): CommandSpec[] {
  return COMMANDS.filter((c) => c.words.length > 1 && c.words[0] === group);
}

export function groupHelp(word: string): string {
  const subs = subcommandsOf(word);
  const width = Math.max(...subs.map((c) => c.words.slice(1).join(' ').length)) + 2;
  return [
    `Usage: nyl ${word} <subcommand> [options] [PATH]`,
    '',
    'Subcommands:',
    ...subs.map((c) => `  ${c.words.slice(1).join(' ').padEnd(width)}${c.summary}`),
    '',
    `See nyl ${word} <subcommand> --help for its options.`,
    '',
  ].join('\n');
}

/** Commands outside the table: main.ts answers them without dispatch (shown in the main help). */
export const EXTRA_COMMANDS: [words: string, summary: string][] = [['completion', 'Print a shell completion script: nyl completion bash|zsh|fish']];

/** The option every command accepts; main.ts takes it off the command line. */
export const NO_COLOR_HELP = 'No colour (also NO_COLOR=1; colour is only used on a terminal).';

export function commandHelp(spec: CommandSpec): string {
  const lines = [`nyl ${spec.words.join(' ')}: ${spec.summary}`, '', `Usage: ${spec.usage}`, '', wrap(spec.description, 100), '', 'Options:'];
  const rows = spec.options.map((o) => [`${o.short ? `-${o.short}, ` : '    '}--${o.name}${o.value ? ` ${o.value}` : ''}`, o.help] as const);
  rows.push(['    --help', 'Show this help.'], ['    --no-color', NO_COLOR_HELP]);
  const width = Math.max(...rows.map((r) => r[0].length)) + 2;
  for (const [left, right] of rows) lines.push(`  ${left.padEnd(width)}${right}`);
  lines.push(`  ${'[PATH]'.padEnd(width)}The project directory or a path beneath it. Default: .`);
  if (spec.examples.length > 0) lines.push('', 'Examples:', ...spec.examples.map((e) => `  ${e}`));
  return `${lines.join('\n')}\n`;
}

export function mainHelp(version: string): string {
  const rows: [string, string][] = [...COMMANDS.map((c): [string, string] => [c.words.join(' '), c.summary]), ...EXTRA_COMMANDS];
  const width = Math.max(...rows.map(([w]) => w.length)) + 2;
  return [
    `nyl ${version}: reconciles units into environments and keeps all orchestration state in Git`,
    '',
    'Usage: nyl <command> [options] [PATH]',
    '',
    'Commands:',
    ...rows.map(([w, summary]) => `  ${w.padEnd(width)}${summary}`),
    '',
    'Global options:',
    '  --help      Show help (also after a command: nyl status --help, nyl state --help).',
    '  --version   Print the version.',
    `  --no-color  ${NO_COLOR_HELP}`,
    '',
    'Exit codes: 0 done or nothing to change, 1 error or refusal, 2 waiting (lease held, blocked, held),',
    '3 a unit failed, 4 a unit is uncertain, the lease was lost, or the run was cancelled.',
    '',
  ].join('\n');
}

function wrap(text: string, width: number): string {
  const out: string[] = [];
  let line = '';
  for (const word of text.split(/\s+/)) {
    if (line && line.length + word.length + 1 > width) {
      out.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) out.push(line);
  return out.join('\n');
}
