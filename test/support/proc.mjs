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

/** The pids of the running processes (zombies excluded) of process group pgid. */
export function groupMembers(pgid) {
  const out = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = procStat(Number(entry));
    if (stat?.pgid === pgid && stat.state !== 'Z' && stat.state !== 'X') out.push(Number(entry));
  }
  return out;
}

/** Waits until process group pgid has no running member; false when timeoutMs passed first. */
export async function groupEnds(pgid, timeoutMs) {
  const until = Date.now() + timeoutMs;
  while (groupMembers(pgid).length > 0) {
    if (Date.now() > until) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
  return true;
}
