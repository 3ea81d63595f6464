/**
 * The process runner port, and its Node implementation: the only module that starts processes.
 *
 * Contract (every implementation passes test/conformance/process-runner):
 * - `run(argv, options)` runs argv (never a shell string) with an explicit environment and
 *   resolves when the process has ended; it never rejects. A program that cannot be started
 *   (missing, not executable, an argument Node refuses) resolves with `spawnError` set and a null
 *   code, exactly like a failure: callers handle one shape.
 * - `timeoutMs`: the process gets SIGTERM (or `stopSignal`) when it runs longer, SIGKILL
 *   `killGraceMs` later; `timedOut` is then true.
 * - `cancel`: when the signal aborts, the process gets the abort reason's signal (SIGINT or
 *   SIGTERM; `stopSignal` instead when given), SIGKILL `killGraceMs` later; `cancelled` is then true.
 * - `group: true` starts the process in its own process group and signals the whole group, so a
 *   tool's own children end with it. Such a process outlives the process that owns the runner
 *   (Nyl) only as long as it needs to stop: however that one dies, SIGKILL included, the group
 *   gets its stop signal (`stopSignal`, SIGTERM by default) at once and SIGKILL `killGraceMs` later, and what it prints meanwhile is read and
 *   dropped, never refused, so that a tool that saves its state as it stops can (src/exec/watchdog.ts).
 *   `killToolsNow()` SIGKILLs every such group that runs, for a Nyl that must end at once.
 *   Nothing else changes for the caller: the same pid, exit code, signal and streams as without a
 *   group, and a program that cannot start is a spawn error as well. The environment reaches the
 *   process through exec's environment, never its arguments, so it gets what every POSIX shell
 *   passes on: every shell name as given, except IFS, OPTIND, PPID and `_`; PWD is the working
 *   directory; names that are not shell names (`A.B`) are left out.
 * - stdout and stderr are captured into the result, unless `onStdout` / `onStderr` takes that
 *   stream (then it is streamed in chunks and the result's buffer stays empty).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import type { Writable } from 'node:stream';
import { programError } from './program-path';
import { gatedArgv, gateEnv, ToolWatch } from './watchdog';

export { killToolsNow } from './watchdog';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  timeoutMs?: number;
  cancel?: AbortSignal;
  /**
   * After the stop signal (timeout or cancellation), SIGKILL this much later; with `group`, also
   * after the one a dead runner's watchdog sends. Default 5 s.
   */
  killGraceMs?: number;
  /**
   * The signal that asks the tool to stop, on a timeout, on any cancellation, and from a dead
   * runner's watchdog (default: SIGTERM; a cancellation by SIGINT forwards SIGINT). Terraform
   * wants SIGINT: its provider plugins, in the same process group, ignore SIGINT and are stopped
   * by Terraform itself, while SIGTERM kills them in the middle of a create.
   */
  stopSignal?: 'SIGINT' | 'SIGTERM';
  group?: boolean;
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
}

export interface ProcessResult {
  argv: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
  cancelled: boolean;
  durationMs: number;
  /** Set when the program could not be started at all (ENOENT, EACCES, an invalid argument). */
  spawnError?: NodeJS.ErrnoException;
}

export interface ProcessRunner {
  run(argv: string[], options?: RunOptions): Promise<ProcessResult>;
}

interface StreamOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
}

const DEFAULT_KILL_GRACE_MS = 5000;
/** How long the output of a tool that exited must be quiet before its streams are closed. */
const STREAM_DRAIN_MS = 200;

export class NodeProcessRunner implements ProcessRunner {
  /** Incremented per started process: a test counts the processes an operation started. */
  started = 0;

  run(argv: string[], options: RunOptions = {}): Promise<ProcessResult> {
    this.started++;
    const began = Date.now();
    const started = options.group === true ? startGrouped(argv, options) : startPlain(argv, options);
    if ('error' in started) return Promise.resolve(notStarted(argv, started.error, began));
    return supervise(started.child, argv, options, began, started.watch);
  }

