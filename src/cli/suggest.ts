/**
 * "Did you mean": a mistyped command or option gets a NYL-USAGE fix that names the corrected
 * command line, quoted so that it runs as printed (`nyl reconile -e dev` -> `nyl reconcile -e
 * dev`). Candidates come from the command table, so new commands are covered as they are added.
 * Loaded only on such an error.
 */
import { closest } from '../util/closest';
import { COMMANDS, type CommandSpec, groupOf } from './commands';

/** A word as sh reads it back: as it is when it holds no special character, else single-quoted. */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

function commandLine(words: string[]): string {
  return ['nyl', ...words].map(shellQuote).join(' ');
}

/** The message and fix of a command line that names no command. */
export function unknownCommandHelp(argv: string[]): { message: string; fix: string } {
  const message = `unknown command: nyl ${argv.join(' ')}`;
  const group = groupOf(argv);
  if (group !== undefined) {
    const subs = COMMANDS.filter((c) => c.words.length > 1 && c.words[0] === group).map((c) => c.words[1]!);
    const typed = argv[1];
    const guess = typed !== undefined && !typed.startsWith('-') ? closest(typed, subs) : undefined;
    if (guess) return { message, fix: `did you mean \`${commandLine([group, guess, ...argv.slice(2)])}\`?` };
    const what = typed === undefined || typed.startsWith('-') ? `nyl ${group} needs a subcommand` : message;
    return { message: `${what}; the subcommands of nyl ${group}: ${subs.join(', ')}`, fix: `see \`nyl ${group} --help\` for what each does` };
  }
  const typed = argv[0];
  const words = [...new Set(COMMANDS.map((c) => c.words[0]!))];
  const guess = typed !== undefined && !typed.startsWith('-') ? closest(typed, words) : undefined;
  if (guess) return { message, fix: `did you mean \`${commandLine([guess, ...argv.slice(1)])}\`?` };
  return { message, fix: 'see `nyl --help` for the commands' };
}

/**
 * The fix of an unknown long option of spec (`--unti`, `--unti=a`): the command line with the
 * closest option of the command instead, or its help when none is close.
 */
export function unknownOptionFix(spec: CommandSpec, rest: string[], option: string): string {
  const help = `see \`nyl ${spec.words.join(' ')} --help\``;
  if (!option.startsWith('--')) return help;
  const guess = closest(option.slice(2), spec.options.map((o) => o.name));
  if (!guess) return help;
  const fixed = rest.map((a) => (a === option ? `--${guess}` : a.startsWith(`${option}=`) ? `--${guess}${a.slice(option.length)}` : a));
  return `did you mean --${guess}? \`${commandLine([...spec.words, ...fixed])}\``;
}
