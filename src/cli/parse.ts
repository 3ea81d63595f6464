/**
 * argv of one command -> its parsed options and path, by the command table's option specs.
 * A usage problem is an NYL-USAGE error. Kept light (node:util and the table only): the
 * diagnostic catalog is loaded only when there is a problem to report.
 */
import { parseArgs } from 'node:util';
import type { CommandSpec } from './commands';

export interface ParsedCommand {
  spec: CommandSpec;
  values: Record<string, string | boolean | string[] | undefined>;
  path: string;
}

function usageError(message: string, fix?: string): never {
  // Loaded here so that a valid command line does not pay for the catalog before it needs it.
  const { diagnostic, NylError } = require('../errors/diagnostic') as typeof import('../errors/diagnostic');
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
