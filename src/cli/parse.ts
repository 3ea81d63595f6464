/**
 * argv of one command -> its parsed options and path, by its registry entry's option specs.
 * A usage problem is an NYL-USAGE error. Only dispatch.ts loads this module, and it loads the
 * diagnostic catalog itself: --version and --help load neither.
 *
 * Values are checked here, before anything is read or written: an empty value is refused (an
 * unset shell variable in `--unit "$UNIT"` must not widen a command to every unit), each name of
 * a comma-separated list must be non-empty, and durations must be within their bounds.
 */
import { parseArgs } from 'node:util';
import { diagnostic, NylError } from '../errors/diagnostic';
import { type DurationBounds, WAIT_LEASE_BOUNDS, durationProblem } from '../util/duration';
import type { Command, OptionSpec, ParsedCommand } from '../commands/command';
import { unknownOptionFix } from './suggest';

function usageError(message: string, fix?: string): never {
  throw new NylError(diagnostic('NYL-USAGE', 'error', message, fix ? { fix } : {}));
}

export function parseCommand(spec: Command, rest: string[]): ParsedCommand {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const o of spec.options) {
    options[o.name] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true, tokens: true });
  } catch (error) {
    const message = (error as Error).message.replace(/\. To specify.*$/s, '');
    const unknown = /^Unknown option '([^']+)'/.exec(message)?.[1];
    usageError(message, unknown ? unknownOptionFix(spec, rest, unknown) : `see \`nyl ${spec.words.join(' ')} --help\``);
  }
  if (parsed.positionals.length > 1) {
    usageError(`unexpected arguments: ${parsed.positionals.slice(1).join(' ')}`, `see \`nyl ${spec.words.join(' ')} --help\``);
  }
  refuseRepeats(spec, parsed.tokens);
  const values = parsed.values as ParsedCommand['values'];
  for (const option of spec.options) checkValues(option, values[option.name]);
  return { spec, values, path: parsed.positionals[0] ?? '.', pathGiven: parsed.positionals.length > 0 };
}

/**
 * A value option given twice that takes one value is NYL-USAGE: parseArgs would keep the last
 * one silently, and `nyl state init -e dev -e prod` would act on prod alone. Options declared
 * `multiple` (such as -e of reconcile, plan, status, teardown and verify) collect every value.
 */
function refuseRepeats(spec: Command, tokens: readonly { kind: string; name?: string; rawName?: string; value?: string | undefined }[]): void {
  const seen = new Map<string, string[]>();
  for (const token of tokens) {
    if (token.kind !== 'option' || token.name === undefined) continue;
    const option = spec.options.find((o) => o.name === token.name);
    if (!option || option.multiple || option.type !== 'string') continue;
    seen.set(option.name, [...(seen.get(option.name) ?? []), `${token.rawName ?? `--${option.name}`} ${token.value ?? ''}`.trim()]);
  }
  for (const [name, given] of seen) {
    if (given.length < 2) continue;
    const option = spec.options.find((o) => o.name === name)!;
    const what = name === 'environment' ? `nyl ${spec.words.join(' ')} acts on one environment` : `--${name} takes one value`;
    usageError(
      `${what}, and was given ${given.join(', ')}`,
      `pass ${given[given.length - 1]} once${name === 'environment' ? ', and run the command again for each other environment' : ''}${option.list ? ` (or one comma-separated --${name} list)` : ''}`,
    );
  }
}

/** Options whose value is a duration, with the range each accepts. */
const DURATIONS: Record<string, DurationBounds> = { 'wait-lease': WAIT_LEASE_BOUNDS };

/**
 * An empty --reason is no reason and widens nothing: the commands that need one refuse it with
 * their own code (NYL-REASON-REQUIRED, NYL-RECOVER-REASON-REQUIRED, which name the fix).
 */
const MAY_BE_EMPTY = new Set(['reason']);

function checkValues(option: OptionSpec, value: string | boolean | string[] | undefined): void {
  const flag = `--${option.name}`;
  for (const text of typeof value === 'string' ? [value] : Array.isArray(value) ? value : []) {
    if (text.trim() === '' && !MAY_BE_EMPTY.has(option.name)) {
      usageError(`${flag} has an empty value (an unset shell variable?)`, `pass ${flag} ${option.value ?? '<value>'}, or leave ${flag} out`);
    }
    if (option.list && text.split(',').some((item) => item.trim() === '')) {
      usageError(`${flag} ${text} has an empty name in its list`, `pass ${flag} ${option.value ?? '<a>,<b>'} with every name non-empty`);
    }
    const bounds = DURATIONS[option.name];
    const problem = bounds && durationProblem(text, bounds);
    if (problem) usageError(`${flag} ${problem.message}`, `pass ${flag} with ${problem.wanted}`);
  }
}
