/**
 * The registry: every `nyl` command, once, in the order help and completion list them. The CLI's
 * parser, help, completion, "did you mean", dispatch and `-o json` refusals read this list, and a
 * command across environments carries its multi-environment traits in its entry; nothing else
 * names a command. Adding one: a file in its family's folder (src/commands/<family>/) that exports
 * its entry, and a line here.
 *
 * Light on purpose: entries hold specs, renderers and request builders, and load their operation
 * with import() when they run, so that `nyl --version` and `--help` start fast.
 */
import type { Command } from '../commands/command';
import { doctorHostCommand } from '../commands/doctor/host-command';
import { holdCommand } from '../commands/hold/hold-command';
import { resumeCommand } from '../commands/hold/resume-command';
import { graphCommand } from '../commands/inspect/graph-command';
import { logCommand } from '../commands/inspect/log-command';
import { outputsCommand } from '../commands/inspect/outputs-command';
import { showCommand } from '../commands/inspect/show-command';
import { statusCommand } from '../commands/inspect/status-command';
import { uiCommand } from '../ui/command';
import { planCommand } from '../commands/plan/plan-command';
import { reconcileCommand } from '../commands/reconcile/reconcile-command';
import { teardownCommand } from '../commands/reconcile/teardown-command';
import { leaseBreakCommand } from '../commands/recover/lease-break-command';
import { recoverCommand } from '../commands/recover/recover-command';
import { stateDeleteCommand } from '../commands/state/delete-command';
import { stateForgetCommand } from '../commands/state/forget-command';
import { stateInitCommand } from '../commands/state/init-command';
import { stateMoveCommand } from '../commands/state/move-command';
import { stateResealCommand } from '../commands/state/reseal-command';
import { stateResetCommand } from '../commands/state/reset-command';
import { stateRestoreCommand } from '../commands/state/restore-command';
import { verifyCommand } from '../commands/verify/verify-command';

export const COMMANDS: readonly Command[] = [
  stateInitCommand,
  stateMoveCommand,
  stateForgetCommand,
  stateRestoreCommand,
  stateResealCommand,
  stateResetCommand,
  stateDeleteCommand,
  reconcileCommand,
  teardownCommand,
  recoverCommand,
  leaseBreakCommand,
  holdCommand,
  resumeCommand,
  statusCommand,
  planCommand,
  verifyCommand,
  logCommand,
  showCommand,
  outputsCommand,
  graphCommand,
  doctorHostCommand,
  uiCommand,
];

/** The command whose words args start with, and the arguments after them. */
export function findCommand(args: string[]): { spec: Command; rest: string[] } | undefined {
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
export function subcommandsOf(group: string): Command[] {
  return COMMANDS.filter((c) => c.words.length > 1 && c.words[0] === group);
}
