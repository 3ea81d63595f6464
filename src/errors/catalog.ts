/**
 * The one registry of Nyl's error and warning codes.
 *
 * Every code Nyl raises lives here with the exit category it maps to and the fix shown to
 * users. Operations raise codes with a message and parameters; only the CLI turns them into text,
 * JSON and exit codes. Tests assert codes, never wording.
 */

/** Exit categories: 0 informational, 1 refusal/config, 2 waiting, 3 failed, 4 uncertain. */
export type ExitCategory = 0 | 1 | 2 | 3 | 4;

export interface FixParams {
  env?: string;
  unit?: string;
  units?: string[];
  [key: string]: unknown;
}

interface CodeSpec {
  exit: ExitCategory;
  /** What the code means, for docs and `nyl help codes`. */
  summary: string;
  fix: (p: FixParams) => string;
}

const e = (p: FixParams): string => p.env ?? '<env>';
const u = (p: FixParams): string => p.unit ?? '<unit>';
/** "did you mean X? ", when the raiser found a known name close to the one given (`guess`). */
const meant = (p: FixParams): string => (typeof p.guess === 'string' ? `did you mean ${p.guess}? ` : '');
/** An item of a YAML flow list: plain when YAML reads it back as the same string, else single-quoted. */
const flowItem = (w: string): string => (/^[A-Za-z0-9_.\/-][A-Za-z0-9_.\/*?-]*$/.test(w) ? w : `'${w.replace(/'/g, "''")}'`);
/** A word as sh reads it back, so that a fix naming a path runs as printed: as it is, or single-quoted. */
const shWord = (w: string): string => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);

export const CATALOG = {
  'NYL-PROJECT-MISSING': {
    exit: 1,
    summary: 'No nyl.yaml was found in the directory or any parent.',
    fix: (p) => String(p.fix ?? 'run nyl inside a project, or pass its directory as [PATH]'),
  },
  'NYL-SOURCE-INVALID': {
    exit: 1,
    summary: 'The project source does not validate.',
    fix: (p) => String(p.fix ?? 'correct the source and commit it'),
  },
  'NYL-SOURCE-SHELL-REFERENCE': {
    exit: 0,
    summary: 'A reference stands in the text a `run:` argv hands to a shell (`sh -c TEXT`): the value is substituted into shell code.',
    fix: (p) => {
      const where = p.action ? ` to ${String(p.action)}:` : '';
      const env = String(p.envEntries ?? "{NAME: '${{ units.NAME.outputs.KEY }}'}");
      const argv = String(p.argv ?? "[sh, -c, '... \"$1\" ...', sh, '${{ units.NAME.outputs.KEY }}']");
      return (
        `pass the value as an environment variable: add env: ${env}${where} and read ${String(p.variables ?? '"$NAME"')} in the script instead; ` +
        `or pass it as an argument after the script: run: ${argv}${where ? ` in ${String(p.action)}:` : ''}, and read ${String(p.positional ?? '"$1"')}`
      );
    },
  },
  'NYL-SOURCE-UNCOMMITTED': {
    exit: 0,
    summary:
      "Working files the rendering reads (nyl.yaml, included files, module directories, inputs, a Command's program and the paths its script names) differ from HEAD, the commit it renders: the command does not see those edits.",
    fix: (p) => {
      const paths = (p.paths as string[] | undefined) ?? [];
      const dir = p.projectDir ? ` -C ${shWord(String(p.projectDir))}` : '';
      const commit =
        paths.length > 0 && paths.length <= 20
          ? `commit them: \`git${dir} add -A -- ${paths.map(shWord).join(' ')} && git${dir} commit\``
          : `commit them (\`git${dir} status\` lists them)`;
      const path = p.projectDir ? ` ${shWord(String(p.projectDir))}` : '';
      return `${commit}; or render the working files as they are: \`nyl ${String(p.rerun ?? 'plan')} -e ${e(p)} --worktree${path}\``;
    },
  },
  'NYL-SOURCE-UNDECLARED-READ': {
    exit: 0,
    summary:
      "A Command's run: or script: names source paths that no inputs glob covers: a change there does not run the unit again (a heuristic: path-like words naming files of the source).",
    fix: (p) => {
      const globs = ((p.inputs as string[] | undefined) ?? ['<glob>']).map(flowItem).join(', ');
      const add = p.hasInputs ? `add ${globs} to the inputs: list of ${u(p)}` : `add inputs: [${globs}] to the spec of ${u(p)}`;
      return `${add} (relative to the project root), so that a change there runs it again; if the unit does not read them, nothing needs doing`;
    },
  },
  'NYL-SOURCE-UNREACHABLE': {
    exit: 1,
    summary: 'The source revision is not a commit of the checkout that a branch or tag reaches.',
    fix: (p) => {
      if (p.firstCommit) {
        const dir = p.projectDir ? ` -C ${shWord(String(p.projectDir))}` : '';
        return `commit the project first: \`git${dir} add -A && git${dir} commit -m "nyl project"\``;
      }
      const other = p.override
        ? 'pass --source a revision of a branch or tag'
        : `point spec.source.ref of ${e(p)} at a branch, a tag or a commit one of them reaches`;
      if (p.commit === undefined) return `check the revision${p.rev ? ` ${String(p.rev)}` : ''} exists in this clone (git fetch it), or ${other}`;
      const c = String(p.commit);
      return `fetch the branches and tags of every remote with \`git fetch --all --tags\`, then check that \`git branch -a --contains ${c}\` or \`git tag --contains ${c}\` names one; otherwise ${other}`;
    },
  },
  'NYL-USAGE': {
    exit: 1,
    summary: 'The command line is not valid.',
    fix: (p) => String(p.fix ?? 'see `nyl --help`'),
  },
  'NYL-ENVIRONMENT-UNKNOWN': {
    exit: 1,
    summary: 'The project declares no such environment, and no EnvironmentTemplate pattern matches the name.',
    fix: (p) => {
      if (p.suggest) return `name the instance in lowercase letters, digits and "-": -e ${String(p.suggest)}`;
      const patterns = (p.patterns as string[] | undefined) ?? [];
      const instances = patterns.length > 0 ? `; or a name matching an EnvironmentTemplate's namePattern: ${patterns.join(', ')}` : '';
      return `${meant(p)}declare an Environment ${e(p)} in nyl.yaml, or pick one of: ${(p.known as string[] | undefined)?.join(', ') || '(none)'}${instances}`;
    },
  },
  'NYL-GROUP-UNKNOWN': {
    exit: 1,
    summary: 'The project declares no such EnvironmentGroup (-g).',
    fix: (p) =>
      `declare an EnvironmentGroup ${String(p.group ?? '<group>')} in nyl.yaml, or pass -g with one of: ${(p.known as string[] | undefined)?.join(', ') || '(none)'}`,
  },
  'NYL-ENVIRONMENT-BLOCKED': {
    exit: 2,
    summary:
      'A multi-environment run did not start this environment: for reconcile an environment it depends on (spec.dependsOn), for teardown one that depends on it, did not end with exit 0.',
    fix: (p) => {
      const deps = Array.isArray(p.blockedBy) && p.blockedBy.length > 0 ? (p.blockedBy as string[]).join(', ') : '<dependency>';
      return `resolve what its section reports for ${deps}, then run the selection again; or run -e ${e(p)} alone when it must not wait for ${deps}`;
    },
  },
  'NYL-ENVIRONMENT-NONE-SELECTED': {
    exit: 1,
    summary: 'The environment selection (-l or -g) selects no declared Environment.',
    fix: (p) => String(p.fix ?? 'pass -l or -g so that it selects at least one Environment, or name environments with -e <environment>'),
  },
  'NYL-COMMIT-IDENTITY-MISSING': {
    exit: 1,
    summary: 'No author for state commits.',
    fix: () => 'pass --author "Name <email>", or set git config user.name and user.email',
  },
  'NYL-REASON-REQUIRED': {
    exit: 1,
    summary: 'The operation needs a reason.',
    fix: (p) => `pass --reason "<why>" to ${String(p.operation ?? 'the command')}`,
  },
  'NYL-STATE-MISSING': {
    exit: 1,
    summary: 'The location holds no state for the environment.',
    fix: (p) =>
      p.oldLocation
        ? 'name the location that holds the state with --from, --desired-ref, --observed-ref, --state-path or --coordination-refs'
        : p.fromLocal
          ? `move the state the clone's branches hold there with \`nyl state move -e ${e(p)} --from local\` (if those branches are a copy of another state repository, move from that one: \`--from <its URL>\`); to start over instead, \`nyl state init -e ${e(p)} --fresh\``
          : `create it with \`nyl state init -e ${e(p)}\`, or move existing state there with \`nyl state move -e ${e(p)} --from <old-url>\``,
  },
  'NYL-STATE-UNAVAILABLE': {
    exit: 1,
    summary: 'The state repository cannot be reached or read.',
    fix: (p) => String(p.fix ?? 'check the repository URL, the network and your credentials, then run again'),
  },
  'NYL-STATE-CONFLICT': {
    exit: 1,
    summary: 'A commit outside Nyl changed the state while the command ran.',
    fix: () => 'run the command again',
  },
  'NYL-STATE-DELETED': {
    exit: 1,
    summary: 'The state was deleted with nyl state delete.',
    fix: (p) =>
      p.template
        ? `stop running commands for ${e(p)} (an instance of EnvironmentTemplate ${String(p.template)}, such as the preview of a closed pull request), or start it over with \`nyl state init -e ${e(p)} --fresh\``
        : `remove the Environment ${e(p)} from source to decommission it, or start it over with \`nyl state init -e ${e(p)} --fresh\``,
  },
  'NYL-STATE-MOVED': {
    exit: 1,
    summary: 'The state moved to another location.',
    fix: (p) =>
      p.prefix
        ? `to use the configured prefix, move the state there with \`nyl state move -e ${e(p)} --coordination-refs ${String(p.prefix)}\`; otherwise set spec.state.coordinationRefPrefix of ${e(p)} back to ${String(p.prefix)}`
        : `point the Environment ${e(p)} at ${String(p.movedTo ?? 'the new location')} in source (spec.state): its state continues there`,
  },
  'NYL-STATE-MOVE-DESTINATION': {
    exit: 1,
    summary: "The new location of a state move holds state of the environment that the old location's history does not have.",
    fix: () =>
      'compare both histories (`git log` of the desired ref in each repository) and keep one: point the Environment back at the old location, or delete the state refs at the new location by hand and move again (Nyl never deletes a state ref)',
  },
  'NYL-STATE-DIVERGED': {
    exit: 1,
    summary: "A local state branch (the clone's known branch, or the own branch of a remote's cache repository) holds work the state repository does not have.",
    fix: (p) =>
      p.init
        ? `inspect it with \`git log ${String(p.ref ?? 'the branch')}\`; publish the clone's state there with \`nyl state move -e ${e(p)} --from local\`, or start over deliberately on top of it with \`nyl state init -e ${e(p)} --fresh\` (every unit becomes a new incarnation)`
        : p.cache
          ? `inspect it with \`git -C ${String(p.cache)} log ${String(p.ref ?? 'the branch')}\`; publish the --local run's state there with \`nyl state move -e ${e(p)} --from local\` (it publishes while the state repository has not moved since the --local run read it; once it has, the move refuses, and discarding is the way on), or discard it with \`nyl state reset -e ${e(p)} --local --discard-all\``
          : `inspect it with \`git log ${String(p.ref ?? 'the branch')}\`; publish local state with \`nyl state move -e ${e(p)} --from local\` (it publishes while the state repository has not moved since the --local run read it; once it has, the move refuses, and discarding is the way on), or discard it with \`nyl state reset -e ${e(p)} --local --discard-all\``,
  },
  'NYL-STATE-LOCAL-WORK': {
    exit: 1,
    summary: "The local state repository holds a --local run's lease, run or checkpoint refs that the state repository does not have.",
    fix: (p) => {
      if (p.left === 'lease')
        return `if no --local run of ${e(p)} still runs, break its lease with \`nyl lease break -e ${e(p)} --local --reason "<why>"\` and import what it did with \`nyl recover -e ${e(p)} --local\`; then run the command again`;
      if (p.left === 'evidence') {
        return `decide each uncertain unit of the local state (${(p.units ?? [u(p)]).join(', ')}): \`nyl recover -e ${e(p)} --local --unit ${u(p)} --retry --reason "<why>"\` lets it run again, or --accept instead of --retry takes its checkpoint as its receipt; then run the command again`;
      }
      // Not `recover`: without a broken lease it imports nothing (NYL-RECOVER-NOTHING); a run that
      // ended without its transition (cancelled, lease lost) is imported by the next run.
      return `import what the --local run left into the local state with \`nyl reconcile -e ${e(p)} --local\` (it imports the run before it runs anything pending); then run the command again`;
    },
  },
  'NYL-STATE-RESET-DISCARD': {
    exit: 1,
    summary: 'state reset --local would discard local receipts the state repository does not have; it names the units.',
    fix: (p) =>
      `discard them deliberately with \`nyl state reset -e ${e(p)} --local --discard ${(p.units ?? [u(p)]).join(',')}\` (or --discard-all), or publish them with \`nyl state move -e ${e(p)} --from local\` (it publishes while the state repository has not moved since the --local run read it; once it has, the move refuses, and discarding is the way on)`,
  },
  'NYL-STATE-CORRUPT': {
    exit: 1,
    summary: 'A state document or coordination ref is damaged: invalid YAML, the wrong shape, or not a commit Nyl wrote.',
    fix: (p) => {
      if (p.repair === 'lease') {
        return `break the lease with \`nyl lease break -e ${e(p)} --reason "<why>"\`; the next \`nyl recover -e ${e(p)}\` or \`nyl reconcile -e ${e(p)}\` imports what its holder left`;
      }
      if (p.repair === 'evidence')
        return `inspect it with \`git log ${String(p.ref ?? 'the evidence ref')}\`; a damaged record cannot be accepted, use --retry`;
      if (p.repair === 'signal-set-aside') return `if it asked to hold a unit, hold it again with \`nyl hold -e ${e(p)} --unit <unit> --reason "<why>"\``;
      const what: Record<string, string> = {
        state: 'it restores state.yaml from its copy on the other state ref or from its history',
        unit: 'the unit keeps its incarnation and becomes uncertain; nothing is guessed',
        run: "the run ref is set aside under the environment's damaged/ refs and the units it names become uncertain",
        signal: "the signal is set aside under the environment's damaged/ refs; hold the unit again if it asked for a hold",
      };
      return `repair it with \`nyl recover -e ${e(p)} --reason "<why>"\`: ${what[String(p.repair)] ?? 'the damaged content stays in history'}`;
    },
  },
  'NYL-STATE-DELETE-INCARNATIONS': {
    exit: 1,
    summary: 'Units still have incarnations, teardowns or recorded teardown requests, a teardown failed or is uncertain, or a run ref waits for its import.',
    fix: (p) => {
      // Why `runs`: an unimported run ref may be the only record of units its run created.
      if (p.runs) {
        return `import the runs first: \`nyl reconcile -e ${e(p)}\` imports them (and executes what is pending), or, for the run of a broken lease, \`nyl recover -e ${e(p)}\` imports it without executing anything; then delete the state again`;
      }
      // Why no `nyl state forget` here: it drops only a retained tombstone, a pending teardown or a
      // released record, and refuses a unit whose teardown started (it is deleting).
      // Why every name: a fix with `<unit>` left in it cannot run as printed.
      if (p.failed) {
        const who = p.unit ?? (p.units && p.units.length > 0 ? p.units.join(', ') : '<unit>');
        const names = p.units && p.units.length > 0 ? p.units : [u(p)];
        const recover = ` A teardown that timed out or is uncertain needs ${names.map((n) => `\`nyl recover -e ${e(p)} --unit ${n} --retry --reason "<why>"\``).join(', ')} first.`;
        return `check what the teardown of ${who} did (details.teardown) and fix the cause, then run \`nyl state delete -e ${e(p)} --teardown --reason "<why>"\` again: it retries a failed teardown.${recover} A unit whose driver cannot claim its removal (a Command without teardown:) needs \`nyl state delete -e ${e(p)} --teardown --allow-incomplete --reason "<why>"\``;
      }
      const names = p.units && p.units.length > 0 ? p.units : [u(p)];
      const tear = `tear them down with \`nyl state delete -e ${e(p)} --teardown --reason "<why>"\` or \`nyl teardown -e ${e(p)} --unit ${names.join(',')}\``;
      const forgettable = Array.isArray(p.forgettable) ? (p.forgettable as string[]) : [];
      if (forgettable.length === 0) return tear;
      const forget = forgettable.map((n) => `\`nyl state forget -e ${e(p)} --unit ${n} --reason "<why>"\``).join(', ');
      return `${tear}, or drop a retained tombstone or a pending teardown from state without touching its resources with ${forget}`;
    },
  },
  'NYL-STATE-DELETE-INCOMPLETE': {
    exit: 1,
    summary:
      'state delete --teardown refused before tearing anything down: the drivers of these units cannot claim their removal (a Command without teardown:, an OciImage), so their teardowns need --allow-incomplete; nothing was torn down or deleted.',
    fix: (p) => {
      const again = p.again ? ` ${String(p.again)}` : '';
      return `a teardown runs the action the state recorded: add a teardown: action to ${String(p.listed ?? u(p))}, commit it and run \`nyl reconcile -e ${e(p)}\` to record it (they run again: their key changes), then delete again; or remove them from state without a claim of removal with \`nyl state delete -e ${e(p)} --teardown${again} --allow-incomplete --reason "<why>"\` and check by hand what remains of them`;
    },
  },
  'NYL-STATE-DELETE-WAITING': {
    exit: 2,
    summary:
      'state delete --teardown stopped because the remaining units wait (a teardown wait, an approval, dependents, readiness, or a held unit); nothing was deleted.',
    fix: (p) =>
      `the teardown report (details.teardown) says what each unit waits for; once that is resolved, run \`nyl state delete -e ${e(p)} --teardown --reason "<why>"\` again: it resumes`,
  },
  'NYL-LEASE-HELD': {
    exit: 2,
    summary: 'Another run holds the lease.',
    fix: () => 'wait for the run to finish, or pass --wait-lease <duration>',
  },
  'NYL-LEASE-BROKEN': {
    exit: 2,
    summary: 'The lease was broken and its run is not imported yet.',
    fix: (p) =>
      p.expired
        ? `the holder is gone: \`nyl reconcile -e ${e(p)}\` takes the expired lease over and imports its run (or break it with \`nyl lease break -e ${e(p)} --reason "<why>"\` and import it with \`nyl recover -e ${e(p)}\`), then run the command again`
        : `import the broken run with \`nyl recover -e ${e(p)}\`, then run the command again`,
  },
  'NYL-LEASE-LOST': {
    exit: 4,
    summary: 'Another invocation took over or deleted the lease.',
    fix: (p) => `the run pushed nothing; run \`nyl reconcile -e ${e(p)}\` to import its checkpoints`,
  },
  'NYL-CLOCK-SKEW': {
    exit: 1,
    summary: 'A lease or run record is stamped further in the future than the skew margin allows.',
    fix: (p) =>
      `synchronize the clocks of the hosts named (NTP), or raise spec.lease.skewMargin of the Environment; if the holder is gone, \`nyl lease break -e ${e(p)} --reason 'clock skew'\` lets an importer take over`,
  },
  'NYL-RUN-CANCELLED': {
    exit: 4,
    summary: 'The run was cancelled by a signal.',
    fix: (p) => `run \`nyl reconcile -e ${e(p)}\` again to take over its checkpoints`,
  },
  'NYL-RUN-UNRECORDED': {
    exit: 4,
    summary: 'The state repository stayed out of reach: the effects of the units the run started are not recorded in state.',
    fix: (p) =>
      `once the state repository is reachable again, run \`nyl reconcile -e ${e(p)}\`: after the lease's deadline it imports the run's checkpoints, and a unit whose checkpoint is missing becomes uncertain (see \`nyl status -e ${e(p)}\`)`,
  },
  'NYL-RUN-STOPPED': {
    exit: 2,
    summary: '--fail-fast stopped the run.',
    fix: (p) => `fix ${u(p)}, then run again; without --fail-fast a run continues with every unit that does not depend on it`,
  },
  'NYL-RUN-SUPERSEDED': {
    exit: 4,
    summary: 'A dead run checkpointed a unit with an execution key the resolution no longer has.',
    fix: (p) => `check what ${u(p)} did; \`nyl recover -e ${e(p)} --unit ${u(p)} --retry\` runs it again`,
  },
  'NYL-RUN-LATE-CHECKPOINT': {
    exit: 4,
    summary: 'A run checkpointed a unit after it was marked uncertain.',
    fix: (p) => `adopt it with \`nyl recover -e ${e(p)} --unit ${u(p)} --accept <run> --reason "<why>"\` or run it again with --retry`,
  },
  'NYL-RUN-UNIMPORTED': {
    exit: 2,
    summary: 'A run ended without its transition commit.',
    fix: (p) => `run \`nyl reconcile -e ${e(p)}\` to import its checkpoints`,
  },
  'NYL-UNIT-UNKNOWN': {
    exit: 1,
    summary: 'No such unit.',
    fix: (p) => meant(p) + String(p.fix ?? `check the unit name with \`nyl status -e ${e(p)}\``),
  },
  'NYL-UNIT-UNCERTAIN': {
    exit: 4,
    summary: 'A unit may have had effects without a recorded result.',
    // Why `unimported`: recover decides only what state records (or a broken lease's run it
    // imports itself); an uncertainty that waits in a cancelled or lost run's ref reaches state
    // with the next reconcile's import, so naming recover alone would fail as printed.
    fix: (p) =>
      p.unimported
        ? `check what ${u(p)} did; \`nyl reconcile -e ${e(p)}\` first imports the run that left it uncertain and runs a converging unit again; others then need \`nyl recover -e ${e(p)} --unit ${u(p)} --retry\` or \`--accept <run> --reason "<why>"\``
        : `check what ${u(p)} did; a converging unit runs again in the next reconcile, others need \`nyl recover -e ${e(p)} --unit ${u(p)} --retry\` or \`--accept <run> --reason "<why>"\``,
  },
  'NYL-UNIT-FAILED': {
    exit: 3,
    summary: 'A unit failed.',
    fix: (p) => {
      if (p.retryable !== false) return `fix the cause; the next \`nyl reconcile -e ${e(p)}\` retries it`;
      const retry = `\`nyl recover -e ${e(p)} --unit ${u(p)} --retry${p.acknowledge ? ' --reason "<what you checked>"' : ''}\``;
      // As for NYL-UNIT-UNCERTAIN: a failure still in an unimported run's ref is not in state yet.
      return p.unimported
        ? `fix the cause; \`nyl reconcile -e ${e(p)}\` first imports the run that recorded the failure, then ${retry}`
        : `fix the cause, then ${retry}`;
    },
  },
  'NYL-SECRETS-KEY-MISSING': {
    exit: 3,
    summary: 'A unit has sensitive outputs to seal, or consumes sealed ones, and no usable key is configured.',
    fix: (p) => {
      const sealedBy = Array.isArray(p.sealedBy) ? p.sealedBy.map(String) : [];
      if (sealedBy.length > 0)
        return `configure the key that sealed the values this environment's state holds (key id ${sealedBy.join(', ')}: the first 16 hex digits of the key's sha256) in NYL_SECRETS_KEY or NYL_SECRETS_KEY_FILE; a new key cannot open them. Then \`nyl reconcile -e ${e(p)}\``;
      return `set NYL_SECRETS_KEY to the base64 of 32 random bytes (\`export NYL_SECRETS_KEY="$(openssl rand -base64 32)"\`, kept in your CI secrets) or NYL_SECRETS_KEY_FILE to a file holding it, then \`nyl reconcile -e ${e(p)}\``;
    },
  },
  'NYL-SECRET-UNAVAILABLE': {
    exit: 3,
    summary:
      "A sensitive value a unit consumes cannot be read: no configured key opens it, or the producer's backend no longer holds the value its receipt records.",
    fix: (p) => {
      const producer = String(p.producer ?? '<producer>');
      if (p.backend)
        return `${producer} keeps the value in its Terraform backend, which no longer holds what its receipt records (the state was lost, moved or changed outside Nyl): point ${producer} back at its state, or create the value again with \`nyl reconcile -e ${e(p)} --unit ${producer} --reapply --reason "<why>"\`, then \`nyl reconcile -e ${e(p)}\``;
      return `configure the key that sealed it (NYL_SECRETS_KEY or NYL_SECRETS_KEY_FILE, the old key after the new one while you rotate); if ${String(p.producer ?? 'the producer')}'s value changed outside Nyl, make it execute again (change its source), then \`nyl reconcile -e ${e(p)}\``;
    },
  },
  'NYL-SECRETS-KEY-FILE-OPEN': {
    exit: 0,
    summary:
      'The key file NYL_SECRETS_KEY_FILE names can be read or written by its group or others: whoever reads it opens every sealed value of every state the key protects, history included.',
    fix: (p) => `chmod 600 ${shWord(String(p.file ?? '<file>'))}`,
  },
  'NYL-RESEAL-UNOPENED': {
    exit: 1,
    summary:
      'nyl state reseal found a sealed value that no configured key opens (its key is not in the ring, no key is configured, or the seal was altered or copied from another output or environment); nothing was written.',
    fix: (p) => {
      const value = `${u(p)}.${String(p.output ?? '<output>')}`;
      const key = p.keyId ? ` (key id ${String(p.keyId)}: the first 16 hex digits of the key's sha256)` : '';
      const configure = `configure the key that sealed ${value}${key} after the first key in NYL_SECRETS_KEY or NYL_SECRETS_KEY_FILE, then \`nyl state reseal -e ${e(p)}\``;
      return `${configure}; if that key is lost, or the seal was altered, only a new value helps: \`nyl reconcile -e ${e(p)} --unit ${u(p)} --reapply --reason "<why>"\` executes ${u(p)} again and seals what it produces with the first key`;
    },
  },
  'NYL-RESEAL-RUNS-UNIMPORTED': {
    exit: 1,
    summary:
      'A run ref waits for its import: its checkpoints may hold values sealed with the old key, which nyl state reseal cannot reach there; it wrote nothing.',
    fix: (p) =>
      `import the runs first: \`nyl reconcile -e ${e(p)}\` imports them (and executes what is pending), or, for the run of a broken lease, \`nyl recover -e ${e(p)}\` imports it without executing anything; then \`nyl state reseal -e ${e(p)}\``,
  },
  'NYL-RESEAL-KEPT': {
    exit: 0,
    summary:
      "nyl state reseal left the digests of values a unit's Terraform or OpenTofu backend keeps: only an execution of the unit digests them again, and until then a consumer's run checks them with the key that made them, which must stay in the ring.",
    fix: (p) => {
      const units = Array.isArray(p.units) && p.units.length > 0 ? p.units.map(String) : [u(p)];
      return `make them execute again with \`nyl reconcile -e ${e(p)} ${units.map((n) => `--unit ${n}`).join(' ')} --reapply --reason "<why>"\`: their new receipts digest the values with the first key`;
    },
  },
  'NYL-RESEAL-CONSUMERS': {
    exit: 0,
    summary:
      'nyl state reseal made new digests of outputs other units consume: their execution keys cover the digest, so each of them executes once on the next reconcile, with the same value.',
    fix: (p) => `nothing to decide: \`nyl reconcile -e ${e(p)}\` executes them once (any later reconcile would)`,
  },
  'NYL-BACKEND-STATE-LOST': {
    exit: 3,
    summary:
      "The Terraform state a unit's receipt recorded is gone (a deleted or emptied state file, a backend or workspace pointing at an empty location) or replaced by another lineage: planning against it would create everything again next to what exists, so Nyl refuses until the state is back or an operator decides.",
    fix: (p) => {
      const restore = `if the state moved, point backendConfig (or workspace) of ${u(p)} back at it, or put the state file back as the receipt's run left it`;
      if (p.teardown)
        return `${restore}, then run the teardown again; if its resources are gone already, acknowledge it with \`nyl recover -e ${e(p)} --unit ${u(p)} --retry --reason "<why>"\`, then \`nyl teardown -e ${e(p)} --unit ${u(p)}\``;
      if (p.observed)
        return `${restore} and check again with \`nyl verify -e ${e(p)} --unit ${u(p)}\`; if its resources are gone too, create them again with \`nyl reconcile -e ${e(p)} --unit ${u(p)} --reapply --reason "<why>"\``;
      return `${restore}, then \`nyl reconcile -e ${e(p)}\`; if its resources are gone too, create them again with \`nyl reconcile -e ${e(p)} --unit ${u(p)} --reapply --reason "<why>"\``;
    },
  },
  'NYL-BACKEND-SHARED': {
    exit: 1,
    summary:
      'Two environments, or two units, would share one Terraform state: their backend configuration renders alike, or a unit without a receipt finds a state holding resources none of its receipts recorded. A teardown of one would destroy the resources of the other.',
    fix: (p) => {
      const own = `give each its own state: put \${{ env.name }} into backendConfig (or workspace) of ${u(p)}, such as path: /srv/tfstate/${u(p)}-\${{ env.name }}.tfstate`;
      if (p.rendered && p.otherUnit)
        return `give ${u(p)} and ${String(p.otherUnit)} each a state of its own (another path or key in backendConfig, another workspace); if they are meant to share it, set sharedState: true on both`;
      if (p.rendered) return `${own}; if they are meant to share it, set sharedState: true on ${u(p)}`;
      if (p.teardown)
        return `if this state is not ${u(p)}'s in ${e(p)}, leave it: remove ${u(p)} from state without a teardown with \`nyl state forget -e ${e(p)} --unit ${u(p)} --reason "<why>"\`; if it is, acknowledge it with \`nyl recover -e ${e(p)} --unit ${u(p)} --retry --reason "<why>"\`, then \`nyl teardown -e ${e(p)} --unit ${u(p)}\``;
      return `${own}, then \`nyl reconcile -e ${e(p)}\`; if ${u(p)} in ${e(p)} is to take this state over, say so with \`nyl reconcile -e ${e(p)} --unit ${u(p)} --reapply --reason "<why>"\``;
    },
  },
  'NYL-IMAGE-UNRESOLVED': {
    exit: 3,
    summary: "An OciImage unit's image is not present on this machine, so it cannot be resolved to an immutable reference or run; Nyl never pulls.",
    fix: (p) => `make the image present on this machine (the failure names the \`pull\` or \`load\` that does it), then \`nyl reconcile -e ${e(p)}\``,
  },
  'NYL-UNIT-HELD': {
    exit: 2,
    summary: 'A held unit keeps source changes or a teardown from applying.',
    fix: (p) => `reconcile changes nothing about it until \`nyl resume -e ${e(p)} --unit ${u(p)}\``,
  },
  'NYL-UNIT-BLOCKED': {
    exit: 2,
    summary: 'A unit waits for a dependency without a current receipt.',
    fix: () => 'reconcile the dependency first; the unit runs once it has a current receipt',
  },
  'NYL-UNIT-PENDING': {
    exit: 2,
    summary: 'Units wait for the next reconcile.',
    fix: (p) => `run \`nyl reconcile -e ${e(p)}\``,
  },
  'NYL-UNIT-RELEASED': {
    exit: 0,
    summary: "A unit's resources were left in place.",
    fix: (p) =>
      p.kindChange
        ? `remove the resources of the old incarnation of ${u(p)} by hand when nothing needs them`
        : `remove the resources of ${u(p)} by hand when nothing needs them; \`nyl state forget -e ${e(p)} --unit ${u(p)} --reason "<why>"\` then drops its record`,
  },
  'NYL-UNIT-KIND-CHANGE': {
    exit: 2,
    summary: 'A unit changed its kind; the old incarnation is deleting first.',
    fix: (p) =>
      p.waitsForTeardown
        ? `the old incarnation's deletionPolicy is Teardown: start its teardown with \`nyl reconcile -e ${e(p)} --allow-teardown\`; the new kind starts once it is gone`
        : 'nothing to do: the new kind starts once the old incarnation is deleted',
  },
  'NYL-HOLD-REFUSED': {
    exit: 1,
    summary: 'A retained tombstone cannot be held.',
    // Why --reason: state forget refuses without one, and a fix must work as printed.
    fix: (p) => `tear it down with \`nyl teardown -e ${e(p)} --unit ${u(p)}\`, or drop it with \`nyl state forget -e ${e(p)} --unit ${u(p)} --reason "<why>"\``,
  },
  'NYL-HOLD-DELIVERED': {
    exit: 0,
    summary: 'The hold was delivered to the running run.',
    fix: (p) => `nothing to fix: the running run records the hold; follow it with \`nyl status -e ${e(p)}\``,
  },
  'NYL-FORGET-REFUSED': {
    exit: 1,
    summary: 'The unit still has an incarnation: nyl state forget drops only retained tombstones, pending teardowns and released records.',
    // A held unit's teardown is only recorded until resume, so the hold goes first.
    fix: (p) =>
      p.held
        ? `lift the hold with \`nyl resume -e ${e(p)} --unit ${u(p)}\` first, then tear it down with \`nyl teardown -e ${e(p)} --unit ${u(p)}\``
        : `tear it down with \`nyl teardown -e ${e(p)} --unit ${u(p)}\``,
  },
  'NYL-RESTORE-FOREIGN-COMMIT': {
    exit: 1,
    summary:
      "The commit nyl state restore names is not a commit of the environment's state history (its desired or observed ref's first-parent history, with its state.yaml, and on refs shared through path one that changed its directory); nothing was written.",
    fix: (p) => {
      const path = p.path ? ` -- ${String(p.path)}` : '';
      const desired = String(p.desiredRef ?? `refs/heads/nyl/${e(p)}/desired`);
      const observed = String(p.observedRef ?? `refs/heads/nyl/${e(p)}/observed`);
      return `pick a commit of its state history from \`git log --first-parent ${desired}${path}\` or \`git log --first-parent ${observed}${path}\`, run in the project's clone (its branches follow the state refs), and pass its id to --to`;
    },
  },
  'NYL-RESTORE-RUNS-UNIMPORTED': {
    exit: 1,
    summary: 'A run ref waits for its import: it may hold receipts newer than the commit to restore, and nyl state restore wrote nothing.',
    fix: (p) =>
      `import the runs first: \`nyl reconcile -e ${e(p)}\` imports them (and executes what is pending), or, for the run of a broken lease, \`nyl recover -e ${e(p)}\` imports it without executing anything; then restore again`,
  },
  'NYL-RESTORE-INCARNATIONS': {
    exit: 0,
    summary: 'nyl state restore brought back an incarnation the state no longer had (resurrected), or took one away (dropped).',
    // Why reapply: a resurrected incarnation's receipt says its resources exist, and the next
    // reconcile trusts it; only running the unit again makes sure.
    // Why by `as`: `reconcile --unit` takes only a unit of source that is not held, so a unit
    // brought back as a released record, a tombstone or a unit that left needs another way.
    fix: (p) => {
      if (p.incarnation !== 'resurrected')
        return 'no state records its resources any more, and they stay as they are: remove them by hand, or accept them unmanaged; a unit still in source starts a new incarnation at the next reconcile';
      const forget = `\`nyl state forget -e ${e(p)} --unit ${u(p)} --reason "<why>"\``;
      const reapply = `\`nyl reconcile -e ${e(p)} --unit ${u(p)} --reapply --reason "<why>"\``;
      switch (p.as) {
        case 'released':
          return `it is a released record again: its resources were left in place and nothing reconciles them; keep the record, or drop it with ${forget}`;
        case 'retained':
          return `it is a retained tombstone again: nothing reconciles it; tear its resources down with \`nyl teardown -e ${e(p)} --unit ${u(p)}\`, or drop it with ${forget}`;
        case 'left':
          return `source no longer declares it: the next reconcile handles it as a unit that left, under its deletionPolicy; see what it will do with \`nyl plan -e ${e(p)}\``;
        case 'deleting':
          return `its teardown waits: the next reconcile goes on with it; see what it will do with \`nyl plan -e ${e(p)}\``;
        case 'held':
          return `it stays held; after \`nyl resume -e ${e(p)} --unit ${u(p)}\` the next reconcile trusts its receipt: if its resources were removed since, run it again with ${reapply}`;
        default:
          return `the next reconcile trusts its receipt: if its resources were removed since, run it again with ${reapply}`;
      }
    },
  },
  'NYL-RECOVER-REASON-REQUIRED': {
    exit: 1,
    summary: 'The driver requires an explicit acknowledgement before retry.',
    fix: () => 'verify the failure and pass a nonempty --reason',
  },
  'NYL-RECOVER-NOTHING': {
    exit: 1,
    summary: 'Nothing to recover.',
    fix: (p) => `check the environment with \`nyl status -e ${e(p)}\``,
  },
  'NYL-RECOVER-CHECKPOINT-MISSING': {
    exit: 1,
    summary: 'The run has no receipt checkpoint of the unit.',
    fix: () => 'pass a run the evidence lists as receipt, or use --retry',
  },
  'NYL-RECOVER-KEY-MISMATCH': {
    exit: 1,
    summary: 'The checkpoint was made for another execution key or uid, or the unit is held.',
    fix: (p) => `use --retry to execute it again, or \`nyl resume -e ${e(p)} --unit ${u(p)}\` a held unit first`,
  },
  'NYL-SOURCE-WORKTREE': {
    exit: 2,
    summary: 'The run uses an immutable working-file snapshot retained in state history.',
    fix: () => 'commit changes and run without --worktree for committed-source evidence',
  },
  'NYL-PLAN-UNITS-LEAVING': {
    exit: 2,
    summary: 'Units leave the ownership set.',
    fix: (p) => `restore them in source or in the unitSelector of ${e(p)} if they should stay`,
  },
  'NYL-TEARDOWN-STARTED': {
    exit: 1,
    summary:
      'nyl teardown --cancel cannot withdraw the request: the teardown started (the unit is deleting, uncertain, or a run not imported yet recorded its start), so its driver may already have removed part of the unit.',
    // Why hold: a started teardown cannot be undone by state, but a hold pauses it where it is.
    fix: (p) => {
      const pause = `pause it where it stopped with \`nyl hold -e ${e(p)} --unit ${u(p)} --reason "<why>"\`, or let it finish with \`nyl teardown -e ${e(p)} --unit ${u(p)}\``;
      if (p.why === 'uncertain')
        return `a started teardown cannot be withdrawn, and this one is uncertain: check what remains, then finish it with \`nyl recover -e ${e(p)} --unit ${u(p)} --retry --reason "<why>"\``;
      if (p.why === 'in-run')
        return `a started teardown cannot be withdrawn: once run ${String(p.run ?? '')} is imported (it ends, or \`nyl recover -e ${e(p)}\` imports it when it died), ${pause}`;
      return `a started teardown cannot be withdrawn: ${pause}`;
    },
  },
  'NYL-TEARDOWN-PENDING': {
    exit: 2,
    summary: 'A teardown waits.',
    fix: (p) => {
      if (p.wait === 'needs-allow-teardown')
        return `start it with \`nyl reconcile -e ${e(p)} --allow-teardown\`, or restore ${u(p)} in source if it should stay`;
      if (p.wait === 'lifecycle-excluded') return `run \`nyl reconcile -e ${e(p)}\` without --unit: it does the lifecycle work first`;
      const dependents = (p.dependents as string[] | undefined)?.join(', ') ?? 'its dependents';
      return `it waits for ${dependents}: tear them down first with \`nyl teardown -e ${e(p)} --unit ${(p.dependents as string[] | undefined)?.join(' --unit ') ?? '<unit>'}\`, or let them go on depending on it`;
    },
  },
  'NYL-TEARDOWN-HAS-DEPENDENTS': {
    exit: 2,
    summary: 'Retained tombstones cite the unit.',
    fix: (p) => {
      const tombstones = (p.dependents as string[] | undefined) ?? [];
      const forget = (t: string) => `\`nyl state forget -e ${e(p)} --unit ${t} --reason "<why>"\``;
      return `pass --allow-dependents to tear ${u(p)} down all the same, or drop the tombstones first: ${tombstones.length > 0 ? tombstones.map(forget).join(', ') : forget('<tombstone>')}`;
    },
  },
  'NYL-TEARDOWN-WAITING': {
    exit: 2,
    summary: 'A publication it depends on waits under its teardownWait.',
    fix: () => 'run again later, or confirm with nyl teardown --confirm-removed',
  },
  'NYL-TEARDOWN-INCOMPLETE': {
    exit: 2,
    summary: 'A teardown cannot complete, or completed without a claim of removal.',
    // Why `units`: state delete --teardown says it once for all its units (one line, every name).
    fix: (p) => {
      const who = p.unit ?? (p.units && p.units.length > 0 ? p.units.join(', ') : '<unit>');
      if (p.removed) return `check what remains of ${who} and remove it by hand`;
      const again =
        p.command === 'state-delete'
          ? `nyl state delete -e ${e(p)} --teardown --allow-incomplete --reason "<why>"`
          : `nyl ${p.command === 'teardown' ? 'teardown' : 'reconcile'} -e ${e(p)} ${p.command === 'teardown' ? `--unit ${u(p)} ` : ''}--allow-incomplete`;
      return `a teardown runs the action the state recorded: add a teardown: action to ${who} (back in source if it left), commit it and run \`nyl reconcile -e ${e(p)}\` to record it; or remove it from state without a claim of removal with --allow-incomplete (\`${again}\`), and check what remains`;
    },
  },
  'NYL-TEARDOWN-CATALOG-MANUAL-SYNC': {
    exit: 2,
    summary: "A publication's target does not let its teardown complete.",
    fix: () => 'set the catalog to sync automatically',
  },
  'NYL-TEARDOWN-APPLICATIONS-ORPHANED': {
    exit: 2,
    summary: "A publication's target does not let its teardown complete.",
    fix: () => 'enable pruning of the applications',
  },
  'NYL-TEARDOWN-NAMESPACE-CONFIRM': {
    exit: 2,
    summary: "A publication's target does not let its teardown complete.",
    fix: () => 'confirm the namespace removal',
  },
  'NYL-TEARDOWN-NAMESPACES-REMAIN': {
    exit: 2,
    summary: "A publication's teardown leaves namespaces behind.",
    fix: () => 'remove the namespaces by hand when nothing needs them',
  },
  'NYL-TEARDOWN-CATALOG-REMAINS': {
    exit: 2,
    summary: "A publication's teardown leaves catalog objects behind.",
    fix: () => 'remove the catalog entries by hand when nothing needs them',
  },
  'NYL-UNIT-AWAITING-APPROVAL': {
    exit: 2,
    summary: 'A unit waits for an approval before it executes; its dependents are blocked.',
    fix: (p) => {
      if (p.digestUnknown) return `get its digest from \`nyl plan -e ${e(p)}\`, then run \`nyl reconcile -e ${e(p)} --approve ${u(p)}=<digest>\``;
      const scope = p.scope === 'reapply' ? ` --unit ${u(p)} --reapply --reason "<why>"` : p.scope === 'local' ? ' --local' : '';
      return `review it with \`nyl plan -e ${e(p)}\`, then run \`nyl reconcile -e ${e(p)}${scope} --approve ${String(p.approve ?? u(p))}\``;
    },
  },
  'NYL-APPROVAL-INVALID': {
    exit: 1,
    summary: 'An --approve names a unit that is unknown, excluded by --unit, needs no approval, or needs a reviewed digest; nothing ran.',
    fix: (p) => String(p.fix ?? 'correct the --approve options and run again'),
  },
  'NYL-APPROVAL-DIGEST-MISMATCH': {
    exit: 2,
    summary: 'The plan a run made differs from the digest an approval named: nothing was applied and the unit still waits.',
    fix: (p) => `review the new plan with \`nyl plan -e ${e(p)}\`, then run \`nyl reconcile -e ${e(p)} --approve ${u(p)}=${String(p.digest ?? '<digest>')}\``,
  },
  'NYL-UNIT-DRIFTED': {
    exit: 2,
    summary: "A unit's latest drift observation says its resources no longer match its receipt.",
    fix: (p) => {
      if (p.repair === 'converge') return `the next \`nyl reconcile -e ${e(p)}\` repairs it (driftRepair: converge)`;
      if (p.repair === 'approve')
        return `its repair awaits approval (recovery: manual): review it with \`nyl plan -e ${e(p)}\`, then run \`nyl reconcile -e ${e(p)} --approve ${u(p)}\``;
      return `repair it with \`nyl reconcile -e ${e(p)} --unit ${u(p)} --reapply --reason "<why>"\``;
    },
  },
  'NYL-DRIFT-CHECK-FAILED': {
    exit: 1,
    summary: "A unit's drift check could not tell whether it drifted (the check itself failed); its drift is recorded unknown.",
    fix: (p) => `fix what the check of ${u(p)} reports, then run \`nyl verify -e ${e(p)} --unit ${u(p)}\` again`,
  },
  'NYL-HOST-INCOMPATIBLE': {
    exit: 1,
    summary: 'The Git host cannot hold orchestration state under any coordination prefix checked (nyl doctor host).',
    fix: (p) =>
      p.atomic
        ? 'use a Git host, or a version of it, that accepts atomic pushes (git push --atomic); state cannot be kept safely without them'
        : 'allow refs under refs/nyl/ or refs/heads/nyl-run/ and atomic pushes with leases on this host, or keep state on a host that does (the steps above say which push failed)',
  },
  'NYL-HOST-BRANCH-PREFIX': {
    exit: 0,
    summary: 'The Git host holds orchestration state only with the coordination refs under refs/heads/ (nyl doctor host).',
    fix: () => 'set state.coordinationRefPrefix: refs/heads/nyl-run/ on the Environments whose state lives on this host',
  },
  'NYL-UI-LISTEN': {
    exit: 1,
    summary: 'nyl ui cannot listen on the address: the port is taken, or the host is not an address of this machine.',
    fix: (p) => `pass --listen ${String(p.host ?? '127.0.0.1')}:<port> with a free port, or --listen ${String(p.host ?? '127.0.0.1')}:0 for any free port`,
  },
  'NYL-UI-EXPOSED': {
    exit: 0,
    summary:
      "nyl ui listens on an address other machines may reach, without authentication: whoever reaches it sees every environment's units, plain outputs, rendered specs, failure output and history (never a sensitive value).",
    fix: () => 'listen on loopback (--listen 127.0.0.1:<port>) and reach it through an SSH tunnel, or put an authenticating proxy in front of it',
  },
  'NYL-UNCHANGED': {
    exit: 0,
    summary: 'Nothing needed to change (a note, never an error).',
    fix: () => 'nothing to do',
  },
  'NYL-INTERNAL': {
    exit: 1,
    summary: 'An unexpected internal error.',
    fix: () => 'report this as a bug with the command line and its output; nothing was written unless the report says so',
  },
} as const satisfies Record<string, CodeSpec>;

export type NylCode = keyof typeof CATALOG;

export function isNylCode(value: string): value is NylCode {
  return Object.prototype.hasOwnProperty.call(CATALOG, value);
}

export function exitCategoryOf(code: NylCode): ExitCategory {
  return CATALOG[code].exit;
}

export function fixFor(code: NylCode, params: FixParams): string {
  return CATALOG[code].fix(params);
}
