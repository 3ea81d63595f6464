/**
 * `nyl` entry point: argv -> typed request -> operation -> renderer -> exit code.
 * The only module that writes reports to stdout and calls process.exit.
 * Operations are loaded lazily so that --version and --help start fast: this module loads only
 * the command table and the version; argument parsing (parse.ts) and everything behind it come
 * with dispatch.ts.
 */
import { nylVersion } from '../util/version';
import { commandHelp, findCommand, mainHelp } from './commands';

function version(): string {
  return nylVersion();
}

/** An unknown command is NYL-USAGE: as text on stderr, or as the one JSON document -o json asks for. */
function unknownCommand(argv: string[]): number {
  const { asksForJson, refusalDocument } = require('./dispatch') as typeof import('./dispatch');
  const { diagnostic } = require('../errors/diagnostic') as typeof import('../errors/diagnostic');
  const { renderDiagnostics } = require('./render-text') as typeof import('./render-text');
  const usage = diagnostic('NYL-USAGE', 'error', `unknown command: nyl ${argv.join(' ')}`, { fix: 'see `nyl --help` for the commands' });
  if (!asksForJson(argv)) {
    process.stderr.write(`${renderDiagnostics([usage])}\n`);
    return 1;
  }
  // The word the user typed as the command; empty, as environment is, when the line starts with an
  // option (`nyl -o json`): a StateOperationReport always names its operation.
  const operation = argv[0] !== undefined && !argv[0].startsWith('-') ? argv[0] : '';
  process.stdout.write(`${JSON.stringify(refusalDocument('StateOperationReport', operation, '', [usage]), null, 2)}\n`);
  return 1;
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
  if (!found) return unknownCommand(argv);
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
