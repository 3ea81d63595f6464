/**
 * A tool outlives the Nyl process that started it long enough to save its state, and no longer:
 * whatever kills Nyl (SIGKILL included, which no handler sees), the tool's process group gets its
 * stop signal at once (SIGTERM, or SIGINT for a tool that asks for it: Terraform) and SIGKILL after
 * its grace, and what it prints meanwhile is read and dropped.
 *
 * A tool runs in its own process group (so that cancellation reaches its children), and is then
 * out of reach of whatever kills Nyl or Nyl's group. So each tool has a watchdog of its own: a
 * small `sh` script in a session of its own, started right after the tool's process, with the
 * tool's pgid and grace as arguments, a pipe from Nyl as its standard input, and copies of Nyl's
 * ends of the tool's stdout and stderr pipes as descriptors 3 and 4. It waits for a line on that
 * pipe. Nyl writes one when the tool has exited, and the watchdog exits. End of file without a
 * line means Nyl is gone (the kernel closes a dead process's descriptors, however it died): the
 * watchdog sends SIGTERM to the group, reads and drops what the group prints until the group is
 * gone or the grace is over, and then sends SIGKILL. A watchdog someone killed while its tool runs
 * is replaced at once.
 *
 * Why the watchdog reads the tool's output: a tool told to stop prints while it stops, and once
 * Nyl is dead nobody reads its pipes. A write to a pipe without a reader fails (EPIPE), and Go
 * programs such as terraform die of that on descriptors 1 and 2 even with SIGPIPE ignored: before
 * they save their state. Nyl itself reads the pipes while it lives, as ever (no extra copy, no
 * delay, and a tool that prints faster than Nyl reads simply waits); the watchdog holds its copies
 * of the read ends unused until then. What it reads after Nyl's death goes to /dev/null, so a tool
 * that prints gigabytes while it stops costs nothing but the time to read them. Nyl's read ends
 * are non-blocking (libuv sets O_NONBLOCK on the open file description, which a copy shares), so
 * `cat` stops at an empty pipe instead of waiting: the watchdog reads every 100 ms, and a tool
 * that prints more than a pipe holds (about 200 KiB) in that time waits a little, never fails.
 * Rejected: a file per stream that Nyl tails (Nyl would have to poll it, and Node cannot punch
 * holes into a file, so it would keep everything a tool ever printed in $TMPDIR, often memory),
 * and a relay process between the tool and Nyl (two more processes per tool, and every byte
 * copied twice, all to handle a death).
 *
 * The grace is the tool's `killGraceMs` (src/exec/process.ts), counted in 100 ms steps: SIGKILL
 * comes no earlier than the grace, and later by what the steps themselves take (three short
 * processes each: a few percent). A second signal to Nyl wants no grace: `killToolsNow()`.
 *
 * No tool may run before its watchdog, or a Nyl killed in between would leave it running: a tool
 * starts as `sh -c GATE nyl-gate argv...`, which waits for a line on descriptor 3 before it execs
 * the tool, and Nyl writes that line once the watchdog process exists (spawn returns with it
 * holding its pipe). A Nyl that dies earlier closes descriptor 3, and the gate exits without
 * running anything. The process Nyl started is the tool itself in the end (the same pid, exec
 * after exec), so its exit code, signal and streams reach Nyl unchanged.
 *
 * The environment reaches the tool through exec's environment, never through argv: a process's
 * arguments are world-readable (/proc/PID/cmdline), and the environment holds secrets
 * (TF_VAR_..., AWS_SECRET_ACCESS_KEY). The shell passes on what it was given, except what a shell
 * cannot hold or sets itself, and that differs between shells (dash drops `A.B` and resets IFS,
 * bash keeps `A.B` and sets `_`). So Nyl gives the gate what every POSIX shell passes on
 * unchanged (`gateEnv`): names that are shell names, without IFS, OPTIND, PPID and `_`, and PWD
 * set to the working directory, as a shell sets it. Rejected: env(1) with NAME=VALUE arguments (what this
 * replaced: the values on the command line), and no gate with the watchdog started right after
 * the tool (a Nyl killed in between leaves a tool nobody stops).
 *
 * Cost per tool: one exec (sh) in the tool's process before its own; one more process started by
 * Nyl (the watchdog, which sleeps in `read` while the tool runs) and one short write when the tool
 * exits. Values never enter shell text: both scripts are constant, the tool's argv reaches the
 * gate as arguments, and pgid and grace reach the watchdog as arguments.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';

/**
 * $1: the tool's pgid; $2: the grace in steps of 100 ms; $3: the signal that asks it to stop (TERM
 * or INT). A line on stdin: the tool ended. End of file: Nyl died; the stop signal, read and drop
 * the output (descriptors 3 and 4) while the group lives, SIGKILL once the grace is over. Ignores
 * the signals a terminal or a cancellation sends.
 */
const WATCHDOG_SCRIPT = `trap '' HUP INT QUIT TERM PIPE
read -r line && exit 0
kill -s "$3" -- "-$1" 2>/dev/null || exit 0
steps=$2
while [ "$steps" -gt 0 ] && kill -s 0 -- "-$1" 2>/dev/null; do
  cat <&3 >/dev/null 2>&1
  cat <&4 >/dev/null 2>&1
  sleep 0.1
  steps=$((steps - 1))
done
kill -s KILL -- "-$1" 2>/dev/null`;

