/**
 * What every driver does with its tool, written once: running it in a process group with its
 * output streamed line by line, the `NYL_*` variables it is given, how a rendered value reaches it
 * as text, and what the end of its process means for the unit (`classifyEnd`). Each driver only
 * says how its own reasons read (`EndTexts`): a Command's `command exited with code 3`, a module's
 * `terraform apply exited with code 1` with Terraform's diagnostics.
 *
 * Why one classification: the order of the questions decides outcomes, and must be the same for
 * every kind. A program that cannot start is a retryable failure; a tool the run's cancellation
 * stopped ends uncertain (its effects are unknown), unless it exited 0 anyway; a timeout is the
 * driver's own failure; then the exit codes that mean success; anything else is a failure.
 */
import { LineSplitter, type ToolLine } from '../exec/lines';
import type { ProcessResult } from '../exec/process';
import { type DriverContext, type Failure, failure, type Uncertain } from './contract';

/** A duration as reasons and progress lines print it: seconds with one decimal (`12.3s`). */
export function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

/**
 * A rendered value as a process sees it: strings as they are, anything else as JSON. A whole-value
 * reference may put any JSON value where the source has a string (an argv element, a variable).
 */
export function asProcessText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** A declared `env` mapping as variables: every value as text (asProcessText). */
export function declaredEnv(env: Record<string, unknown> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env ?? {})) out[k] = asProcessText(v);
  return out;
}

/**
 * The variables that tell every tool whom it works for. Declared variables never override them
 * (the source model refuses NYL_ names), so callers spread these after the declared ones.
 */
export function nylEnv(ctx: Pick<DriverContext, 'environment' | 'unit' | 'run' | 'uid'>): Record<string, string> {
  return { NYL_ENVIRONMENT: ctx.environment, NYL_UNIT: ctx.unit, NYL_RUN: ctx.run, NYL_UID: ctx.uid };
}

/** How one tool runs: where, with what, for how long, and who reads its output. */
export interface ToolRun {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
  /** What stops it (default: the run's cancellation). */
  cancel?: AbortSignal;
  /** The signal that asks it to stop (default SIGTERM; Terraform wants SIGINT). */
  stopSignal?: 'SIGINT';
  /** Gets each line of stdout; without it stdout is captured into the result, never printed. */
  stdout?: (line: ToolLine) => void;
  /** Gets each line of stderr. */
  stderr: (line: ToolLine) => void;
}

/** Runs a tool in its own process group (its children end with it), its output cut into lines. */
export async function runTool(ctx: Pick<DriverContext, 'runner' | 'cancel' | 'killGraceMs'>, argv: string[], run: ToolRun): Promise<ProcessResult> {
  const out = run.stdout ? new LineSplitter(run.stdout) : undefined;
  const err = new LineSplitter(run.stderr);
  const done = await ctx.runner.run(argv, {
    cwd: run.cwd,
    env: run.env,
    group: true,
    ...(run.timeoutMs !== undefined ? { timeoutMs: run.timeoutMs } : {}),
    cancel: run.cancel ?? ctx.cancel,
    killGraceMs: ctx.killGraceMs,
    ...(run.stopSignal ? { stopSignal: run.stopSignal } : {}),
    ...(out ? { onStdout: (b: Buffer) => out.push(b) } : {}),
    onStderr: (b) => err.push(b),
  });
  out?.flush();
  err.flush();
  return done;
}

/** How a driver words the ends of its tool that are not a success. */
export interface EndTexts {
  /** The program a `cannot start` reason names. */
  program: string;
  /** What follows `cannot start PROGRAM: CODE` (what to do about it), if anything. */
  startHint?: (error: NodeJS.ErrnoException) => string;
  /** Where the cancellation found the tool: `while running`, `during terraform apply`. */
  cancelledWhile: string;
  /** Who a cancelled reason says ended by a signal (`podman `); the tool itself by default. */
  endedBy?: string;
  /** The failure of a tool its deadline stopped. */
  timedOut: () => Failure;
  /** The failure of any other end: an exit code that is not a success, or a signal. */
  exited: (done: ProcessResult) => Failure;
}

/** `cannot start podman: ENOENT`: a program that could not be started, and why. */
export function cannotStart(program: string, error: NodeJS.ErrnoException): string {
  return `cannot start ${program}: ${error.code ?? error.message}`;
}

/** `was killed by SIGKILL` or `exited with code 3`, for the reason of a tool that ended badly. */
export function exitHow(done: ProcessResult): string {
  return done.signal ? `was killed by ${done.signal}` : `exited with code ${String(done.code)}`;
}

/** The failure or uncertainty of a tool's end (see the module header), or undefined for a success. */
export function classifyEnd(done: ProcessResult, texts: EndTexts, ok: readonly number[] = [0]): Failure | Uncertain | undefined {
  if (done.spawnError) return failure(`${cannotStart(texts.program, done.spawnError)}${texts.startHint?.(done.spawnError) ?? ''}`, true);
  if (done.cancelled && done.code !== 0) {
    const how = done.signal ? `${texts.endedBy ?? ''}ended by ${done.signal}` : `exit ${String(done.code)}`;
    return { result: 'uncertain', reason: `cancelled ${texts.cancelledWhile} (${how} after ${seconds(done.durationMs)})` };
  }
  if (done.timedOut) return texts.timedOut();
  if (done.code !== null && ok.includes(done.code)) return undefined;
  return texts.exited(done);
}
