/**
 * `nyl completion bash|zsh|fish`: a shell completion script generated from the registry
 * (src/cli/registry.ts), so that a command or option added there completes without touching
 * this module. It completes commands, the subcommands of `state` and `lease`, each command's
 * options, the values an option lists (`choices`: each command's own `-o` values), and the names
 * of the project an option takes (`completes`: environments, units, groups) through the hidden
 * `nyl __complete <what> <words...>`, which reads the project at HEAD as every command does; the
 * words typed so far let it complete the units of the environments `-e` names.
 */
import type { CommandSpec, OptionSpec } from '../commands/command';
import type { NameKind } from '../commands/shared/project-names';
import { COMMANDS, subcommandsOf } from './registry';
import { EXTRA_COMMANDS } from './help';

const SHELLS = ['bash', 'zsh', 'fish'] as const;
/** What `nyl __complete` lists: the names of the project an option takes (OptionSpec.completes). */
const NAMES: readonly NameKind[] = ['environments', 'units', 'groups'];
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

/** An option's spellings as a bash `case` pattern: `-o|--output`. */
function pattern(o: OptionSpec): string {
  return [...(o.short ? [`-${o.short}`] : []), `--${o.name}`].join('|');
}

/**
 * The bash `case` arm of one command: its options, those that take a value and those that take
 * a comma-separated list, then what the value before the cursor completes to: the option's own
 * values (choices), or names of the project (names).
 */
function bashArm(spec: CommandSpec): string {
  const all = [...flags(spec, true), ...flags(spec, false), ...GLOBAL];
  const lists = spec.options.filter((o) => o.list).flatMap((o) => [`--${o.name}`, ...(o.short ? [`-${o.short}`] : [])]);
  const values = spec.options.flatMap((o) =>
    o.choices ? [`${pattern(o)}) choices='${o.choices.join(' ')}' ;;`] : o.completes ? [`${pattern(o)}) names=${o.completes} ;;`] : [],
  );
  const head = `    '${spec.words.join(' ')}') opts='${all.join(' ')}'; valued='${flags(spec, true).join(' ')}'; lists='${lists.join(' ')}'`;
  if (values.length === 0) return `${head} ;;`;
  return [`${head}`, '      case "$prev" in', ...values.map((v) => `        ${v}`), '      esac ;;'].join('\n');
}

/** The bash script; zsh runs it too, through bashcompinit. */
function bashScript(): string {
  const groupArms = [...groups()].map(([g, subs]) => `    ${g}) subs='${subs.map((c) => c.words[1]).join(' ')}' ;;`);
  return `# nyl completion for bash: source <(nyl completion bash), or save it in
# ~/.local/share/bash-completion/completions/nyl. Generated from nyl's command table.
_nyl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd subs='' opts='' valued='' lists='' choices='' names='' pre=''
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
    # A comma-separated list completes its last name.
    if [[ " $lists " == *" $prev "* && $cur == *,* ]]; then pre="\${cur%,*},"; cur="\${cur##*,}"; fi
    if [[ -n $choices ]]; then
      COMPREPLY=($(compgen -P "$pre" -W "$choices" -- "$cur"))
    elif [[ -n $names ]]; then
      COMPREPLY=($(compgen -P "$pre" -W "$("\${COMP_WORDS[0]}" __complete "$names" "\${COMP_WORDS[@]:1:COMP_CWORD-1}" 2>/dev/null)" -- "$cur"))
    else
      COMPREPLY=($(compgen -f -- "$cur"))
    fi
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
    const values = o.type !== 'string' ? '' : o.choices ? ` -x -a '${o.choices.join(' ')}'` : o.completes ? ` -x -a '(__nyl_complete ${o.completes})'` : ' -r';
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
    // The words typed so far, without `nyl`: a -e among them narrows the units.
    'function __nyl_complete; set -l words (commandline -opc); set -e words[1]; command nyl __complete $argv[1] $words 2>/dev/null; end',
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

/** The values of `-e` among the words typed (`-e dev`, `-edev`, `--environment=dev`). */
function environmentsTyped(words: string[]): string[] {
  const out: string[] = [];
  words.forEach((w, i) => {
    if ((w === '-e' || w === '--environment') && words[i + 1] !== undefined) out.push(words[i + 1]!);
    else if (w.startsWith('--environment=')) out.push(w.slice('--environment='.length));
    else if (/^-e[^-]/.test(w)) out.push(w.slice(2));
  });
  return out;
}

/**
 * `nyl __complete environments|units|groups [words...]`: names of the project at HEAD, one per
 * line; for units, those of the environments a `-e` among the words names (their ownership
 * sets), else every unit the project declares. Nothing on a problem: a TAB press prints no error.
 */
async function names(what: string | undefined, words: string[]): Promise<number> {
  const kind = NAMES.find((n) => n === what);
  if (kind === undefined) return 1;
  try {
    const { createRuntime } = await import('./runtime');
    const { projectNames } = await import('../commands/shared/project-names');
    const rt = createRuntime({ ...process.env }, new AbortController().signal);
    for (const name of await projectNames(rt, '.', kind, environmentsTyped(words))) process.stdout.write(`${name}\n`);
    return 0;
  } catch {
    return 1;
  }
}

/** `nyl completion <shell>` and the hidden `nyl __complete <what> [words...]`. */
export async function completion(argv: string[]): Promise<number> {
  if (argv[0] === '__complete') return names(argv[1], argv.slice(2));
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
