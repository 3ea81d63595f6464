/**
 * A `run:` argv that hands text to a shell: `[sh, -c, TEXT, ...]`. References are substituted into
 * argv, and each element reaches the program as one argument, which is safe for a program that
 * takes it as data. A shell takes TEXT as code: a referenced value holding `"; rm -rf ~` runs as a
 * command there, as it would in `script:` (where references are refused, see references.ts). Nyl
 * does not refuse it (the argv is the user's to write), but warns NYL-SOURCE-SHELL-REFERENCE at
 * the element's file, line and pointer, with the fix: pass the value through `env:` and read
 * "$NAME", or as an argument after the script and read "$1".
 *
 * What counts as a shell, by the program's basename (so `/bin/sh` too): sh, bash, dash, zsh, ksh,
 * mksh and ash, also after `env` (with its NAME=VALUE assignments and options) or `busybox`. Its
 * text is the first operand once `-c` stood among its options, alone or combined (`-ec`,
 * `-euc`), before or after others (`-o pipefail` takes its argument along). Pure: no I/O.
 */
import { argvFieldsOf } from '../drivers/kinds';
import { type Diagnostic, type SourceLocation, diagnostic } from '../errors/diagnostic';
import { childPointer } from '../util/schema';
import { type TemplatePart, parseTemplate } from './references';
import type { UnitResource } from './types';

const SHELLS: ReadonlySet<string> = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'mksh', 'ash']);

/** Options of env and of the shells that take the next word as their argument. */
const ENV_ARGUMENT_OPTIONS: ReadonlySet<string> = new Set(['-u', '--unset', '-C', '--chdir']);
const SHELL_ARGUMENT_OPTIONS: ReadonlySet<string> = new Set(['--rcfile', '--init-file']);

function basename(word: string | undefined): string | undefined {
  return word?.slice(word.lastIndexOf('/') + 1);
}

/** The index of the shell's own name in argv (after `env ...` or `busybox`), or undefined when no shell runs. */
function shellAt(run: readonly string[]): number | undefined {
  let i = 0;
  if (basename(run[0]) === 'env') {
    i = 1;
    while (i < run.length && (/^[A-Za-z_][A-Za-z0-9_]*=/.test(run[i]!) || run[i]!.startsWith('-'))) i += ENV_ARGUMENT_OPTIONS.has(run[i]!) ? 2 : 1;
  }
  if (basename(run[i]) === 'busybox') i += 1;
  const name = basename(run[i]);
  return name !== undefined && SHELLS.has(name) ? i : undefined;
}

/**
 * The index of the text the shell runs (the first operand after `-c`), or undefined: no shell, no
 * `-c`, or no text after it.
 */
export function shellTextIndex(run: readonly string[]): number | undefined {
  const shell = shellAt(run);
  if (shell === undefined) return undefined;
  let command = false;
  for (let i = shell + 1; i < run.length; i++) {
    const word = run[i]!;
    if (word === '--' || word === '-') return command && i + 1 < run.length ? i + 1 : undefined;
    if (word.startsWith('--')) {
      if (SHELL_ARGUMENT_OPTIONS.has(word)) i += 1;
      continue;
    }
    const flags = /^[-+]([A-Za-z]+)$/.exec(word);
    if (!flags) return command ? i : undefined;
    if (word.startsWith('-') && flags[1]!.includes('c')) command = true;
    // `-o pipefail`, `-euo pipefail`, bash's `-O extglob`: each o or O takes the next word.
    i += flags[1]!.replace(/[^oO]/g, '').length;
  }
  return undefined;
}

/** A shell text that holds references: where, which shell, and the references in it. */
interface ShellTextReference {
  /** JSON pointer inside spec, e.g. `/teardown/run/2`. */
  pointer: string;
  /** The argv field, e.g. `/teardown/run`. */
  field: string;
  run: readonly string[];
  index: number;
  expressions: string[];
}

