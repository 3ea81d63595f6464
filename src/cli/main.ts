/**
 * `nyl` entry point: argv -> typed request -> operation -> renderer -> exit code.
 * The only module that writes reports to stdout and calls process.exit.
 * Operations are loaded lazily so that --version and --help start fast: this module loads only
 * the registry of commands and the version; argument parsing (parse.ts) and everything behind it come
 * with dispatch.ts.
 */
import { nylVersion } from '../util/version';
import { COMMANDS, findCommand, groupOf } from './registry';
import { commandHelp, groupHelp, mainHelp } from './help';

function version(): string {
  return nylVersion();
}

/** An unknown command is NYL-USAGE: as text on stderr, or as the one JSON document -o json asks for. */
function unknownCommand(argv: string[]): number {
  const { asksForJson } = require('./dispatch') as typeof import('./dispatch');
  const { refusalDocument } = require('../report/refusal') as typeof import('../report/refusal');
  const { diagnostic } = require('../errors/diagnostic') as typeof import('../errors/diagnostic');
  const { renderDiagnostics } = require('../commands/text/render') as typeof import('../commands/text/render');
  const { unknownCommandHelp } = require('./suggest') as typeof import('./suggest');
  const { styled } = require('./style') as typeof import('./style');
  const { message, fix } = unknownCommandHelp(argv);
  const usage = diagnostic('NYL-USAGE', 'error', message, { fix });
  if (!asksForJson(argv)) {
    process.stderr.write(`${styled(process.stderr, () => renderDiagnostics([usage]))}\n`);
    return 1;
  }
  // The word the user typed as the command; empty, as environment is, when the line starts with an
  // option (`nyl -o json`): a StateOperationReport always names its operation.
  const operation = argv[0] !== undefined && !argv[0].startsWith('-') ? argv[0] : '';
  process.stdout.write(`${JSON.stringify(refusalDocument('StateOperationReport', operation, '', [usage]), null, 2)}\n`);
  return 1;
}

/** The options that take a value, spelled as on a command line: `--no-color` after one is its value. */
function takesValue(arg: string | undefined): boolean {
  return COMMANDS.some((c) => c.options.some((o) => o.type === 'string' && (arg === `--${o.name}` || arg === `-${o.short}`)));
}

/**
 * `--no-color`, accepted anywhere by every command, taken off the command line here so that no
 * command's option table needs it (except where it is the value of the option before it).
 */
function withoutNoColor(argv: string[]): string[] {
  const rest = argv.filter((a, i) => a !== '--no-color' || takesValue(argv[i - 1]));
  if (rest.length !== argv.length) (require('./style') as typeof import('./style')).refuseColor();
  return rest;
}

const HELP = new Set(['--help', '-h']);

/** `nyl state`, `nyl state --help`, `nyl help state`: the subcommands of a group, when no command matched. */
function groupHelpOf(argv: string[]): number | undefined {
  const group = groupOf(argv);
  if (group === undefined || (argv.length > 1 && !HELP.has(argv[1]!))) return undefined;
  process.stdout.write(groupHelp(group));
  return argv.length === 1 ? 1 : 0;
}

export async function main(commandLine: string[]): Promise<number> {
  const argv = withoutNoColor(commandLine);
  if (argv[0] === '--version' || argv[0] === '-V' || argv[0] === 'version') {
    process.stdout.write(`nyl ${version()}\n`);
    return 0;
  }
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === '-h' || argv[0] === 'help') {
    const sub = argv[0] === 'help' ? findCommand(argv.slice(1)) : undefined;
    const group = argv[0] === 'help' ? groupOf(argv.slice(1)) : undefined;
    process.stdout.write(sub ? commandHelp(sub.spec) : group ? groupHelp(group) : mainHelp(version()));
    return argv.length === 0 ? 1 : 0;
  }
  if (argv[0] === 'completion' || argv[0] === '__complete') {
    const { completion } = require('./completion') as typeof import('./completion');
    return completion(argv);
  }
  const found = findCommand(argv);
  if (!found) return groupHelpOf(argv) ?? unknownCommand(argv);
  if (found.rest.includes('--help') || found.rest.includes('-h')) {
    process.stdout.write(commandHelp(found.spec));
    return 0;
  }
  const { dispatch } = require('./dispatch') as typeof import('./dispatch');
  return dispatch(found.spec, found.rest);
}

/**
 * `nyl reconcile | head -1` closes the output early. That is not an error of nyl, and above all
 * no reason to stop: a run that died here would abandon its lease and run ref with its units
 * running. So once nobody reads a stream, what is written to it is dropped, and the command
 * finishes as it would have, recording everything, with the exit code it would have had.
 */
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE' && error.code !== 'ERR_STREAM_DESTROYED') throw error;
    stream.write = () => true;
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
