/**
 * The container's environment, passed in a file (`--env-file`) rather than on the command line:
 * values may be secrets, and a command line is readable by every user of the machine (ps). The
 * file is written with mode 0600 in the execution's scratch directory, and removed as soon as the
 * container exists (removeOnceCreated), else when the run ends: a Nyl killed while its container
 * runs must not leave the values in $TMPDIR.
 *
 * The format carries no escapes (podman and docker read `NAME=value` lines literally, up to the
 * first newline, dropping a `\r` before it, and refuse a line of 64 KiB or more), so a value it
 * cannot carry is refused with the variable's name, never truncated or altered: a newline, a
 * trailing carriage return, a NUL byte (no process can take one), or a line too long. Passing such
 * values through podman's own environment instead would let a variable meant for the container
 * (PATH, TMPDIR, LD_PRELOAD...) change how podman itself runs.
 */
import { type FSWatcher, rmSync, watch, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DriverContext } from '../contract';
import { declaredEnv, nylEnv } from '../tool';

/** Where the outputs file appears inside the container (NYL_OUTPUTS). */
export const OUTPUTS_IN_CONTAINER = '/nyl/outputs.json';

/** The longest `NAME=value` line the runtimes' env-file readers take (bufio.Scanner's limit, less its newline). */
const MAX_LINE_BYTES = 64 * 1024 - 1;

/** The declared env, then the NYL_* variables (which win, as for a Command). */
export function containerEnv(declared: Record<string, unknown> | undefined, ctx: DriverContext): Record<string, string> {
  return { ...declaredEnv(declared), ...nylEnv(ctx), NYL_OUTPUTS: OUTPUTS_IN_CONTAINER };
}

/** Why the env file cannot carry this environment as it is, naming the variable (never its value). */
export function envFileProblem(env: Record<string, string>): string | undefined {
  for (const [name, value] of Object.entries(env)) {
    const why = value.includes('\n')
      ? 'contains a newline'
      : value.endsWith('\r')
        ? 'ends with a carriage return'
        : value.includes('\0')
          ? 'contains a NUL byte'
          : Buffer.byteLength(`${name}=${value}`) > MAX_LINE_BYTES
            ? `is longer than the ${MAX_LINE_BYTES} bytes a NAME=value line may take`
            : undefined;
    if (why) return `the environment variable ${name} ${why}, which a container's env file cannot carry; pass such a value in a file, or encode it (base64)`;
  }
  return undefined;
}

/** The env file of a run, and the file the runtime writes the container's id to (`--cidfile`). */
export interface EnvFile {
  /** The scratch directory both are in. */
  dir: string;
  path: string;
  cidFile: string;
  /** Removes the env file. */
  remove: () => void;
  /** Removes both files: the run ended. */
  removeAll: () => void;
}

const ENV_FILE = 'container.env';
const CID_FILE = 'container.id';

/** Writes the env file (mode 0600) in the scratch directory, a new one per run (no cidfile there yet). */
export function writeEnvFile(env: Record<string, string>, dir: string): EnvFile {
  const path = join(dir, ENV_FILE);
  const cidFile = join(dir, CID_FILE);
  const text = Object.entries(env)
    .map(([k, v]) => `${k}=${v}\n`)
    .join('');
  writeFileSync(path, text, { mode: 0o600 });
  const remove = () => rmSync(path, { force: true });
  return { dir, path, cidFile, remove, removeAll: () => (remove(), rmSync(cidFile, { force: true })) };
}

/**
 * Removes the env file as soon as the container exists; call before the runtime starts, and the
 * returned function once it ended. Why then: the runtime reads --env-file while it turns its
 * command line into a container spec, before it creates the container, and never again; it
 * writes --cidfile only after (podman: once the container is created; docker: when it starts
 * creating it, its options parsed). So the cidfile's appearance is the earliest moment the values
 * are provably read, and from then on only the container holds them. A watch on the directory
 * (inotify on Linux) costs no polling; should it fail, the file goes when the run ends.
 */
export function removeOnceCreated(file: EnvFile): () => void {
  let watcher: FSWatcher | undefined;
  const stop = () => watcher?.close();
  try {
    watcher = watch(file.dir, (_event, name) => {
      if (name !== CID_FILE) return;
      stop();
      try {
        file.remove();
      } catch {
        // A throw here would reach no caller: the end of the run tries again.
      }
    });
    watcher.on('error', stop);
  } catch {
    // No watch (inotify's limits reached): the end of the run removes the file.
  }
  return stop;
}
