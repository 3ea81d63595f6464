/**
 * The container runtime an OciImage unit runs with, and what the engine needs to find its
 * containers again.
 *
 * `spec.runtime` names it; without one, the first of podman and docker on the PATH wins, docker
 * only when its engine answers `docker info` (a docker client without a daemon runs nothing).
 * Nyl passes no global options to podman: on a root Debian 12 machine its defaults work (the
 * runtime, cgroup manager and events backend it detects); a machine that needs others sets them
 * in podman's own configuration (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF), which the tool
 * inherits with the invoking process's environment.
 *
 * Containers are named and labelled after their environment, unit and run, so that when Nyl dies
 * while one runs (the watchdog kills the podman client; the container, watched by conmon, lives
 * on), the importer of that run can list and remove it: `leftoverContainers`, `removeLeftovers`, `containerName`.
 */
import { withoutKeyVariables } from '../../util/sealed';
import type { ProcessResult, ProcessRunner } from '../../exec/process';
import { programError } from '../../exec/program-path';
import { type DriverContext, type Failure, failure } from '../contract';
import { cannotStart } from '../tool';

export type Runtime = 'podman' | 'docker';

/** How long a helper command (inspect, stop, kill, rm, ps, info) may take before it is killed. */
const HELPER_TIMEOUT_MS = 60_000;

/** The labels every container gets; the importer filters on the first. */
export const LABELS = { environment: 'nyl.environment', unit: 'nyl.unit', run: 'nyl.run' } as const;

/**
 * The container's name: `nyl_ENV_UNIT_RUN`. Environment and unit names hold only `[a-z0-9-]`, so
 * `_` separates them without ambiguity, and the name is valid for podman and docker as it is
 * (anything else is replaced by `-`, for callers that pass other text).
 */
export function containerName(environment: string, unit: string, run: string): string {
  const part = (s: string) => s.replace(/[^A-Za-z0-9.-]/g, '-');
  return `nyl_${part(environment)}_${part(unit)}_${part(run)}`;
}

/** The context of a helper command run outside a unit's execution (an importer's): the grace is the runtime's own. */
function outsideRun(runner: ProcessRunner, env: NodeJS.ProcessEnv): Pick<DriverContext, 'runner' | 'baseEnv' | 'killGraceMs'> {
  return { runner, baseEnv: env, killGraceMs: 5000 };
}

/** `rm -f` of a container: podman stops it first (SIGTERM, SIGKILL after `graceSeconds`), then removes it. */
export function removeContainer(
  ctx: Pick<DriverContext, 'runner' | 'baseEnv' | 'killGraceMs'>,
  runtime: Runtime,
  name: string,
  graceSeconds: number,
): Promise<ProcessResult> {
  return runHelper(ctx, [runtime, 'rm', '-f', ...(runtime === 'podman' ? ['-t', String(graceSeconds)] : []), name], { extraMs: graceSeconds * 1000 });
}

/** Runs a short helper command of the runtime: not streamed (its output is not the tool's), bounded. */
export function runHelper(
  ctx: Pick<DriverContext, 'runner' | 'baseEnv' | 'killGraceMs'>,
  argv: string[],
  options: { cancel?: AbortSignal; extraMs?: number } = {},
): Promise<ProcessResult> {
  return ctx.runner.run(argv, {
    env: ctx.baseEnv,
    group: true,
    timeoutMs: HELPER_TIMEOUT_MS + (options.extraMs ?? 0),
    killGraceMs: ctx.killGraceMs,
    ...(options.cancel ? { cancel: options.cancel } : {}),
  });
}

/** The runtime's own error (`Error: ...`, its last such line) in a helper's or a run's stderr. */
export function runtimeError(stderr: string): string | undefined {
  const lines = stderr
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => /^Error( response from daemon)?:/.test(l));
  return lines[lines.length - 1];
}

