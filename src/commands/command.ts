/**
 * What a command is: its words, options and help (read by the CLI's parser, help and completion),
 * the report kind and operation its refusals name (`-o json`), and how it runs. Every command is
 * one entry of this shape in the registry (registry.ts), built by the helpers below, so that the
 * CLI's generic parts never name a command.
 *
 * An entry is light: it holds data, and functions that load what they use (request helpers,
 * renderers, the operation) by a dynamic import() when the command runs, so that `nyl --version`
 * and `--help` load the registry and nothing behind it.
 */
import type { Diagnostic } from '../errors/diagnostic';
import type { Report } from '../report/types';
import type { Runtime } from '../util/runtime';

export interface OptionSpec {
  name: string;
  short?: string;
  type: 'string' | 'boolean';
  multiple?: boolean;
  /** The value is a comma-separated list of names (each must be non-empty). */
  list?: boolean;
  value?: string;
  help: string;
  /** The values it takes, which completion offers (`-o` of graph: text, dot, mermaid, json). */
  choices?: readonly string[];
  /** The names of the project it takes, which completion reads from the project at HEAD. */
  completes?: 'environments' | 'units' | 'groups';
}

export interface CommandSpec {
  /** Words after `nyl`, e.g. ['state', 'init']. */
  words: string[];
  summary: string;
  usage: string;
  description: string;
  options: OptionSpec[];
  examples: string[];
}

/** -o: text (or table), json; the drawings dot and mermaid for a command whose -o lists them (graph). */
export type Output = 'text' | 'json' | 'dot' | 'mermaid';

/** A command line parsed by its command's options. */
export interface ParsedCommand {
  spec: Command;
  values: Record<string, string | boolean | string[] | undefined>;
  /** The positional argument: PATH (default `.`), or the URL of `nyl doctor host`. */
  path: string;
  /** Whether the command line gave the positional argument (a URL has no default). */
  pathGiven: boolean;
}

/** A report with its text, as the command renders it for each output. */
interface Rendered {
  report: Report;
  text(output: Output): string;
}

/** What a command that serves (`nyl ui`) may print besides its own lines: warnings, styled by the CLI. */
export interface CommandIo {
  warn(diagnostics: Diagnostic[]): void;
}

/** What the CLI knows of a command besides its spec. */
export interface CommandTraits {
  /** The kind of its report, and so of its refusal's JSON document (`-o json`). */
  report: Report['kind'];
  /** The operation its refusals name: by default its words joined by '-'; null for none (status). */
  operation?: string | null;
  /**
   * A command line that makes it another operation with another report (`nyl teardown --cancel`,
   * a state operation): that report kind and operation, which its refusal's JSON document names too.
   */
  variant?(values: ParsedCommand['values']): { report: Report['kind']; operation: string } | undefined;
}

/** One registry entry: spec, traits, and its run (a report to render, or an exit code for a server). */
export interface Command extends CommandSpec, CommandTraits {
  execute(rt: Runtime, p: ParsedCommand, io: CommandIo): Promise<Rendered | number>;
}

/** The operation a command's refusal names (none for status). */
export function refusalOperationOf(c: CommandSpec & CommandTraits): string | undefined {
  return c.operation === null ? undefined : (c.operation ?? c.words.join('-'));
}

/** Renders a report of kind R for an output. */
type Renderer<R extends Report> = (report: R, output: Output) => string;

/**
 * A command whose run returns a report of kind R, and its renderer of R. Both load what they need
 * with import() when called: the registry loads this entry for `--help`, and loads nothing else.
 */
interface ReportingCommand<R extends Report> extends CommandSpec, CommandTraits {
  run(rt: Runtime, p: ParsedCommand): Promise<R>;
  renderer(): Promise<Renderer<R>>;
}

/** The registry entry of a reporting command: its report and renderer joined, typed once here. */
export function reporting<R extends Report>(def: ReportingCommand<R>): Command {
  const { run, renderer, ...rest } = def;
  return {
    ...rest,
    async execute(rt, p) {
      const report = await run(rt, p);
      const render = await renderer();
      return { report, text: (output) => render(report, output) };
    },
  };
}
