/**
 * argv of one command -> its parsed options and path, by the command table's option specs.
 * A usage problem is an NYL-USAGE error. Only dispatch.ts loads this module, and it loads the
 * diagnostic catalog itself: --version and --help load neither.
 */
import { parseArgs } from 'node:util';
import { diagnostic, NylError } from '../errors/diagnostic';
import type { CommandSpec } from './commands';

export interface ParsedCommand {
  spec: CommandSpec;
  values: Record<string, string | boolean | string[] | undefined>;
  path: string;
}

function usageError(message: string, fix?: string): never {
  throw new NylError(diagnostic('NYL-USAGE', 'error', message, fix ? { fix } : {}));
}

export function parseCommand(spec: CommandSpec, rest: string[]): ParsedCommand {
  const options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }> = {};
  for (const o of spec.options) {
    options[o.name] = { type: o.type, ...(o.short ? { short: o.short } : {}), ...(o.multiple ? { multiple: true } : {}) };
  }
  let parsed;
  try {
    parsed = parseArgs({ args: rest, options, allowPositionals: true, strict: true });
  } catch (error) {
    usageError(`${(error as Error).message.replace(/\. To specify.*$/s, '')}`, `see \`nyl ${spec.words.join(' ')} --help\``);
  }
  if (parsed.positionals.length > 1) {
    usageError(`unexpected arguments: ${parsed.positionals.slice(1).join(' ')}`, `see \`nyl ${spec.words.join(' ')} --help\``);
  }
  return { spec, values: parsed.values as ParsedCommand['values'], path: parsed.positionals[0] ?? '.' };
}
