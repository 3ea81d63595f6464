/**
 * Who a process is, beyond its pid: the boot it runs in and when it started, so that another
 * process on the same machine can prove it gone. A pid alone proves nothing: after the holder
 * died, its pid may be reused by any process, and after a reboot every pid is.
 *
 * On Linux, the boot is `/proc/sys/kernel/random/boot_id` (a random id per boot) and the start
 * is field 22 of `/proc/PID/stat` (clock ticks since boot): together with the pid they name one
 * process for good. Elsewhere both are unknown, and nothing is ever proven gone: the caller then
 * decides by the lease's timing alone, as before.
 */
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/** A process as a lease or run record names it. */
export interface ProcessIdentity {
  host: string;
  pid: number;
  /** The boot id of the machine when the process ran (Linux). */
  boot?: string;
  /** When the process started, in clock ticks since that boot (Linux). */
  started?: string;
}

/** Where this module reads the machine's state: the real /proc, or a test's. */
interface ProcView {
  host(): string;
  bootId(): string | undefined;
  /** The start of a process in clock ticks since boot, or undefined when there is no such process. */
  startOf(pid: number): string | undefined;
}

function readOrUndefined(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Field 22 of /proc/PID/stat; the command name (field 2) may hold spaces and parentheses, so fields count from its last ')'. */
function startTicksOf(stat: string): string | undefined {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = fields[19];
  return ticks && /^\d+$/.test(ticks) ? ticks : undefined;
}

export const LINUX_PROC: ProcView = {
  host: () => hostname(),
  bootId: () => readOrUndefined('/proc/sys/kernel/random/boot_id')?.trim() || undefined,
  startOf: (pid) => {
    const stat = readOrUndefined(`/proc/${pid}/stat`);
    return stat === undefined ? undefined : startTicksOf(stat);
  },
};

/** This process, as records name it. */
export function thisProcess(view: ProcView = LINUX_PROC): ProcessIdentity {
  const boot = view.bootId();
  const started = boot ? view.startOf(process.pid) : undefined;
  return { host: view.host(), pid: process.pid, ...(boot ? { boot } : {}), ...(started ? { started } : {}) };
}

/**
 * Is the process provably gone? Only for one of this machine's, in this boot, that named its start:
 * its pid no longer exists, or belongs to a process that started at another time (a reused
 * pid). The caller's own process is never gone.
 */
export function provablyGone(who: ProcessIdentity, view: ProcView = LINUX_PROC): boolean {
  if (!who.boot || !who.started || who.host !== view.host() || who.pid === process.pid) return false;
  if (!Number.isInteger(who.pid) || who.pid <= 0 || view.bootId() !== who.boot) return false;
  return view.startOf(who.pid) !== who.started;
}
