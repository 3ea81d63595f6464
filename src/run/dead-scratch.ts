/**
 * The scratch directories of the dead runs an importer consumed, removed on this host: a run
 * killed mid-unit leaves `$TMPDIR/nyl-run-<run>-XXXXXX` (./workspace.ts) behind, with its units'
 * outputs files and scratch files, values in plain text among them.
 *
 * Only what is provably that dead run's goes:
 * - the run's record (run.yaml) names this host (os.hostname(), which the lease and the run
 *   record hold), and its process is gone here: not this process, and no process of that pid
 *   (signal 0), so that a run whose lease was broken while it still lives keeps its files;
 * - the run id is a UUID, and the entry is exactly its prefix and mkdtemp's six characters, in
 *   this process's temporary directory (a run under another TMPDIR is not found);
 * - the entry is a directory itself (lstat: a symlink named so is left alone), owned by this user.
 * Removal never follows a symlink: rm removes a link, not what it points to.
 * Nothing here throws: a directory that cannot be removed is a problem to report.
 */
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunDoc } from '../state/run-record';
import { UUID_RE } from '../util/uuid';
import { scratchPrefix } from './workspace';

/** A consumed run: its id, and its record when it could be read. */
interface DeadRun {
  run: string;
  doc?: Pick<RunDoc, 'holder'>;
}

/** This host as the removal sees it; tests pass their own. */
interface ScratchHost {
  tmp: string;
  host: string;
  isAlive: (pid: number) => boolean;
}

/** Whether a process of this pid exists here (EPERM: it does, another user's). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function thisHost(): ScratchHost {
  return { tmp: tmpdir(), host: hostname(), isAlive: processExists };
}

/** Did the run live on this host, in a process that is gone? Anything less is no proof. */
function diedHere(dead: DeadRun, here: ScratchHost): boolean {
  const holder = dead.doc?.holder;
  if (!holder || holder.host !== here.host || !UUID_RE.test(dead.run)) return false;
  // pid 0 or less would signal a process group: no pid of a run.
  if (!Number.isInteger(holder.pid) || holder.pid <= 0 || holder.pid === process.pid) return false;
  return !here.isAlive(holder.pid);
}

/** Entries of the temporary directory named as a scratch directory of this run. */
function namedFor(run: string, entries: readonly string[]): string[] {
  const prefix = scratchPrefix(run);
  return entries.filter((e) => e.startsWith(prefix) && /^[A-Za-z0-9]{6}$/.test(e.slice(prefix.length)));
}

function entriesOf(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** Removes one scratch directory if it is a real directory of this user; true when it did. */
function removeIfOurs(path: string): boolean {
  const stat = lstatSync(path);
  if (!stat.isDirectory() || (process.getuid && stat.uid !== process.getuid())) return false;
  rmSync(path, { recursive: true, force: true });
  return true;
}

/** Removes the scratch directories these dead runs left on this host (see the header). */
export function removeDeadScratch(runs: readonly DeadRun[], here: ScratchHost = thisHost()): { removed: { run: string; dir: string }[]; problems: string[] } {
  const removed: { run: string; dir: string }[] = [];
  const problems: string[] = [];
  const dying = runs.filter((r) => diedHere(r, here));
  const entries = dying.length > 0 ? entriesOf(here.tmp) : [];
  for (const dead of dying) {
    for (const name of namedFor(dead.run, entries)) {
      const path = join(here.tmp, name);
      try {
        if (removeIfOurs(path)) removed.push({ run: dead.run, dir: path });
      } catch (error) {
        problems.push(
          `cannot remove ${path}, the scratch directory of the dead run ${dead.run}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
        );
      }
    }
  }
  return { removed, problems };
}
