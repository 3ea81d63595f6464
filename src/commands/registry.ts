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
import type { Command } from './command';
import { doctorHostCommand } from './doctor/host';
import { holdCommand } from './hold/hold';
import { resumeCommand } from './hold/resume';
import { graphCommand } from './inspect/graph';
import { logCommand } from './inspect/log';
import { outputsCommand } from './inspect/outputs';
import { showCommand } from './inspect/show';
import { statusCommand } from './inspect/status';
import { uiCommand } from './inspect/ui';
import { planCommand } from './plan/plan';
import { reconcileCommand } from './reconcile/reconcile';
import { teardownCommand } from './reconcile/teardown';
import { leaseBreakCommand } from './recover/lease-break';
import { recoverCommand } from './recover/recover';
import { stateDeleteCommand } from './state/delete';
import { stateForgetCommand } from './state/forget';
import { stateInitCommand } from './state/init';
import { stateMoveCommand } from './state/move';
import { stateResealCommand } from './state/reseal';
import { stateResetCommand } from './state/reset';
import { stateRestoreCommand } from './state/restore';
import { verifyCommand } from './verify/verify';

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
