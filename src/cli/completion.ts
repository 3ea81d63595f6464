/**
 * `nyl completion bash|zsh|fish`: a shell completion script generated from the registry
 * (src/cli/registry.ts), so that a command or option added there completes without touching
 * this module. It completes commands, the subcommands of `state` and `lease`, each command's options, the values
 * of `-o`, and environment names after `-e` through the hidden `nyl __complete environments`
 * (the Environments the project declares at HEAD, as every command reads them).
 */
import type { CommandSpec } from '../commands/command';
import { COMMANDS, subcommandsOf } from './registry';
import { EXTRA_COMMANDS } from './help';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
/** Fixed values of options; -e asks `nyl __complete environments`. */
const VALUES: Record<string, string[]> = { output: ['text', 'table', 'json'] };
/** Options every command accepts besides its table's (main.ts handles them). */
const GLOBAL = ['--help', '--no-color'];

function topWords(): string[] {
  return [...new Set([...COMMANDS.map((c) => c.words[0]!), ...EXTRA_COMMANDS.map(([w]) => w), 'help'])];
}

/** Each group (a first word with subcommands, in table order) and its subcommands. */
function groups(): Map<string, CommandSpec[]> {
  const names = new Set(COMMANDS.filter((c) => c.words.length > 1).map((c) => c.words[0]!));
  return new Map([...names].map((g) => [g, subcommandsOf(g)]));
}

function flags(spec: CommandSpec, valued: boolean): string[] {
  return spec.options.filter((o) => (o.type === 'string') === valued).flatMap((o) => [`--${o.name}`, ...(o.short ? [`-${o.short}`] : [])]);
}

/** The bash `case` arm of one command: its options, and those that take a value. */
function bashArm(spec: CommandSpec): string {
  const all = [...flags(spec, true), ...flags(spec, false), ...GLOBAL];
  return `    '${spec.words.join(' ')}') opts='${all.join(' ')}'; valued='${flags(spec, true).join(' ')}' ;;`;
}

/** The bash script; zsh runs it too, through bashcompinit. */
function bashScript(): string {
  const groupArms = [...groups()].map(([g, subs]) => `    ${g}) subs='${subs.map((c) => c.words[1]).join(' ')}' ;;`);
  return `# nyl completion for bash: source <(nyl completion bash), or save it in
# ~/.local/share/bash-completion/completions/nyl. Generated from nyl's command table.
_nyl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd subs='' opts='' valued=''
  COMPREPLY=()
  case "\${COMP_WORDS[1]}" in
${groupArms.join('\n')}
  esac
  if [[ $COMP_CWORD -eq 1 ]]; then
    COMPREPLY=($(compgen -W '${topWords().join(' ')}' -- "$cur")); return
  fi
  if [[ -n $subs ]]; then
    if [[ $COMP_CWORD -eq 2 ]]; then COMPREPLY=($(compgen -W "$subs" -- "$cur")); return; fi
    cmd="\${COMP_WORDS[1]} \${COMP_WORDS[2]}"
  else
    cmd="\${COMP_WORDS[1]}"
  fi
  case "$cmd" in
    completion) [[ $COMP_CWORD -eq 2 ]] && COMPREPLY=($(compgen -W '${SHELLS.join(' ')}' -- "$cur")); return ;;
    help) COMPREPLY=($(compgen -W '${topWords().join(' ')}' -- "$cur")); return ;;
${COMMANDS.map(bashArm).join('\n')}
    *) return ;;
  esac
  if [[ " $valued " == *" $prev "* ]]; then
    case "$prev" in
      -o|--output) COMPREPLY=($(compgen -W '${VALUES.output!.join(' ')}' -- "$cur")) ;;
      -e|--environment) COMPREPLY=($(compgen -W "$("\${COMP_WORDS[0]}" __complete environments 2>/dev/null)" -- "$cur")) ;;
      *) COMPREPLY=($(compgen -f -- "$cur")) ;;
    esac
    return
  fi
  if [[ $cur == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); else COMPREPLY=($(compgen -d -- "$cur")); fi
}
complete -F _nyl nyl
`;
}

function zshScript(): string {
  return `#compdef nyl
# nyl completion for zsh: source <(nyl completion zsh). It runs nyl's bash completion through
# zsh's bashcompinit, so both shells complete the same words.
autoload -U +X compinit && { (( $+functions[compdef] )) || compinit; }
autoload -U +X bashcompinit && bashcompinit
${bashScript()}`;
}

