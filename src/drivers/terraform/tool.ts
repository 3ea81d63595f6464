/**
 * One execution of a module's tool: the binary, the directory it runs in, its environment, and
 * the deadline of the unit (`spec.timeout` covers every step together). A step either prints its
 * output as the unit's tool output, or captures stdout unprinted (`show -json`, `state pull`:
 * they hold sensitive values in plain text). A `json` step (`plan`, `apply`, `destroy` with
 * `-json`) prints the human text of each machine-readable message and keeps what Nyl decides on
 * (./ui-json.ts); stderr is printed as it is.
 *
 * What a step that did not succeed means for the unit:
 * - the binary cannot start: failed, retryable (install it, or set `binary:`);
 * - the run was cancelled while it ran: uncertain (a converging unit runs again);
 * - the deadline passed: a step with effects (apply, destroy) that began changing resources was
 *   stopped midway, so it is failed and needs an acknowledgement like a Command's timeout; any
 *   other step (an `apply -auto-approve` still planning) is retryable;
 * - any other exit: failed, retryable, with the tool's own diagnostics as the reason
 *   (./tool-errors.ts), a held state lock naming its holder.
 */
import type { ToolLine } from '../../exec/lines';
import type { ProcessResult } from '../../exec/process';
import { parseDuration } from '../../util/duration';
import { type DriverContext, type Failure, failure, type Uncertain } from '../contract';
import { type ToolRun, classifyEnd, exitHow, runTool } from '../tool';
import { failureReason, textDiagnostics } from './tool-errors';
import { type UiResult, UiReader } from './ui-json';

/** The lines of a text step kept to find its diagnostics in: enough for any error report. */
const MAX_KEPT_LINES = 2000;

interface StepOptions {
  /** Exit codes that mean success (plan -detailed-exitcode: 0 and 2). */
  ok?: readonly number[];
  /** Print the output as the unit's tool output (else stdout is captured and never printed). */
  stream?: boolean;
  /** stdout is Terraform's machine-readable UI (-json): printed as human text, read for decisions. */
  json?: boolean;
  /** The step changes infrastructure: stopped midway, its effects are unknown. */
  effects?: boolean;
  /** Gets what the machine-readable output said, whether the step succeeded or not. */
  seen?: (ui: UiResult) => void;
}

type StepResult = { code: number; stdout: string; ui: UiResult };

export type Bad = Failure | Uncertain;

export function isBad(x: object): x is Bad {
  return 'result' in x && ((x as Bad).result === 'failed' || (x as Bad).result === 'uncertain');
}

/** What one step prints and keeps: the text lines (for diagnostics) and the UI reader of a json step. */
class StepOutput {
  readonly kept: string[] = [];
  readonly ui: UiReader;

  constructor(
    private readonly ctx: DriverContext,
    private readonly options: StepOptions,
  ) {
    this.ui = new UiReader((text) => this.print(text));
  }

  /** A printed line, also kept for the diagnostics of a text step. */
  print(text: string): void {
    if (this.kept.length < MAX_KEPT_LINES) this.kept.push(text);
    this.ctx.toolOutput({ bytes: Buffer.from(`${text}\n`), text });
  }

  /** Who reads each stream: stderr is printed (or only kept, for a captured step); stdout see StepOptions. */
  streams(): Pick<ToolRun, 'stdout' | 'stderr'> {
    const stderr = (line: ToolLine) => (this.options.stream || this.options.json ? this.print(line.text) : this.keep(line.text));
    if (this.options.json) return { stderr, stdout: (line) => this.ui.line(line.text) };
    return this.options.stream ? { stderr, stdout: (line) => this.print(line.text) } : { stderr };
  }

  private keep(text: string): void {
    if (this.kept.length < MAX_KEPT_LINES) this.kept.push(text);
  }
}

/** The limits of one execution's steps: the unit's deadline (`spec.timeout`, over every step) and the lock wait. */
export interface StepLimits {
  timeout?: string;
  /** When the deadline passes (the clock's time), computed once when the execution starts. */
  deadline?: number;
  /** How long a step waits for a state lock (`-lock-timeout`), for the reason of a step that gave up. */
  lockTimeout: string;
}

/** The limits of an execution that starts now. */
export function limitsOf(ctx: DriverContext, timeout: string | undefined, lockTimeout: string): StepLimits {
  const ms = timeout ? parseDuration(timeout) : undefined;
  return { lockTimeout, ...(timeout && ms !== undefined ? { timeout, deadline: ctx.clock.now() + ms } : {}) };
}

/**
 * Whether a step with effects may have changed something: with Terraform's machine-readable UI, only
 * once it said it began changing a resource (`apply_start`); without it, always.
 */
function changedSomething(options: StepOptions, ui: UiResult): boolean {
  return options.effects === true && (options.json !== true || ui.changing === true);
}

export class ModuleTool {
  constructor(
    private readonly ctx: DriverContext,
    readonly binary: string,
    private readonly cwd: string,
    private readonly env: NodeJS.ProcessEnv,
    private readonly limits: StepLimits,
  ) {}

  /** `-lock-timeout=D` for the steps that take the state lock. */
  lockArgs(): string[] {
    return [`-lock-timeout=${this.limits.lockTimeout}`];
  }

  /** Runs `binary ...args`; its result, or what its end means for the unit. */
  async step(args: string[], options: StepOptions = {}): Promise<StepResult | Bad> {
    const { deadline } = this.limits;
    const remaining = deadline === undefined ? undefined : Math.max(1, deadline - this.ctx.clock.now());
    const output = new StepOutput(this.ctx, options);
    const done = await runTool(this.ctx, [this.binary, ...args], {
      cwd: this.cwd,
      env: this.env,
      ...(remaining !== undefined ? { timeoutMs: remaining } : {}),
      // Terraform stops on SIGINT and stops its provider plugins itself; SIGTERM to the group would kill them mid-create.
      stopSignal: 'SIGINT',
      ...output.streams(),
    });
    const ui = output.ui.done();
    options.seen?.(ui);
    const bad = this.unsuccessful(args[0]!, done, { ...options, effects: changedSomething(options, ui) }, () =>
      options.json ? ui.diagnostics : textDiagnostics(output.kept),
    );
    return bad ?? { code: done.code!, stdout: done.stdout.toString('utf8'), ui };
  }

  private unsuccessful(command: string, done: ProcessResult, options: StepOptions, diagnostics: () => ReturnType<typeof textDiagnostics>): Bad | undefined {
    const what = `${this.binary} ${command}`;
    const effects = options.effects === true;
    return classifyEnd(
      done,
      {
        program: this.binary,
        startHint: () => ' (install it, or name the executable in spec.binary)',
        cancelledWhile: `during ${what}`,
        timedOut: () =>
          failure(
            `timed out after ${this.limits.timeout} during ${what}, which was stopped${effects ? ': what it changed is unknown' : ''}`,
            !effects,
            effects,
          ),
        exited: (end) => failure(failureReason(`${what} ${exitHow(end)}`, diagnostics(), this.limits.lockTimeout, this.binary), true),
      },
      options.ok,
    );
  }
}
