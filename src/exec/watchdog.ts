/**
 * Tools die with the Nyl process that started them, whatever kills it (SIGKILL included, which no
 * handler sees).
 *
 * A tool runs in its own process group (so that cancellation reaches its children), and is then
 * out of reach of whatever kills Nyl or Nyl's group. So one watchdog process per Nyl process, a
 * small `sh` loop started on first use in a process group of its own, keeps the list of the tool
 * groups that run: Nyl writes `+<pgid>` to its standard input when a tool starts and `-<pgid>`
 * when it ends. When that pipe reaches end of file, Nyl is gone (the kernel closes a dead
 * process's descriptors, however it died), and the watchdog kills every group still listed with
 * SIGKILL at once: the grace of a cancellation is for a live Nyl, not a dead one. A normal exit of
 * Nyl closes the pipe too, with no group listed.
 *
 * No tool may run before it is listed, or a Nyl killed in between would leave it running: a tool
 * starts as `sh -c GATE`, which waits for a line on descriptor 3 before it execs the tool, and Nyl
 * writes that line once its `+<pgid>` is in the watchdog's pipe. A Nyl that dies earlier closes
 * descriptor 3, and the gate exits without running anything. The gate execs
 * `/usr/bin/env -i -- NAME=VALUE... argv...`, because a shell exports a changed environment (it
 * drops names it cannot hold, such as `A.B`, and sets PWD, IFS or SHLVL), while env(1) sets
 * exactly the given one. The process Nyl started is the tool itself in the end (the same pid,
 * exec after exec), so its exit code, signal and streams reach Nyl unchanged.
 *
 * Cost per tool: two execs (sh, env) in the tool's process before its own, and two short writes
 * by Nyl; one watchdog per Nyl process. Values never enter shell text: both scripts are constant,
 * argv and environment reach the gate as arguments, and pgids reach the watchdog as data.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import type { Writable } from 'node:stream';

/** Lists groups; at end of input kills those still listed. Ignores the signals a terminal or a cancel sends. */
const WATCHDOG_SCRIPT = `trap '' HUP INT QUIT TERM PIPE
groups=' '
while read -r line; do
  case $line in
    +*) groups="$groups\${line#+} " ;;
    -*) case $groups in *" \${line#-} "*) groups="\${groups%%" \${line#-} "*} \${groups#*" \${line#-} "}" ;; esac ;;
  esac
done
for pgid in $groups; do kill -s KILL -- "-$pgid" 2>/dev/null; done`;

/** Waits for Nyl's go-ahead on descriptor 3, then becomes the tool (3 closed). No line: Nyl died first. */
const GATE_SCRIPT = `read -r go <&3 || exit 125
exec "$@" 3<&-`;

const SHELL = '/bin/sh';
const ENV = '/usr/bin/env';

/**
 * The argv that runs `argv` behind the gate with exactly `env`, or undefined when env(1) cannot
 * take the program's name (it would read a name with `=` as an assignment).
 */
export function gatedArgv(argv: string[], env: NodeJS.ProcessEnv): string[] | undefined {
  if (argv[0]!.includes('=')) return undefined;
  const pairs: string[] = [];
  for (const [name, value] of Object.entries(env)) if (value !== undefined) pairs.push(`${name}=${value}`);
  return [SHELL, '-c', GATE_SCRIPT, 'nyl-gate', ENV, '-i', '--', ...pairs, ...argv];
}

/**
 * The watchdog of this Nyl process, started with the first tool. One that someone killed is
 * replaced when the next tool starts, and told every group that still runs.
 */
class Watchdog {
  private child: ChildProcess | undefined;
  /** The groups that run now, so that a watchdog started again lists them too. */
  private readonly groups = new Set<number>();

  /** A new watchdog, told every group listed; `then` runs once that is in its pipe. */
  private start(then: (error?: Error | null) => void): void {
    const child = spawn(SHELL, ['-c', WATCHDOG_SCRIPT, 'nyl-watchdog'], { detached: true, stdio: ['pipe', 'ignore', 'ignore'], env: {} });
    // It must never keep Nyl alive: Nyl's exit is what it waits for.
    child.unref();
    const lost = () => {
      if (this.child === child) this.child = undefined;
    };
    child.on('error', lost);
    child.on('exit', lost);
    child.stdin!.on('error', lost);
    this.child = child;
    child.stdin!.write([...this.groups].map((g) => `+${g}\n`).join(''), then);
  }

  /**
   * Lists a group; `then` runs once the line is in the watchdog's pipe. A watchdog that is gone
   * is replaced once; should that fail too (no /bin/sh), the tool runs anyway, as its gate
   * cannot have started either.
   */
  watch(pgid: number, then: () => void): void {
    this.groups.add(pgid);
    const replace = (error?: Error | null) => (error ? this.start(() => then()) : then());
    if (this.child) this.child.stdin!.write(`+${pgid}\n`, replace);
    else this.start(() => then());
  }

  /** The group's tool has ended: no longer the watchdog's to kill. */
  release(pgid: number): void {
    this.groups.delete(pgid);
    this.child?.stdin?.write(`-${pgid}\n`);
  }
}

let watchdog: Watchdog | undefined;

/** Lists the tool's group with the watchdog, then lets the gate exec the tool. */
export function watchThenGo(child: ChildProcess): void {
  const gate = child.stdio[3] as Writable;
  gate.on('error', () => {
    /* the gate died before it read its line (cancelled at once): nothing to let go */
  });
  watchdog ??= new Watchdog();
  watchdog.watch(child.pid!, () => gate.write('go\n', () => gate.destroy()));
}

/** The tool of this group has exited. */
export function unwatch(child: ChildProcess): void {
  if (child.pid !== undefined) watchdog?.release(child.pid);
}