  /** Starts a long-lived helper with streams attached (git cat-file --batch). */
  start(argv: string[], options: StreamOptions = {}): ChildProcess {
    this.started++;
    return spawn(argv[0]!, argv.slice(1), { cwd: options.cwd, env: options.env ?? process.env, stdio: ['pipe', 'pipe', 'pipe'] });
  }
}

type Started = { child: ChildProcess; watch?: ToolWatch } | { error: NodeJS.ErrnoException };

function stdinOf(options: RunOptions): 'ignore' | 'pipe' {
  return options.input === undefined ? 'ignore' : 'pipe';
}

function startPlain(argv: string[], options: RunOptions): Started {
  try {
    const child = spawn(argv[0]!, argv.slice(1), {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: [stdinOf(options), 'pipe', 'pipe'],
      detached: options.group === true,
    });
    return { child };
  } catch (error) {
    // Node refuses some arguments synchronously (a NUL byte): the same shape as ENOENT.
    return { error: error as NodeJS.ErrnoException };
  }
}

/** Arguments Node refuses before anything starts (no program name, a NUL byte): its refusal says it best. */
function refusedByNode(argv: string[], env: NodeJS.ProcessEnv, cwd: string | undefined): boolean {
  const file = argv[0];
  if (typeof file !== 'string' || file === '') return true;
  const nul = (v: unknown) => typeof v === 'string' && v.includes('\0');
  return argv.some(nul) || nul(cwd) || Object.entries(env).some(([k, v]) => nul(k) || nul(v));
}

/**
 * A process in its own group, which its watchdog stops should Nyl die (src/exec/watchdog.ts). The
 * program is looked up first, so that a missing one is a spawn error rather than the gate's exit.
 */
function startGrouped(argv: string[], options: RunOptions): Started {
  const env = options.env ?? process.env;
  if (refusedByNode(argv, env, options.cwd)) return startPlain(argv, options);
  const missing = programError(argv, env, options.cwd);
  if (missing) return { error: missing };
  const gated = gatedArgv(argv);
  const cwd = resolve(options.cwd ?? process.cwd());
  let child: ChildProcess;
  try {
    child = spawn(gated[0]!, gated.slice(1), { cwd, env: gateEnv(env, cwd), stdio: [stdinOf(options), 'pipe', 'pipe', 'pipe'], detached: true });
  } catch (error) {
    return { error: error as NodeJS.ErrnoException };
  }
  // Not started (the 'error' event says why): nothing to watch, and nothing to let go.
  if (child.pid === undefined) {
    (child.stdio[3] as Writable | null)?.destroy();
    return { child };
  }
  const watch = ToolWatch.start(child, options.killGraceMs ?? DEFAULT_KILL_GRACE_MS, options.stopSignal ?? 'SIGTERM');
  return watch ? { child, watch } : unwatched(child, argv);
}

/** A gate whose watchdog could not start: closed, it exits without running the tool. */
function unwatched(gate: ChildProcess, argv: string[]): Started {
  gate.on('error', () => {
    /* it exits by itself */
  });
  for (const stream of gate.stdio) stream?.destroy();
  return { error: Object.assign(new Error(`spawn ${argv[0]}: its watchdog (/bin/sh) could not be started`), { syscall: `spawn ${argv[0]}`, path: argv[0] }) };
}

function notStarted(argv: string[], error: NodeJS.ErrnoException, began: number): ProcessResult {
  const empty = Buffer.alloc(0);
  return { argv, code: null, signal: null, stdout: empty, stderr: empty, timedOut: false, cancelled: false, durationMs: Date.now() - began, spawnError: error };
}

