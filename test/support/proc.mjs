// Linux /proc, read by the tests that must know whether a process still runs: a zombie nobody
// reaped yet (PID 1 of a container may not reap) has ended, though signal 0 still reaches it.
import fs from 'node:fs';

/** The state letter and process group of pid; undefined when it is gone. */
export function procStat(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name in parentheses may hold spaces: the fields start after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: fields[0], pgid: Number(fields[2]) };
  } catch {
    return undefined;
  }
}

/** Whether pid runs (a zombie or a dead process does not). */
export function isRunning(pid) {
  const state = procStat(pid)?.state;
  return state !== undefined && state !== 'Z' && state !== 'X';
}
