/**
 * "Did you mean": a mistyped command or option gets a NYL-USAGE fix that names the corrected
 * command line, quoted so that it runs as printed (`nyl reconile -e dev` -> `nyl reconcile -e
 * dev`). Candidates come from the registry, so new commands are covered as they are added.
 * Loaded only on such an error.
 */
import { closest } from '../util/closest';
import type { CommandSpec, ParsedCommand } from '../commands/command';
import { diagnostic, NylError } from '../errors/diagnostic';
import type { Runtime } from '../util/runtime';
import { COMMANDS, groupOf, subcommandsOf } from './registry';

/** A word as sh reads it back: as it is when it holds no special character, else single-quoted. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/**
 * The closest of candidates to typed; of equally close ones, one that typed begins (`statu` is
 * status, not state), else the first in table order.
 */
function guess(typed: string | undefined, candidates: string[]): string | undefined {
  if (typed === undefined || typed.startsWith('-')) return undefined;
  return closest(typed, [...candidates.filter((c) => c.startsWith(typed)), ...candidates.filter((c) => !c.startsWith(typed))]);
}

function commandLine(words: string[]): string {
  return ['nyl', ...words].map(shellQuote).join(' ');
}

/** The message and fix of a command line that names no command. */
export function unknownCommandHelp(argv: string[]): { message: string; fix: string } {
  const message = `unknown command: nyl ${argv.join(' ')}`;
  const group = groupOf(argv);
  if (group !== undefined) {
    const subs = subcommandsOf(group).map((c) => c.words[1]!);
    const typed = argv[1];
    const sub = guess(typed, subs);
    if (sub) return { message, fix: `did you mean \`${commandLine([group, sub, ...argv.slice(2)])}\`?` };
    const what = typed === undefined || typed.startsWith('-') ? `nyl ${group} needs a subcommand` : message;
    return { message: `${what}; the subcommands of nyl ${group}: ${subs.join(', ')}`, fix: `see \`nyl ${group} --help\` for what each does` };
  }
  const word = guess(argv[0], [...new Set(COMMANDS.map((c) => c.words[0]!))]);
  if (word) return { message, fix: `did you mean \`${commandLine([word, ...argv.slice(1)])}\`?` };
  return { message, fix: 'see `nyl --help` for the commands' };
}

/**
 * The fix of an unknown long option of spec (`--unti`, `--unti=a`): the command line with the
 * closest option of the command instead, or its help when none is close.
 */
export function unknownOptionFix(spec: CommandSpec, rest: string[], option: string): string {
  const help = `see \`nyl ${spec.words.join(' ')} --help\``;
  const name = option.startsWith('--')
    ? guess(
        option.slice(2),
        spec.options.map((o) => o.name),
      )
    : undefined;
  if (!name) return help;
  const fixed = rest.map((a) => (a === option ? `--${name}` : a.startsWith(`${option}=`) ? `--${name}${a.slice(option.length)}` : a));
  return `did you mean --${name}? \`${commandLine([...spec.words, ...fixed])}\``;
}

/**
 * `nyl reconcile dev`: a command line that selects no environment and whose PATH is no directory
 * but an environment of the project here (a forgotten -e) is NYL-USAGE with the command line that
 * names it by -e as its fix, instead of the usage error (or the missing project) PATH would give.
 */
export async function refuseEnvironmentAsPath(rt: Runtime, p: ParsedCommand, rest: string[]): Promise<void> {
  const { namesEnvironment } = await import('../commands/shared/project-names');
  if (!(await namesEnvironment(rt, '.', p.path))) return;
  const valued = new Set(p.spec.options.filter((o) => o.type === 'string').flatMap((o) => [`--${o.name}`, ...(o.short ? [`-${o.short}`] : [])]));
  // The positional: the last word that is PATH and no option's value.
  const at = rest.reduce((found, a, i) => (a === p.path && !valued.has(rest[i - 1] ?? '') ? i : found), -1);
  const fixed = rest.flatMap((a, i) => (i === at ? ['-e', a] : [a]));
  const command = `nyl ${p.spec.words.join(' ')}`;
  throw new NylError(
    diagnostic('NYL-USAGE', 'error', `${command} takes the environment with -e: ${p.path} is no directory here, but an environment of the project`, {
      fix: `did you mean -e ${p.path}? \`${commandLine([...p.spec.words, ...fixed])}\``,
    }),
  );
}
