/**
 * One execution of a module's tool: the binary, the directory it runs in, its environment, and
 * the deadline of the unit (`spec.timeout` covers every step together). A step either streams its
 * output as the unit's tool output (init, plan, apply, destroy) or captures it unprinted (`show
 * -json` and `output -json`, whose stdout holds sensitive values in plain text).
 *
 * What a step that did not succeed means for the unit:
 * - the binary cannot start: failed, retryable (install it, or set `binary:`);
 * - the run was cancelled while it ran: uncertain (a converging unit runs again);
 * - the deadline passed: a step with effects (apply, destroy) was killed midway, so it is failed
 *   and needs an acknowledgement like a Command's timeout; any other step is retryable;
 * - any other exit: failed, retryable, with the tool's `Error:` diagnostics as the reason.
 */
import { LineSplitter, type ToolLine } from '../../exec/lines';
import type { ProcessResult } from '../../exec/process';
import { parseDuration } from '../../util/duration';
import { type DriverContext, type Failure, failure, type Uncertain } from '../contract';
import { errorDiagnostics } from './tool-errors';

/** The lines of a streamed step kept to find its diagnostics in: enough for any error report. */
const MAX_KEPT_LINES = 2000;

export interface StepOptions {
  /** Exit codes that mean success (plan -detailed-exitcode: 0 and 2). */
  ok?: readonly number[];
  /** Print the output as the unit's tool output (else it is captured and never printed). */
  stream?: boolean;
  /** The step changes infrastructure: killed midway, its effects are unknown. */
  effects?: boolean;
}

export type StepResult = { code: number; stdout: string };

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

export class ModuleTool {
  private readonly deadline: number | undefined;

  constructor(
    private readonly ctx: DriverContext,
    readonly binary: string,
    private readonly cwd: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly timeout: string | undefined,
  ) {
    const ms = timeout ? parseDuration(timeout) : undefined;
    this.deadline = ms === undefined ? undefined : ctx.clock.now() + ms;
  }

  /** Runs `binary ...args`; its result, or what its end means for the unit. */
  async step(args: string[], options: StepOptions = {}): Promise<StepResult | Failure | Uncertain> {
    const remaining = this.deadline === undefined ? undefined : Math.max(1, this.deadline - this.ctx.clock.now());
    const kept: string[] = [];
    const keep = (line: ToolLine) => {
      if (kept.length < MAX_KEPT_LINES) kept.push(line.text);
    };
    const print = (line: ToolLine) => {
      keep(line);
      this.ctx.toolOutput(line);
    };
    const err = new LineSplitter(options.stream ? print : keep);
    const out = options.stream ? new LineSplitter(print) : undefined;
    const done = await this.ctx.runner.run([this.binary, ...args], {
      cwd: this.cwd,
      env: this.env,
      group: true,
      ...(remaining !== undefined ? { timeoutMs: remaining } : {}),
      cancel: this.ctx.cancel,
      killGraceMs: this.ctx.killGraceMs,
      ...(out ? { onStdout: (b: Buffer) => out.push(b) } : {}),
      onStderr: (b) => err.push(b),
    });
    out?.flush();
    err.flush();
    const bad = this.unsuccessful(args[0]!, done, kept, options);
    return bad ?? { code: done.code!, stdout: done.stdout.toString('utf8') };
  }

  private unsuccessful(command: string, done: ProcessResult, lines: readonly string[], options: StepOptions): Failure | Uncertain | undefined {
    const what = `${this.binary} ${command}`;
    if (done.spawnError) return failure(`cannot start ${this.binary}: ${done.spawnError.code ?? done.spawnError.message} (install it, or name the executable in spec.binary)`, true);
    if (done.cancelled && done.code !== 0) {
      return { result: 'uncertain', reason: `cancelled during ${what} (${done.signal ? `ended by ${done.signal}` : `exit ${String(done.code)}`} after ${seconds(done.durationMs)})` };
    }
    if (done.timedOut) {
      const effects = options.effects === true;
      return failure(`timed out after ${this.timeout} during ${what}, which was killed${effects ? ': what it changed is unknown' : ''}`, !effects, effects);
    }
    if (done.code !== null && (options.ok ?? [0]).includes(done.code)) return undefined;
    const how = done.signal ? `was killed by ${done.signal}` : `exited with code ${String(done.code)}`;
    const errors = errorDiagnostics(lines);
    return failure([`${what} ${how}${errors.length > 0 ? ':' : ''}`, ...errors].join('\n'), true);
  }
}
