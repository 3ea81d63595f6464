/**
 * Whether a program can be started, decided before anything starts, the way execvp and Node's
 * spawn decide it: a name with a slash is taken relative to the working directory, any other is
 * looked up on the PATH of the environment the program gets (`/usr/bin:/bin` when it has none;
 * an empty entry is the working directory). The first regular file that may be executed wins; a
 * file found but not executable (or a directory) makes EACCES when nothing else is found, and
 * nothing found makes ENOENT.
 *
 * A process that starts through a wrapper (src/exec/watchdog.ts) would otherwise report a missing
 * program as the wrapper's exit code 127; deciding it here keeps it a spawn error, as the runner's
 * contract says.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { resolve } from 'node:path';

const DEFAULT_PATH = '/usr/bin:/bin';

/** 'ok', or why execve would refuse this path. */
function executable(path: string): 'ok' | 'EACCES' | 'ENOENT' {
  try {
    // Most PATH entries miss: no exception for those (a thrown one costs more than the stat).
    const stat = statSync(path, { throwIfNoEntry: false });
    if (!stat) return 'ENOENT';
    if (!stat.isFile()) return 'EACCES';
    accessSync(path, constants.X_OK);
    return 'ok';
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EACCES' ? 'EACCES' : 'ENOENT';
  }
}

/** The error Node's spawn reports for `file` (same message, code, errno, syscall, path). */
function spawnError(code: 'EACCES' | 'ENOENT', file: string, args: string[]): NodeJS.ErrnoException {
  return Object.assign(new Error(`spawn ${file} ${code}`), {
    errno: code === 'ENOENT' ? -2 : -13,
    code,
    syscall: `spawn ${file}`,
    path: file,
    spawnargs: args,
  });
}

/** Undefined when argv[0] can be started with this environment and working directory; else the spawn error. */
export function programError(argv: string[], env: NodeJS.ProcessEnv, cwd: string | undefined): NodeJS.ErrnoException | undefined {
  const file = argv[0]!;
  const base = cwd ?? process.cwd();
  if (file.includes('/')) {
    const found = executable(resolve(base, file));
    return found === 'ok' ? undefined : spawnError(found, file, argv.slice(1));
  }
  let denied = false;
  for (const dir of (env.PATH ?? DEFAULT_PATH).split(':')) {
    const found = executable(resolve(base, dir || '.', file));
    if (found === 'ok') return undefined;
    if (found === 'EACCES') denied = true;
  }
  return spawnError(denied ? 'EACCES' : 'ENOENT', file, argv.slice(1));
}
