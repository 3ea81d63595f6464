/**
 * `nyl` entry point: argv -> typed request -> operation -> renderer -> exit code.
 * The only module that writes reports to stdout and calls process.exit.
 * Operations are loaded lazily so that --version and --help start fast.
 */
import { parseArgs } from 'node:util';
import { nylVersion } from '../util/version';
import { type CommandSpec, commandHelp, findCommand, mainHelp } from './commands';

function version(): string {
  return nylVersion();
}

export interface ParsedCommand {
  spec: CommandSpec;
  values: Record<string, string | boolean | string[] | undefined>;
  path: string;
}

function usageError(message: string, fix?: string): never {
  // Imported here so that the fast paths do not load the catalog.
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

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === '--version' || argv[0] === '-V' || argv[0] === 'version') {
    process.stdout.write(`nyl ${version()}\n`);
    return 0;
  }
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    const sub = argv[0] === 'help' ? findCommand(argv.slice(1)) : undefined;
    process.stdout.write(sub ? commandHelp(sub.spec) : mainHelp(version()));
    return argv.length === 0 ? 1 : 0;
  }
  const found = findCommand(argv);
  if (!found) {
    process.stderr.write(`error NYL-USAGE\n  unknown command: nyl ${argv.join(' ')}\n  fix: see \`nyl --help\` for the commands\n`);
    return 1;
  }
  if (found.rest.includes('--help') || found.rest.includes('-h')) {
    process.stdout.write(commandHelp(found.spec));
    return 0;
  }
  const { dispatch } = require('./dispatch') as typeof import('./dispatch');
  return dispatch(found.spec, found.rest);
}

// `nyl status | head` closes stdout early: that is not an error of nyl.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw error;
  });
}

if (require.main === module) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`error NYL-INTERNAL\n  ${(error as Error)?.stack ?? String(error)}\n`);
      process.exitCode = 1;
    },
  );
}
