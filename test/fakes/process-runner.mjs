// FakeProcessRunner: a ProcessRunner (src/exec/process.ts) whose "processes" are async functions
// registered by program name, on a clock of the test's choosing (a ManualClock by default).
//
// It keeps the port's contract the way NodeProcessRunner does (test/conformance/process-runner
// runs the same suite against both):
// - run() never rejects. Node's synchronous refusals become `spawnError` with a null code and
//   Node's message and code: argv[0] not a string (ERR_INVALID_ARG_TYPE), empty
//   (ERR_INVALID_ARG_VALUE), a NUL byte in an argument or in an env name or value
//   (ERR_INVALID_ARG_VALUE). A cwd that is not a directory, or a program nobody registered,
//   is `spawnError` ENOENT ("spawn <argv0> ENOENT") with a null code, as the contract says
//   (an unregistered path to a file that exists: EACCES, as for a file that is not executable).
// - timeoutMs: SIGTERM (or stopSignal) when the process runs longer (timedOut true), SIGKILL killGraceMs later.
// - stopSignal: the signal a timeout, any cancellation and a dead host's watchdog send instead.
// - cancel: the abort reason's signal ('SIGINT' when the reason is 'SIGINT', else SIGTERM),
//   SIGKILL killGraceMs later; cancelled true. An already-aborted signal stops it at once.
// - Timeouts and grace periods are sleeps on the runner's clock, so with a ManualClock they
//   take no real time (autoAdvance) or exactly the time the test advances.
// - A signal kills the process unless its handler trapped it (io.trap); SIGKILL cannot be
//   trapped. A killed process ends with code null and that signal; the handler's promise may go
//   on but its result and later output are ignored.
// - group: true delivers each signal to the process's children too (io.spawnChild); without
//   it, children outlive their parent, as real orphans do (check with runner.isAlive(pid)).
// - group: true also ties the process to the runner's host (the Nyl process): killHost() (the
//   host dies, by SIGKILL or any other signal) sends every group process and its children
//   SIGTERM at once and SIGKILL killGraceMs later (on the runner's clock); what they print
//   meanwhile is dropped, never refused. Processes started without group keep running, as
//   orphans do. A dead host starts nothing: run() after killHost() never settles. The process
//   gets what a POSIX shell passes on (the real runner starts it through one): shell names as
//   given except IFS, OPTIND, PPID and _, and PWD set to its working directory.
// - stdout/stderr are captured into the result unless onStdout/onStderr takes that stream
//   (chunks are delivered synchronously, as Buffers, in the order written).
// - started counts run() calls, refused ones included, as NodeProcessRunner does.
//
// Handler: async (argv, options, io) => ({ code, signal? }) | number | undefined (= code 0).
// A handler that throws ends its process with code 1 and the error on stderr; the error is kept
// in runner.handlerErrors so a test can fail on it.
// io:
//   pid                  a fake pid (>= 10000)
//   argv, cwd, env       what the process got (env: options.env ?? process.env, names whose
//                        value is undefined dropped, values as strings)
//   stdin                a Buffer of options.input, or undefined when there was none
//   clock                the runner's clock
//   stdout(chunk), stderr(chunk)   write (string or Buffer); ignored once the process ended
//   sleep(ms)            sleep on the runner's clock; resolves early (false) when the process is
//                        killed, true when the full time passed
//   stopped              AbortSignal: aborted when the process is killed (reason: the signal)
//   signals              every signal delivered so far, in order
//   trap(signal, fn?)    survive `signal` (SIGTERM, SIGINT, SIGHUP...), calling fn(signal)
//   nextSignal()         a promise of the next signal delivered (trapped or not)
//   spawnChild()         a child process (a pid) that dies with a group signal, unless the
//                        process ignores that signal (trap without fn: a child inherits that)
//
// Runner API: new FakeProcessRunner({ clock?, programs?: { name: handler } }); register(nameOr
// Predicate, handler) (later wins); run(argv, options); started; calls; handlerErrors; running
// (processes alive now); isAlive(pid); waitForCall(n?) (resolves with calls[n-1]); killHost().
// Ready-made handlers: exitWith(code, { stdout?, stderr? }), dieBy(signal),
// writeOutputs(json, { code? }), sleepFor(ms, { code? }), blockUntil(promise, { code? }),
// ignoring(signals, handler) (traps them: only SIGKILL ends it early), inTurn(...handlers)
// (one per call, the last repeating).
//
// import { FakeProcessRunner, exitWith, sleepFor } from '../fakes/process-runner.mjs';
// const runner = new FakeProcessRunner({ programs: { terraform: exitWith(0) } });