/** A fish description: the first sentence, single quotes escaped. */
function fishText(text: string): string {
  const first = /^.*?[.!?](\s|$)/.exec(text)?.[0]?.trim() ?? text;
  return `'${first.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/** The fish lines of one command: a condition that its words were typed, then each option. */
function fishCommand(spec: CommandSpec): string[] {
  const when = spec.words.map((w) => `__fish_seen_subcommand_from ${w}`).join('; and ');
  return spec.options.map((o) => {
    const names = `-l ${o.name}${o.short ? ` -s ${o.short}` : ''}`;
    const values =
      o.type !== 'string' ? '' : o.name === 'environment' ? " -x -a '(__nyl_environments)'" : VALUES[o.name] ? ` -x -a '${VALUES[o.name]!.join(' ')}'` : ' -r';
    return `complete -c nyl -n '${when}' ${names}${values} -d ${fishText(o.help)}`;
  });
}

function fishScript(): string {
  const summaries = new Map([
    ...COMMANDS.map((c): [string, string] => [c.words[0]!, c.words.length > 1 ? `${c.words[0]} subcommands` : c.summary]),
    ...EXTRA_COMMANDS,
  ]);
  const lines = [
    '# nyl completion for fish: nyl completion fish | source, or save it as ~/.config/fish/completions/nyl.fish.',
    "# Generated from nyl's command table.",
    'function __nyl_environments; command nyl __complete environments 2>/dev/null; end',
    'complete -c nyl -f',
    ...[...summaries].map(([w, s]) => `complete -c nyl -n __fish_use_subcommand -a ${w} -d ${fishText(s)}`),
    ...[...groups()].flatMap(([g, subs]) => {
      const none = `__fish_seen_subcommand_from ${g}; and not __fish_seen_subcommand_from ${subs.map((c) => c.words[1]).join(' ')}`;
      return subs.map((c) => `complete -c nyl -n '${none}' -a ${c.words[1]} -d ${fishText(c.summary)}`);
    }),
    `complete -c nyl -n '__fish_seen_subcommand_from completion' -x -a '${SHELLS.join(' ')}'`,
    ...COMMANDS.flatMap(fishCommand),
    "complete -c nyl -l help -d 'Show help'",
    "complete -c nyl -l no-color -d 'No colour'",
  ];
  return `${lines.join('\n')}\n`;
}

/** `nyl __complete environments`: the project's Environment names, one per line; nothing on a problem. */
async function environments(): Promise<number> {
  try {
    const { createRuntime } = await import('./runtime');
    const { readDeclarations } = await import('../commands/shared/context');
    const project = await readDeclarations(createRuntime({ ...process.env }, new AbortController().signal), '.');
    for (const name of [...project.environments.keys()].sort()) process.stdout.write(`${name}\n`);
    return 0;
  } catch {
    return 1;
  }
}

/** `nyl completion <shell>` and the hidden `nyl __complete environments`. */
export async function completion(argv: string[]): Promise<number> {
  if (argv[0] === '__complete') return argv[1] === 'environments' ? environments() : 1;
  const shell = argv[1];
  if (shell === '--help' || shell === '-h') {
    process.stdout.write(
      `Usage: nyl completion ${SHELLS.join('|')}\n\nPrints a completion script for the shell, generated from the command table:\n  source <(nyl completion bash)\n  source <(nyl completion zsh)\n  nyl completion fish > ~/.config/fish/completions/nyl.fish\n`,
    );
    return 0;
  }
  const scripts: Record<string, () => string> = { bash: bashScript, zsh: zshScript, fish: fishScript };
  if (shell !== undefined && argv.length === 2 && scripts[shell]) {
    process.stdout.write(scripts[shell]());
    return 0;
  }
  const { diagnostic } = await import('../errors/diagnostic');
  const { renderDiagnostics } = await import('../commands/text/render');
  const { styled } = await import('./style');
  const usage = diagnostic('NYL-USAGE', 'error', `nyl completion takes one shell: ${SHELLS.join(', ')}`, {
    fix: 'run `nyl completion bash` (or zsh, or fish)',
  });
  process.stderr.write(`${styled(process.stderr, () => renderDiagnostics([usage]))}\n`);
  return 1;
}