/** Every argv field of the unit whose shell text holds a reference, in the kind's field order. */
function shellTextReferences(unit: Pick<UnitResource, 'kind' | 'spec'>): ShellTextReference[] {
  const out: ShellTextReference[] = [];
  for (const field of argvFieldsOf(unit.kind)) {
    const run = valueAt(unit.spec, field);
    if (!Array.isArray(run) || !run.every((w): w is string => typeof w === 'string')) continue;
    const index = shellTextIndex(run);
    if (index === undefined) continue;
    const expressions = parseTemplate(run[index]!)
      .parts.filter((p): p is Extract<TemplatePart, { expression: string }> => 'reference' in p)
      .map((p) => `\${{ ${p.expression} }}`);
    if (expressions.length > 0) out.push({ pointer: childPointer(field, index), field, run, index, expressions: [...new Set(expressions)] });
  }
  return out;
}

function valueAt(spec: Record<string, unknown>, pointer: string): unknown {
  let node: unknown = spec;
  for (const key of pointer.slice(1).split('/'))
    node = typeof node === 'object' && node !== null && !Array.isArray(node) ? (node as Record<string, unknown>)[key] : undefined;
  return node;
}

/** NYL-SOURCE-SHELL-REFERENCE for each shell text of the unit that holds a reference. */
export function shellReferenceWarnings(unit: UnitResource, env?: string): Diagnostic[] {
  return shellTextReferences(unit).map((found) => {
    const shell = basename(found.run[shellAt(found.run)!])!;
    const field = found.field.slice(1).replace(/\//g, '.');
    const message =
      `${unit.kind} ${unit.name}: ${field}[${found.index}] is the text ${shell} -c runs, and ${found.expressions.join(', ')} in it ` +
      `${found.expressions.length > 1 ? 'are' : 'is'} substituted into that text: a value that holds shell syntax (such as "; rm -rf ~") runs as commands`;
    return diagnostic('NYL-SOURCE-SHELL-REFERENCE', 'warning', message, {
      ...(env !== undefined ? { env } : {}),
      unit: unit.name,
      units: [unit.name],
      location: locationOf(unit, found.pointer),
      ...fixParams(found, shell),
      data: { pointer: `/spec${found.pointer}`, expressions: found.expressions },
    });
  });
}

function locationOf(unit: UnitResource, pointer: string): SourceLocation {
  const at = unit.locations?.[pointer];
  return at
    ? { file: unit.origin.file, line: at.line, column: at.column, pointer: `/spec${pointer}` }
    : { file: unit.origin.file, line: unit.origin.line, pointer: `/spec${pointer}` };
}

/** What the catalog's fix names: the action, the env: entries to add and the argv that passes the values as arguments. */
function fixParams(found: ShellTextReference, shell: string): Record<string, unknown> {
  const names = variableNames(found.expressions);
  const action = found.field === '/run' ? undefined : found.field.slice(1, found.field.lastIndexOf('/'));
  const argv = [...found.run.slice(0, found.index), `... ${found.expressions.map((_, i) => `"$${i + 1}"`).join(' ')} ...`, shell, ...found.expressions];
  return {
    ...(action ? { action } : {}),
    envEntries: `{${found.expressions.map((x, i) => `${names[i]}: '${x}'`).join(', ')}}`,
    variables: names.map((n) => `"$${n}"`).join(', '),
    positional: found.expressions.map((_, i) => `"$${i + 1}"`).join(', '),
    argv: `[${argv.map(flowScalar).join(', ')}]`,
  };
}

/** An environment variable name for each expression: its last key in upper case, made unique. */
function variableNames(expressions: readonly string[]): string[] {
  const used = new Set<string>();
  return expressions.map((x) => {
    const key = /([A-Za-z0-9_-]+)\s*\}\}$/.exec(x)?.[1] ?? 'value';
    let name = key.toUpperCase().replace(/[^A-Z0-9_]/g, '_');
    if (/^[0-9]/.test(name) || name.startsWith('NYL_')) name = `VALUE_${name}`;
    let unique = name;
    for (let n = 2; used.has(unique); n++) unique = `${name}_${n}`;
    used.add(unique);
    return unique;
  });
}

/** A YAML flow scalar: plain when it reads back as the same string, else single-quoted. */
function flowScalar(word: string): string {
  const plain = /^[A-Za-z0-9_./=+-][A-Za-z0-9_./=+:-]*$/.test(word) && !/^[-+.]?[0-9]/.test(word) && !/^(?:true|false|null|yes|no|on|off|y|n)$/i.test(word);
  return plain ? word : `'${word.replace(/'/g, "''")}'`;
}