import fs from 'node:fs';
import path from 'node:path';
import { ManualClock } from './clock.mjs';

const DEFAULT_KILL_GRACE_MS = 5000;

function argError(message, code = 'ERR_INVALID_ARG_VALUE') {
  return Object.assign(new TypeError(message), { code });
}

function show(value) {
  // Node shows the refused value with NUL bytes escaped, in single quotes.
  return `'${String(value).replace(/\0/g, '\\x00')}'`;
}

/** What Node's spawn throws synchronously for these arguments, if anything. */
function refusal(argv, options) {
  const file = argv[0];
  if (typeof file !== 'string')
    return argError(
      `The "file" argument must be of type string. Received ${file === undefined || file === null ? String(file) : `type ${typeof file} (${String(file)})`}`,
      'ERR_INVALID_ARG_TYPE',
    );
  if (file === '') return argError("The argument 'file' cannot be empty. Received ''");
  if (file.includes('\0')) return argError(`The argument 'file' must be a string without null bytes. Received ${show(file)}`);
  for (let i = 1; i < argv.length; i++) {
    const arg = String(argv[i]);
    if (arg.includes('\0')) return argError(`The argument 'args[${i - 1}]' must be a string without null bytes. Received ${show(arg)}`);
  }
  if (typeof options.cwd === 'string' && options.cwd.includes('\0'))
    return argError(`The property 'options.cwd' must be a string, Uint8Array, or URL without null bytes. Received ${show(options.cwd)}`);
  for (const [name, value] of Object.entries(options.env ?? {})) {
    if (value === undefined) continue;
    if (name.includes('\0')) return argError(`The property 'options.env['${name}']' must be a string without null bytes. Received ${show(name)}`);
    if (String(value).includes('\0')) return argError(`The property 'options.env['${name}']' must be a string without null bytes. Received ${show(value)}`);
  }
  return undefined;
}

function spawnFailure(code, errno, file, args) {
  return Object.assign(new Error(`spawn ${file} ${code}`), { errno, code, syscall: `spawn ${file}`, path: file, spawnargs: args });
}

const enoent = (file, args) => spawnFailure('ENOENT', -2, file, args);

function isDirectory(dir) {
  try {
    return fs.statSync(dir).isDirectory();
  } catch {
    return false;
  }
}

function normalizedEnv(env) {
  const out = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = String(v);
  return out;
}

/** What a POSIX shell passes on of env unchanged, with PWD set to cwd (group: true). */
function shellPassedEnv(env, cwd) {
  const out = {};
  for (const [k, v] of Object.entries(env)) if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(k) && !['IFS', 'OPTIND', 'PPID', 'PWD', '_'].includes(k)) out[k] = v;
  out.PWD = path.resolve(cwd);
  return out;
}

export class FakeProcessRunner {
  /** run() calls, refused ones included (as NodeProcessRunner counts). */
  started = 0;
  /**
   * Every run() call: { argv, cwd, env, input, options, pid?, signals, result? } (result set when
   * the process ended; pid undefined when it could not start).
   */
  calls = [];
  /** Errors thrown by handlers (their processes ended with code 1). */
  handlerErrors = [];

  #programs = [];
  #nextPid = 10000;
  #alive = new Set();
  #running = 0;
  #callWaiters = [];
  /** How to stop each running group process (group: true) when the host dies. */
  #groupKills = new Set();
  #hostDead = false;

  /**
   * @param {{ clock?: object, programs?: Record<string, Function> }} [options]
   *   clock: the clock timeouts, grace periods and io.sleep use (default: a ManualClock at 0
   *   with autoAdvance, so processes take no real time).
   */
  constructor({ clock, programs = {} } = {}) {
    this.clock = clock ?? new ManualClock(0, { autoAdvance: true });
    for (const [name, handler] of Object.entries(programs)) this.register(name, handler);
  }

  /**
   * Registers a program: `match` is argv[0] (exact, or its basename when argv[0] is a path) or a
   * predicate (argv, options) => boolean. Later registrations win. Returns this.
   */
  register(match, handler) {
    const test = typeof match === 'function' ? match : (argv) => argv[0] === match || path.basename(argv[0]) === match;
    this.#programs.unshift({ test, handler });
    return this;
  }

  /** Is this fake pid (a process or a child) still alive? */
  isAlive(pid) {
    return this.#alive.has(pid);
  }

  /** Processes started and not yet ended. */
  get running() {
    return this.#running;
  }