/** Waits for Nyl's go-ahead on descriptor 3, then becomes the tool (3 closed). No line: Nyl died first. */
const GATE_SCRIPT = `read -r go <&3 || exit 125
exec "$@" 3<&-`;

const SHELL = '/bin/sh';
/** The watchdog's `cat` and `sleep`, wherever a Linux or BSD system keeps them. */
const WATCHDOG_ENV = { PATH: '/usr/bin:/bin' };
const STEP_MS = 100;

/** The argv that runs `argv` behind the gate: the shell, its constant script and the tool's argv. */
export function gatedArgv(argv: string[]): string[] {
  return [SHELL, '-c', GATE_SCRIPT, 'nyl-gate', ...argv];
}

/** A name a POSIX shell holds as a variable and exports as it is. */
const SHELL_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/**
 * Variables some shell resets or sets itself when it starts: dash resets IFS, OPTIND and PPID,
 * bash sets `_` to the program it runs; PWD is set to the working directory below.
 */
const SHELL_OWNED = new Set(['IFS', 'OPTIND', 'PPID', 'PWD', '_']);

/**
 * The environment the gate is started with: the tool's, as every POSIX shell passes it on
 * unchanged. A name that is not a shell name cannot be passed through one; PWD is what the shell
 * would set it to.
 */
export function gateEnv(env: NodeJS.ProcessEnv, cwd: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) if (value !== undefined && SHELL_NAME.test(name) && !SHELL_OWNED.has(name)) out[name] = value;
  out.PWD = cwd;
  return out;
}

/** The watchdogs of the tools that run now, so that a Nyl that must end at once can kill their groups. */
const watched = new Set<ToolWatch>();

/** The watchdog of one tool, from its start until the tool exits. */
export class ToolWatch {
  private dog: ChildProcess | undefined;
  private released = false;

  private constructor(
    private readonly tool: ChildProcess,
    private readonly graceMs: number,
    private readonly stopSignal: 'SIGINT' | 'SIGTERM',
  ) {}

  /**
   * Starts the tool's watchdog and then lets the gate exec the tool; undefined when no watchdog
   * could be started (the gate then exits without running anything).
   */
  static start(tool: ChildProcess, graceMs: number, stopSignal: 'SIGINT' | 'SIGTERM' = 'SIGTERM'): ToolWatch | undefined {
    const watch = new ToolWatch(tool, graceMs, stopSignal);
    if (!watch.startDog()) return undefined;
    watched.add(watch);
    letGo(tool);
    return watch;
  }

  /** The tool has exited: what its group still holds is not the watchdog's to kill. */
  release(): void {
    if (this.released) return;
    this.released = true;
    watched.delete(this);
    this.dog?.stdin?.end('exited\n');
  }

  /** SIGKILL of the tool's group, for a Nyl that ends at once. */
  killNow(): void {
    try {
      process.kill(-this.tool.pid!, 'SIGKILL');
    } catch {
      /* already gone */
    }
  }

  /** Starts a watchdog process; false when none could be started. Replaces itself should someone kill it. */
  private startDog(): boolean {
    const out = this.tool.stdout as Readable;
    const err = this.tool.stderr as Readable;
    let dog: ChildProcess;
    try {
      const steps = String(Math.ceil(this.graceMs / STEP_MS));
      dog = spawn(SHELL, ['-c', WATCHDOG_SCRIPT, 'nyl-watchdog', String(this.tool.pid), steps, this.stopSignal.slice(3)], {
        detached: true,
        cwd: '/',
        env: WATCHDOG_ENV,
        stdio: ['pipe', 'ignore', 'ignore', out, err],
      });
    } catch {
      return false;
    }
    // Node stops reading a stream it hands to a child; Nyl reads it while it lives.
    out.resume();
    err.resume();
    dog.on('error', () => {
      /* could not start (its pid is undefined), or gone: see below and lost() */
    });
    if (dog.pid === undefined) return false;
    // It must never keep Nyl alive: Nyl's end is what it waits for.
    dog.unref();
    dog.stdin!.on('error', () => {
      /* the watchdog is gone; lost() starts another one if the tool still runs */
    });
    dog.on('exit', (_code, signal) => this.lost(dog, signal));
    this.dog = dog;
    return true;
  }

  /**
   * A watchdog killed while its tool runs is replaced. One that exited by itself is not: it would
   * only exit again (a broken /bin/sh), and the tool runs on unwatched, as it would without one.
   */
  private lost(dog: ChildProcess, signal: NodeJS.Signals | null): void {
    if (this.dog !== dog || this.released || signal === null || this.tool.stdout?.destroyed) return;
    this.dog = undefined;
    this.startDog();
  }
}

/** Lets the gate exec the tool: one line on its descriptor 3. */
function letGo(tool: ChildProcess): void {
  const gate = tool.stdio[3] as Writable;
  gate.on('error', () => {
    /* the gate died before it read its line (cancelled at once): nothing to let go */
  });
  gate.write('go\n', () => gate.destroy());
}

/** SIGKILL of every tool group that still runs: for a Nyl that must end at once (a second signal). */
export function killToolsNow(): void {
  for (const watch of watched) watch.killNow();
}
