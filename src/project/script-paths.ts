/**
 * The source paths a unit's own action names, read from its `run:` argv or `script:` text. Pure:
 * words in, words out; whether a word names a file of the source is the listing's to say
 * (./source-reads.ts).
 *
 * Two kinds of word. The program the action runs, when it is a path: a `run:` argv whose program
 * has a slash (`./bin/deploy.sh`, as exec finds it), the script operand of an interpreter (`[bash,
 * deploy.sh]`, `[python3, tools/seed.py]`, `. lib/env.sh` in a script), and the same as the command
 * word of each command of `script:` text or of the text a `run:` hands to `sh -c`. Such a file
 * enters the execution key as a declared input does. And, as a heuristic for a warning only,
 * every other word that looks like a relative path: it has a slash or ends in a file extension,
 * and holds no `$`, backquote, `${{`, `://`, nor starts with `/`, `-` or `~` (`--config=x/y` and
 * `NAME=x/y` are read after their `=`). Words of the shell text are split as sh would split them
 * for the simple cases (quotes, `;`, `&&`, `|`, redirections, comments); a word the text builds
 * at run time (a variable, a command substitution) names nothing here.
 */
import { isGlob } from './glob';
import { shellTextIndex } from './shell-argv';

/** A word of an action that may name a source path, as written (relative to the working directory). */
interface ActionWord {
  word: string;
  /** The program the action runs (or an interpreter's script): it enters the execution key. */
  program: boolean;
}

/** Programs that run a script file given as their first operand. */
const INTERPRETERS: ReadonlySet<string> = new Set([
  'sh',
  'bash',
  'dash',
  'zsh',
  'ksh',
  'mksh',
  'ash',
  'python',
  'python3',
  'node',
  'ruby',
  'perl',
  'pwsh',
  '.',
  'source',
]);

const SHELLS: ReadonlySet<string> = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash']);

/** An option after which the interpreter runs text or a module, not a file: a shell's `-c` (alone or combined), `-e`, `-m`, `--eval`. */
function runsText(interpreter: string, word: string): boolean {
  if (SHELLS.has(interpreter)) return /^-[A-Za-z]*c[A-Za-z]*$/.test(word);
  return /^(?:-[cemp]|-E|--eval|--print|-Command|-EncodedCommand)$/i.test(word);
}

/** Shell words that open or close a construct: the command word follows them. */
const RESERVED: ReadonlySet<string> = new Set([
  'if',
  'then',
  'else',
  'elif',
  'fi',
  'do',
  'done',
  'while',
  'until',
  '!',
  '{',
  '}',
  'time',
  'exec',
  'command',
  'nohup',
]);

function basename(word: string): string {
  return word.slice(word.lastIndexOf('/') + 1);
}

