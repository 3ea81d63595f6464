/**
 * Help, printed from the registry (src/cli/registry.ts): the main help, a group's
 * subcommands, and one command's usage, description, options and examples. Loads nothing but the
 * registry, so that `nyl --help` starts fast.
 */
import type { CommandSpec } from '../commands/command';
import { COMMANDS, subcommandsOf } from './registry';

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
const NO_COLOR_HELP = 'No colour (also NO_COLOR=1; colour is only used on a terminal).';

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
