/**
 * The only module that starts child processes.
 *
 * A ProcessRunner runs argv (never a shell string) with an explicit environment, collects its
 * output, and reports failures with the same shape as results. Tests inject their own runner or
 * wrap this one to count, delay or crash.
 */
import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';

export interface RunOptions {
  cwd?: string;
  env?: NodeJS.ProcessEnv;
  input?: string | Buffer;
  /** Milliseconds before SIGTERM, then SIGKILL 5 s later. */
  timeoutMs?: number;
}

export interface ProcessResult {
  argv: string[];
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  timedOut: boolean;
  durationMs: number;
  /** Set when the program could not be started at all (ENOENT, EACCES). */
  spawnError?: NodeJS.ErrnoException;
}

export interface StreamOptions extends Omit<RunOptions, 'input'> {
  stdio?: SpawnOptions['stdio'];
  detached?: boolean;
}

export interface ProcessRunner {
  /** Runs argv to completion and buffers its output. */
  run(argv: string[], options?: RunOptions): Promise<ProcessResult>;
  /** Starts argv with streams attached, for long-lived helpers and drivers. */
  start(argv: string[], options?: StreamOptions): ChildProcess;
}

export class NodeProcessRunner implements ProcessRunner {
  /** Incremented per started process; the benchmarks read it. */
  started = 0;

  run(argv: string[], options: RunOptions = {}): Promise<ProcessResult> {
    const began = Date.now();
    this.started++;
    return new Promise((resolve) => {
      const [cmd, ...args] = argv;
      const child = spawn(cmd!, args, {
        cwd: options.cwd,
        env: options.env ?? process.env,
        stdio: ['pipe', 'pipe', 'pipe'],
      });
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let timedOut = false;
      let spawnError: NodeJS.ErrnoException | undefined;
      let killTimer: NodeJS.Timeout | undefined;
      const timer =
        options.timeoutMs !== undefined
          ? setTimeout(() => {
              timedOut = true;
              child.kill('SIGTERM');
              killTimer = setTimeout(() => child.kill('SIGKILL'), 5000);
            }, options.timeoutMs)
          : undefined;
      child.stdout!.on('data', (b: Buffer) => out.push(b));
      child.stderr!.on('data', (b: Buffer) => err.push(b));
      child.on('error', (error: NodeJS.ErrnoException) => {
        spawnError = error;
      });
      child.stdin!.on('error', () => {
        /* the child may exit before reading its input; its exit code tells what happened */
      });
      child.on('close', (code, signal) => {
        if (timer) clearTimeout(timer);
        if (killTimer) clearTimeout(killTimer);
        const result: ProcessResult = {
          argv,
          code,
          signal,
          stdout: Buffer.concat(out),
          stderr: Buffer.concat(err),
          timedOut,
          durationMs: Date.now() - began,
        };
        if (spawnError) result.spawnError = spawnError;
        resolve(result);
      });
      if (options.input !== undefined) child.stdin!.end(options.input);
      else child.stdin!.end();
    });
  }

  start(argv: string[], options: StreamOptions = {}): ChildProcess {
    this.started++;
    const [cmd, ...args] = argv;
    return spawn(cmd!, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: options.stdio ?? ['pipe', 'pipe', 'pipe'],
      detached: options.detached ?? false,
    });
  }
}
