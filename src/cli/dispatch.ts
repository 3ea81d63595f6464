/**
 * Runs one command line: parses it, builds the real Runtime, runs its operation (the request is
 * built by operation-commands.ts, or run-commands.ts for the commands across environments;
 * `nyl ui` serves until a signal instead), renders the report (text by render-report.ts, or
 * exactly one JSON document, also for a refusal) and returns the exit code.
 */
import { diagnostic, type Diagnostic, NylError } from '../errors/diagnostic';
import { refusalDocument } from '../report/refusal';
import type { Report } from '../report/types';
import type { CommandSpec } from './commands';
import { environmentSelectorOf, selectsEnvironments } from './environment-options';
import { exitCodeOf } from './exit-code';
import { parseCommand, type ParsedCommand } from './parse';
import { renderDiagnostics } from './render-text';
import { installSignalHandlers } from './signals';
import { styled } from './style';
import { stringOpt } from './command-options';
import { runOperation } from './operation-commands';
import { type Output, outputOf, render } from './render-report';
import { createRuntime } from './runtime';

/** The environment a refusal document names: the one named by -e, else '' (none, or several). */
function environmentOfRefusal(p: ParsedCommand): string {
  if (!selectsEnvironments(p)) return stringOpt(p, 'environment') ?? '';
  try {
    const selector = environmentSelectorOf(p);
    return 'names' in selector && new Set(selector.names).size === 1 ? selector.names[0]! : '';
  } catch {
    return '';
  }
}

/**
 * Did the command line ask for JSON? Read from the raw arguments, so that a command line the
 * parser refuses (an unknown option, a missing value) still gets exactly one JSON document.
 */
export function asksForJson(args: readonly string[]): boolean {
  return args.some((a, i) => ((a === '-o' || a === '--output') && args[i + 1] === 'json') || a === '-ojson' || a === '-o=json' || a === '--output=json');
}

/** The kind of the read-only inspection commands' reports, by command. */
const INSPECT_KINDS: Record<string, Report['kind']> = { log: 'LogReport', show: 'ShowReport', outputs: 'OutputsReport', graph: 'GraphReport', doctor: 'DoctorHostReport' };

function reportKindOf(spec: CommandSpec): Report['kind'] {
  const inspect = INSPECT_KINDS[spec.words[0]!];
  if (inspect) return inspect;
  return spec.words[0] === 'status' ? 'StatusReport' : ['reconcile', 'teardown', 'plan'].includes(spec.words[0]!) ? 'ReconcileReport' : 'StateOperationReport';
}

export async function dispatch(spec: CommandSpec, rest: string[]): Promise<number> {
  const command = spec.words.join(' ');
  const signals = installSignalHandlers();
  let output: Output = asksForJson(rest) ? 'json' : 'text';
  let environment = '';
  try {
    const parsed = parseCommand(spec, rest);
    output = outputOf(parsed);
    environment = environmentOfRefusal(parsed);
    // A plain copy: process.env is a view of the C environment, slow to spread for every tool.
    const rt = createRuntime({ ...process.env }, signals.signal);
    // The web view serves until a signal instead of producing one report.
    if (command === 'ui') return await (await import('./ui-command')).runUi(rt, parsed);
    const report = await runOperation(rt, parsed);
    const code = exitCodeOf(report, report.errors, command);
    if (output === 'json') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else process.stdout.write(styled(process.stdout, () => render(report, output)));
    // A drawing on stdout is for its tool: what went wrong goes to stderr.
    if ((output === 'dot' || output === 'mermaid') && report.errors.length + report.warnings.length > 0) process.stderr.write(`${renderDiagnostics([...report.errors, ...report.warnings])}\n`);
    return code;
  } catch (error) {
    const diagnostics: Diagnostic[] =
      error instanceof NylError
        ? error.diagnostics
        : [diagnostic('NYL-INTERNAL', 'error', (error as Error)?.stack ?? String(error))];
    const details = error instanceof NylError ? (error.details ?? {}) : {};
    if (output === 'json') {
      const doc = refusalDocument(reportKindOf(spec), spec.words[0] === 'status' ? undefined : (spec.operation ?? spec.words.join('-')), environment, diagnostics, details);
      process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    } else {
      process.stderr.write(`${styled(process.stderr, () => renderDiagnostics(diagnostics))}\n`);
    }
    return exitCodeOf(undefined, diagnostics, command);
  } finally {
    signals.dispose();
  }
}