function signalProcess(child: ChildProcess, group: boolean, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    if (group) process.kill(-child.pid, signal);
    else child.kill(signal);
  } catch {
    try {
      child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

/**
 * Collects (or streams) a child's output; `whenQuiet(then)` runs `then` once the output has been
 * quiet for STREAM_DRAIN_MS. The check runs from setImmediate, after the event loop's poll phase,
 * so output already waiting in the pipe is read first, however busy the machine.
 */
function outputOf(child: ChildProcess, options: RunOptions) {
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  let last = Date.now();
  const onOut = options.onStdout ?? ((b: Buffer) => out.push(b));
  const onErr = options.onStderr ?? ((b: Buffer) => err.push(b));
  child.stdout!.on('data', (b: Buffer) => {
    last = Date.now();
    onOut(b);
  });
  child.stderr!.on('data', (b: Buffer) => {
    last = Date.now();
    onErr(b);
  });
  const whenQuiet = (then: () => void) => {
    const check = () => setImmediate(() => (Date.now() - last >= STREAM_DRAIN_MS ? then() : setTimeout(check, STREAM_DRAIN_MS).unref()));
    setTimeout(check, STREAM_DRAIN_MS).unref();
  };
  return { stdout: () => Buffer.concat(out), stderr: () => Buffer.concat(err), whenQuiet };
}

/** Timeout and cancellation: the signal first, SIGKILL after the grace period. */
function stopperOf(child: ChildProcess, options: RunOptions) {
  const group = options.group === true;
  const state = { timedOut: false, cancelled: false };
  let killTimer: NodeJS.Timeout | undefined;
  const stop = (signal: NodeJS.Signals) => {
    signalProcess(child, group, signal);
    killTimer ??= setTimeout(() => signalProcess(child, group, 'SIGKILL'), options.killGraceMs ?? DEFAULT_KILL_GRACE_MS);
  };
  const timer =
    options.timeoutMs === undefined
      ? undefined
      : setTimeout(() => {
          state.timedOut = true;
          stop(options.stopSignal ?? 'SIGTERM');
        }, options.timeoutMs);
  const onCancel = () => {
    state.cancelled = true;
    stop(options.stopSignal ?? (options.cancel?.reason === 'SIGINT' ? 'SIGINT' : 'SIGTERM'));
  };
  if (options.cancel?.aborted) onCancel();
  else options.cancel?.addEventListener('abort', onCancel, { once: true });
  const dispose = () => {
    if (timer) clearTimeout(timer);
    if (killTimer) clearTimeout(killTimer);
    options.cancel?.removeEventListener('abort', onCancel);
  };
  return { state, dispose };
}

/** Waits for the child, applying timeout and cancellation, and collects its output. */
function supervise(child: ChildProcess, argv: string[], options: RunOptions, began: number, watch: ToolWatch | undefined): Promise<ProcessResult> {
  const output = outputOf(child, options);
  const stopper = stopperOf(child, options);
  let spawnError: NodeJS.ErrnoException | undefined;
  child.on('error', (error: NodeJS.ErrnoException) => {
    spawnError = error;
  });
  if (child.stdin) {
    child.stdin.on('error', () => {
      /* the child may exit before reading its input; its exit code tells what happened */
    });
    child.stdin.end(options.input);
  }
  return new Promise((resolve) => {
    let settled = false;
    const finish = (code: number | null, signal: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      stopper.dispose();
      const { timedOut, cancelled } = stopper.state;
      const result: ProcessResult = {
        argv,
        code: spawnError ? null : code,
        signal,
        stdout: output.stdout(),
        stderr: output.stderr(),
        timedOut,
        cancelled,
        durationMs: Date.now() - began,
      };
      if (spawnError) result.spawnError = spawnError;
      resolve(result);
    };
    child.on('close', finish);
    // A tool (its own process group) that leaves a background child holding its output has still
    // ended when it exits: once its output is quiet, stop listening. Git never does that, so other
    // processes end at 'close' only.
    if (options.group) {
      child.on('exit', (code, signal) => {
        // The tool has ended: its group is no longer the watchdog's to stop.
        watch?.release();
        output.whenQuiet(() => {
          child.stdout?.destroy();
          child.stderr?.destroy();
          finish(code, signal);
        });
      });
    }
  });
}
