/**
 * Runs one command line: parses it by its registry entry, builds the real Runtime, runs the
 * entry (which builds its request, runs its operation and renders its report; `nyl ui` serves
 * until a signal instead), prints the report (its text, or exactly one JSON document, also for a
 * refusal, of the kind the entry names) and returns the exit code. Nothing here names a command.
 * Also here, as only this file needs them: the -o format a line asks for and the signal handlers.
 */
import { existsSync } from 'node:fs';
import { constants } from 'node:os';
import { type Command, type CommandIo, type Output, type ParsedCommand, refusalOperationOf } from '../commands/command';
import { stringOpt } from '../commands/request';
import { environmentSelectorOf, selectsEnvironments } from '../commands/selection';
import { renderDiagnostics } from '../commands/text/render';
import { diagnostic, type Diagnostic, NylError } from '../errors/diagnostic';
import { killToolsNow } from '../exec/process';
import { refusalDocument } from '../report/refusal';
import { exitCodeOf } from '../report/exit-code';
import { parseCommand } from './parse';
import { styled } from './style';
import { createRuntime } from './runtime';

/**
 * -o: the output format a command line asks for, one of the values its -o option lists (text,
 * table and json everywhere; graph adds the drawings dot and mermaid). Completion offers the same
 * list, so that what completes is what runs. Table is text.
 */
function outputOf(p: ParsedCommand): Output {
  const o = stringOpt(p, 'output') ?? 'text';
  const choices = p.spec.options.find((x) => x.name === 'output')?.choices ?? ['text', 'table', 'json'];
  if (!choices.includes(o)) {
    throw new NylError(
      diagnostic('NYL-USAGE', 'error', `-o ${o} is not an output format of nyl ${p.spec.words.join(' ')}`, {
        fix: `pass ${choices.map((c) => `-o ${c}`).join(', ')}`,
      }),
    );
  }
  return o === 'table' ? 'text' : (o as Output);
}

/**
 * SIGINT/SIGTERM handling: the first signal aborts (operations stop starting work and finish or
 * refuse cleanly, tools get the signal and their grace); a second one ends the process at once
 * with 128 + the signal number, and its tools with SIGKILL: asked twice, the operator wants it
 * over now, not after the grace a dead Nyl's tools get (src/exec/watchdog.ts).
 */
function installSignalHandlers(): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const handler = (sig: NodeJS.Signals) => {
    if (controller.signal.aborted) {
      killToolsNow();
      process.exit(128 + (constants.signals[sig] ?? 0));
    }
    controller.abort(sig);
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    dispose: () => {
      process.off('SIGINT', handler);
      process.off('SIGTERM', handler);
    },
  };
}

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
 * Whether PATH may be an environment given without -e: the command takes -e, the line selects no
 * environment, and PATH is no file or directory (suggest.ts then asks the project).
 */
function environmentAsPath(p: ParsedCommand): boolean {
  if (!p.pathGiven || !p.spec.options.some((o) => o.name === 'environment')) return false;
  return ['environment', 'labels', 'group'].every((name) => p.values[name] === undefined) && !existsSync(p.path);
}

/**
 * Did the command line ask for JSON? Read from the raw arguments, so that a command line the
 * parser refuses (an unknown option, a missing value) still gets exactly one JSON document.
 */
export function asksForJson(args: readonly string[]): boolean {
  return args.some((a, i) => ((a === '-o' || a === '--output') && args[i + 1] === 'json') || a === '-ojson' || a === '-o=json' || a === '--output=json');
}

/** What a serving command prints besides its own lines: warnings on stderr, styled for it. */
const STDERR_IO: CommandIo = {
  warn(diagnostics) {
    process.stderr.write(`${styled(process.stderr, () => renderDiagnostics(diagnostics))}\n`);
  },
};

export async function dispatch(spec: Command, rest: string[]): Promise<number> {
  const command = spec.words.join(' ');
  const signals = installSignalHandlers();
  let output: Output = asksForJson(rest) ? 'json' : 'text';
  let environment = '';
  let parsed: ParsedCommand | undefined;
  try {
    parsed = parseCommand(spec, rest);
    output = outputOf(parsed);
    environment = environmentOfRefusal(parsed);
    // A plain copy: process.env is a view of the C environment, slow to spread for every tool.
    const rt = createRuntime({ ...process.env }, signals.signal);
    if (environmentAsPath(parsed)) await (await import('./suggest')).refuseEnvironmentAsPath(rt, parsed, rest);
    const outcome = await spec.execute(rt, parsed, STDERR_IO).finally(() => rt.git?.close());
    // A command that serves (the web view) ends with its exit code instead of a report.
    if (typeof outcome === 'number') return outcome;
    const { report } = outcome;
    const code = exitCodeOf(report, report.errors, command);
    if (output === 'json') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else process.stdout.write(styled(process.stdout, () => outcome.text(output)));
    // A drawing on stdout is for its tool: what went wrong goes to stderr.
    if ((output === 'dot' || output === 'mermaid') && report.errors.length + report.warnings.length > 0)
      process.stderr.write(`${renderDiagnostics([...report.errors, ...report.warnings])}\n`);
    return code;
  } catch (error) {
    const diagnostics: Diagnostic[] =
      error instanceof NylError ? error.diagnostics : [diagnostic('NYL-INTERNAL', 'error', (error as Error)?.stack ?? String(error))];
    const details = error instanceof NylError ? (error.details ?? {}) : {};
    if (output === 'json') {
      // A command line of another operation (teardown --cancel) refuses in that operation's report kind.
      const variant = parsed ? spec.variant?.(parsed.values) : undefined;
      const doc = variant
        ? refusalDocument(variant.report, variant.operation, environment, diagnostics, details)
        : refusalDocument(spec.report, refusalOperationOf(spec), environment, diagnostics, details);
      process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    } else {
      process.stderr.write(`${styled(process.stderr, () => renderDiagnostics(diagnostics))}\n`);
    }
    return exitCodeOf(undefined, diagnostics, command);
  } finally {
    signals.dispose();
  }
}