/** A word the text builds at run time, or one that cannot be a relative path of the source. */
function isDynamic(word: string): boolean {
  return /[$`]/.test(word) || word.includes('${{');
}

/** The path a word may name: after `--opt=` or `NAME=`; undefined for a word that does not look like a relative path. */
function pathOf(word: string): string | undefined {
  const eq = word.indexOf('=');
  const value = eq > 0 && (word.startsWith('-') || /^[A-Za-z_][A-Za-z0-9_]*=/.test(word)) ? word.slice(eq + 1) : word;
  if (value === '' || isDynamic(value) || value.includes('://') || /^[/~-]/.test(value) || /\s/.test(value)) return undefined;
  return value.includes('/') || /\.[A-Za-z][A-Za-z0-9]{0,7}$/.test(value) ? value : undefined;
}

/** The script file an interpreter runs: its first operand, unless an option makes it run text or a module. */
function interpreterOperand(interpreter: string, words: readonly string[]): string | undefined {
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (runsText(interpreter, word)) return undefined;
    if (word === '--') continue;
    if (!/^[-+]/.test(word)) return word;
    // A shell's `-o pipefail` (`-euo pipefail`, `-O extglob`) takes the next word along.
    if (SHELLS.has(interpreter) && /^[-+][A-Za-z]*[oO]$/.test(word)) i += 1;
  }
  return undefined;
}

/** The program file of one command (its words), if it names one: a path, or an interpreter's script. */
function programOf(words: readonly string[]): string | undefined {
  let i = 0;
  while (i < words.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!) || RESERVED.has(words[i]!))) i += 1;
  if (words[i] !== undefined && basename(words[i]!) === 'env') return programOf(words.slice(i + 1).filter((w) => !w.startsWith('-')));
  const program = words[i];
  if (program === undefined || isDynamic(program)) return undefined;
  if (INTERPRETERS.has(basename(program))) {
    const operand = interpreterOperand(basename(program), words.slice(i + 1));
    return operand !== undefined && !isDynamic(operand) && !operand.includes('://') ? operand : undefined;
  }
  return program.includes('/') && !program.startsWith('/') ? program : undefined;
}

/** The words of one command, each either the program or a path-like word. */
function wordsOfCommand(words: readonly string[], out: ActionWord[]): void {
  const program = programOf(words);
  if (program !== undefined) out.push({ word: program, program: true });
  for (const word of words) {
    if (word === program) continue;
    const path = pathOf(word);
    if (path !== undefined) out.push({ word: path, program: false });
  }
}

/**
 * The simple commands of shell text, each as its words: quotes taken off, `;`, `&`, `|`, `(`,
 * `)`, newlines and redirections split, comments dropped. A quoted `$` stays in its word, so that
 * it reads as built at run time.
 */
export function shellCommands(text: string): string[][] {
  const commands: string[][] = [];
  let words: string[] = [];
  let word: string | undefined;
  const endWord = () => {
    if (word !== undefined) words.push(word);
    word = undefined;
  };
  const endCommand = () => {
    endWord();
    if (words.length > 0) commands.push(words);
    words = [];
  };
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === "'" || ch === '"') {
      const close = text.indexOf(ch, i + 1);
      const end = close < 0 ? text.length : close;
      word = (word ?? '') + text.slice(i + 1, end);
      i = end;
    } else if (ch === '\\' && i + 1 < text.length) {
      if (text[i + 1] !== '\n') word = (word ?? '') + text[i + 1];
      i += 1;
    } else if (ch === '#' && word === undefined) {
      const eol = text.indexOf('\n', i);
      i = (eol < 0 ? text.length : eol) - 1;
    } else if (/[;&|()\n]/.test(ch)) endCommand();
    else if (/[\s<>]/.test(ch)) endWord();
    else word = (word ?? '') + ch;
  }
  endCommand();
  return commands;
}

/** The words of a `run:` argv: its program, its path-like elements, and those of the text it hands to `sh -c`. */
function argvWords(run: readonly unknown[], out: ActionWord[]): void {
  if (!run.every((w): w is string => typeof w === 'string')) return;
  const text = shellTextIndex(run);
  wordsOfCommand(text === undefined ? run : run.filter((_, i) => i !== text), out);
  if (text !== undefined) for (const command of shellCommands(run[text]!)) wordsOfCommand(command, out);
}

/** The fields of a kind's own action (KindDescriptor.actionFields). */
export interface ActionFields {
  argv: string;
  shellText: string;
  workingDir: string;
}

/** The words of an action's spec (or rendering) that may name source paths, programs first-come. */
export function actionWords(spec: Record<string, unknown>, fields: ActionFields): ActionWord[] {
  const out: ActionWord[] = [];
  const run = spec[fields.argv];
  const script = spec[fields.shellText];
  if (Array.isArray(run)) argvWords(run, out);
  if (typeof script === 'string') for (const command of shellCommands(script)) wordsOfCommand(command, out);
  return out;
}

/** The working directory an action's words resolve against, relative to the project root ('' the root); undefined when it is not known. */
export function actionDir(spec: Record<string, unknown>, fields: ActionFields): string | undefined {
  const dir = spec[fields.workingDir];
  if (dir === undefined) return '';
  return typeof dir === 'string' && !isDynamic(dir) ? resolvedPath('', dir) : undefined;
}

/** `dir` joined with a relative path, `.` and `..` resolved ('' the project root); undefined when it leaves the project. */
function resolvedPath(dir: string, relative: string): string | undefined {
  const parts: string[] = dir === '' ? [] : dir.split('/');
  for (const part of relative.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') parts.push(part);
    else if (parts.pop() === undefined) return undefined;
  }
  return parts.join('/');
}

/** What a word names once resolved against the working directory: a path, or a glob of paths, relative to the project root. */
export type NamedSource = { path: string } | { glob: string };

/** Resolves a word against the working directory; undefined when it leaves the project or names its root. */
export function resolveWord(dir: string, word: string): NamedSource | undefined {
  const trimmed = word.replace(/\/+$/, '');
  if (!isGlob(trimmed)) {
    const path = resolvedPath(dir, trimmed);
    return path ? { path } : undefined;
  }
  const segments = trimmed.split('/');
  const first = segments.findIndex((s) => isGlob(s));
  const rest = segments.slice(first);
  if (rest.includes('..')) return undefined;
  const base = resolvedPath(dir, segments.slice(0, first).join('/'));
  if (base === undefined) return undefined;
  return { glob: base ? `${base}/${rest.join('/')}` : rest.join('/') };
}