  /**
   * The host (the Nyl process that owns this runner) dies: every process started with group: true
   * gets SIGTERM at once with its children, and SIGKILL killGraceMs later; the others run on, as
   * orphans.
   */
  killHost() {
    this.#hostDead = true;
    for (const kill of [...this.#groupKills]) kill();
  }

  /** Resolves with calls[n - 1] once there have been n calls (n default: the next one). */
  waitForCall(n = this.calls.length + 1) {
    if (this.calls.length >= n) return Promise.resolve(this.calls[n - 1]);
    return new Promise((resolve) => this.#callWaiters.push({ n, resolve }));
  }

  run(argv, options = {}) {
    if (this.#hostDead) return new Promise(() => {});
    this.started++;
    const clock = this.clock;
    const began = clock.now();
    const env =
      options.group === true
        ? shellPassedEnv(normalizedEnv(options.env ?? process.env), options.cwd ?? process.cwd())
        : normalizedEnv(options.env ?? process.env);
    const input = options.input === undefined ? undefined : Buffer.from(options.input);
    const call = { argv: [...argv], cwd: options.cwd, env, input, options, signals: [] };
    this.calls.push(call);
    this.#callWaiters = this.#callWaiters.filter((w) => (w.n <= this.calls.length ? (w.resolve(this.calls[w.n - 1]), false) : true));

    const empty = Buffer.alloc(0);
    const notStarted = (spawnError) => {
      const result = {
        argv,
        code: null,
        signal: null,
        stdout: empty,
        stderr: empty,
        timedOut: false,
        cancelled: false,
        durationMs: clock.now() - began,
        spawnError,
      };
      call.result = result;
      return Promise.resolve(result);
    };
    const refused = refusal(argv, options);
    if (refused) return notStarted(refused);
    if (options.cwd !== undefined && !isDirectory(options.cwd)) return notStarted(enoent(argv[0], argv.slice(1)));
    const program = this.#programs.find((p) => p.test(argv, options));
    if (!program) {
      // An unregistered path to a file that exists: as if it were not executable.
      if (argv[0].includes('/') && fs.existsSync(argv[0])) return notStarted(spawnFailure('EACCES', -13, argv[0], argv.slice(1)));
      return notStarted(enoent(argv[0], argv.slice(1)));
    }
    return this.#start(program.handler, argv, options, call, env, input, began);
  }

  #start(handler, argv, options, call, env, input, began) {
    const clock = this.clock;
    const group = options.group === true;
    const graceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    const pid = this.#nextPid++;
    call.pid = pid;
    this.#alive.add(pid);
    this.#running++;
    const out = [];
    const err = [];
    const children = new Set();
    const traps = new Map();
    let signalWaiters = [];
    let timedOut = false;
    let cancelled = false;
    let ended = false;
    let killTimerSet = false;
    const over = new AbortController(); // the process ended: timers stop
    const killed = new AbortController(); // the process was killed by a signal
    let finish;
    const done = new Promise((resolve) => {
      finish = resolve;
    });

    const end = (code, signal) => {
      if (ended) return;
      ended = true;
      this.#alive.delete(pid);
      this.#running--;
      this.#groupKills.delete(killedWithHost);
      over.abort();
      options.cancel?.removeEventListener('abort', onCancel);
      const result = {
        argv,
        code,
        signal,
        stdout: Buffer.concat(out),
        stderr: Buffer.concat(err),
        timedOut,
        cancelled,
        durationMs: clock.now() - began,
      };
      call.result = result;
      finish(result);
    };

    const deliver = (signal) => {
      if (ended) return;
      call.signals.push(signal);
      // A signal the process ignores (trapped without a handler) its children ignore too, as
      // real children inherit an ignored signal.
      const ignored = signal !== 'SIGKILL' && traps.has(signal) && !traps.get(signal);
      if (group && !ignored) for (const child of children) this.#alive.delete(child);
      const waiters = signalWaiters;
      signalWaiters = [];
      for (const w of waiters) w(signal);
      if (signal !== 'SIGKILL' && traps.has(signal)) {
        const fn = traps.get(signal);
        if (fn) queueMicrotask(() => fn(signal));
        return;
      }
      killed.abort(signal);
      end(null, signal);
    };

    // The host's death: its watchdog signals the group, SIGKILL after the grace.
    const killedWithHost = () => {
      deliver(options.stopSignal ?? 'SIGTERM');
      clock.sleep(graceMs, over.signal).then(() => deliver('SIGKILL'));
    };
    if (group) this.#groupKills.add(killedWithHost);

    const stop = (signal) => {
      deliver(signal);
      if (killTimerSet || ended) return;
      killTimerSet = true;
      clock.sleep(graceMs, over.signal).then(() => {
        if (!ended) deliver('SIGKILL');
      });
    };

    function onCancel() {
      cancelled = true;
      stop(options.stopSignal ?? (options.cancel?.reason === 'SIGINT' ? 'SIGINT' : 'SIGTERM'));
    }

    const write = (sink, callback) => (chunk) => {
      if (ended) return;
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
      if (buffer.length === 0) return;
      if (callback) callback(buffer);
      else sink.push(buffer);
    };

    const io = {
      pid,
      argv: [...argv],
      cwd: options.cwd,
      env,
      stdin: input,
      clock,
      stdout: write(out, options.onStdout),
      stderr: write(err, options.onStderr),
      stopped: killed.signal,
      signals: call.signals,
      sleep: async (ms) => {
        if (killed.signal.aborted) return false;
        await clock.sleep(ms, killed.signal);
        return !killed.signal.aborted;
      },
      trap: (signal, fn) => {
        if (signal === 'SIGKILL' || signal === 'SIGSTOP') throw new Error(`${signal} cannot be trapped`);
        traps.set(signal, fn);
      },
      nextSignal: () => new Promise((resolve) => signalWaiters.push(resolve)),
      spawnChild: () => {
        const child = this.#nextPid++;
        this.#alive.add(child);
        children.add(child);
        return child;
      },
    };

    if (options.timeoutMs !== undefined) {
      clock.sleep(options.timeoutMs, over.signal).then(() => {
        if (ended) return;
        timedOut = true;
        stop(options.stopSignal ?? 'SIGTERM');
      });
    }
    if (options.cancel?.aborted) onCancel();
    else options.cancel?.addEventListener('abort', onCancel, { once: true });

    if (!ended) {
      Promise.resolve()
        .then(() => handler([...argv], options, io))
        .then(
          (outcome) => {
            if (outcome === undefined || outcome === null) return end(0, null);
            if (typeof outcome === 'number') return end(outcome, null);
            if (outcome.signal) return end(null, outcome.signal);
            return end(outcome.code ?? 0, null);
          },
          (error) => {
            if (ended) return;
            this.handlerErrors.push(error);
            io.stderr(`${error?.stack ?? error}\n`);
            end(1, null);
          },
        );
    }
    return done;
  }
}

// --- ready-made handlers ----------------------------------------------------------------------

/** Exits with `code`, optionally writing stdout/stderr first. */
export function exitWith(code, { stdout, stderr } = {}) {
  return async (_argv, _options, io) => {
    if (stdout !== undefined) io.stdout(stdout);
    if (stderr !== undefined) io.stderr(stderr);
    return { code };
  };
}

/** Dies by `signal` (as a process that killed itself). */
export function dieBy(signal) {
  return async () => ({ code: null, signal });
}

/**
 * Writes `json` to the file named by options.env.NYL_OUTPUTS like a Command tool would (a string
 * is written as it is, anything else as JSON), then exits with `code` (default 0).
 */
export function writeOutputs(json, { code = 0 } = {}) {
  return async (_argv, options, io) => {
    const file = io.env.NYL_OUTPUTS ?? options.env?.NYL_OUTPUTS;
    if (!file) {
      io.stderr('NYL_OUTPUTS is not set\n');
      return { code: 2 };
    }
    fs.writeFileSync(file, typeof json === 'string' ? json : JSON.stringify(json));
    return { code };
  };
}

/** Ends with 0 after `ms` on the runner's clock, unless a signal kills it first. */
export function sleepFor(ms, { code = 0 } = {}) {
  return async (_argv, _options, io) => {
    await io.sleep(ms);
    return { code };
  };
}

/** Ends with 0 when `promise` settles, unless a signal kills it first. */
export function blockUntil(promise, { code = 0 } = {}) {
  return async (_argv, _options, io) => {
    const killed = new Promise((resolve) => io.stopped.addEventListener('abort', resolve, { once: true }));
    await Promise.race([Promise.resolve(promise).catch(() => {}), killed]);
    return { code };
  };
}

/** Runs `handler` with `signals` ignored (trapped with no action): only SIGKILL ends it early. */
export function ignoring(signals, handler) {
  return (argv, options, io) => {
    for (const s of [].concat(signals)) io.trap(s);
    return handler(argv, options, io);
  };
}

/** Answers each call with the next handler of the list; the last one answers the rest. */
export function inTurn(...handlers) {
  let i = 0;
  return (argv, options, io) => handlers[Math.min(i++, handlers.length - 1)](argv, options, io);
}