/** spec.runtime, or the first runtime found that can run containers here. */
export async function chooseRuntime(runtime: Runtime | undefined, ctx: DriverContext): Promise<Runtime | Failure> {
  if (runtime) return runtime;
  if (!programError(['podman'], ctx.baseEnv, undefined)) return 'podman';
  if (!programError(['docker'], ctx.baseEnv, undefined)) {
    const info = await runHelper(ctx, ['docker', 'info'], { cancel: ctx.cancel });
    if (info.code === 0) return 'docker';
    return failure(
      `no container runtime: podman is not on PATH, and docker is but its engine does not answer \`docker info\` (exit ${String(info.code)}); install podman, or start the docker engine`,
      true,
    );
  }
  return failure('no container runtime: neither podman nor docker is on PATH; install podman (apt-get install podman runc), or set spec.runtime', true);
}

export interface LeftoverContainer {
  id: string;
  name: string;
  unit: string | undefined;
  run: string | undefined;
  /** As the runtime says: running, exited, created... */
  state: string;
}

type Listing = { ok: true; containers: LeftoverContainer[] } | { ok: false; reason: string };

/**
 * The containers of an environment that still exist, running or not: those a run left when Nyl
 * died while they ran (a finished one removes itself, `--rm`). For the importer of a dead run: a
 * container of its run still running means the unit's effects are still happening.
 */
export async function leftoverContainers(
  runner: ProcessRunner,
  environment: string,
  options: { runtime?: Runtime; env?: NodeJS.ProcessEnv } = {},
): Promise<Listing> {
  const runtime = options.runtime ?? 'podman';
  const argv = [runtime, 'ps', '-a', '--filter', `label=${LABELS.environment}=${environment}`, '--format', 'json'];
  const done = await runHelper(outsideRun(runner, options.env ?? withoutKeyVariables(process.env)), argv);
  if (done.spawnError) return { ok: false, reason: cannotStart(runtime, done.spawnError) };
  if (done.code !== 0) return { ok: false, reason: `${runtime} ps failed (exit ${String(done.code)})${suffix(runtimeError(done.stderr.toString()))}` };
  try {
    return { ok: true, containers: parseListing(done.stdout.toString()) };
  } catch {
    return { ok: false, reason: `${runtime} ps printed something that is not its JSON listing` };
  }
}

/**
 * Removes the containers of `environment` labelled with one of `runs` (`rm -f`, 10 s of grace):
 * what dead runs left. Returns the containers removed, or why it could not list them.
 */
export async function removeLeftovers(
  runner: ProcessRunner,
  environment: string,
  runs: readonly string[],
  env: NodeJS.ProcessEnv,
): Promise<{ removed: LeftoverContainer[]; problem?: string }> {
  const listed = await leftoverContainers(runner, environment, { env });
  if (!listed.ok) return { removed: [], problem: listed.reason };
  const dead = new Set(runs);
  const removed: LeftoverContainer[] = [];
  for (const c of listed.containers.filter((x) => x.run !== undefined && dead.has(x.run))) {
    if ((await removeContainer(outsideRun(runner, env), 'podman', c.name, 10)).code === 0) removed.push(c);
  }
  return { removed };
}

function suffix(detail: string | undefined): string {
  return detail ? `: ${detail}` : '';
}

/** Podman prints one JSON array (labels a map, names a list); docker one object per line (both as text). */
function parseListing(text: string): LeftoverContainer[] {
  const trimmed = text.trim();
  if (trimmed === '') return [];
  const rows: Record<string, unknown>[] = trimmed.startsWith('[') ? JSON.parse(trimmed) : trimmed.split('\n').map((l) => JSON.parse(l));
  return rows.map((row) => {
    const labels =
      typeof row.Labels === 'string'
        ? Object.fromEntries(row.Labels.split(',').map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]))
        : ((row.Labels ?? {}) as Record<string, string>);
    const names = Array.isArray(row.Names) ? (row.Names as string[]) : String(row.Names ?? '').split(',');
    return { id: String(row.Id ?? row.ID ?? ''), name: names[0] ?? '', unit: labels[LABELS.unit], run: labels[LABELS.run], state: String(row.State ?? '') };
  });
}
