/**
 * The OciImage driver: runs a one-shot container of a local image with podman (or docker), the
 * way the Command driver runs a process.
 *
 * - prepare resolves `image` to an immutable reference (./image.ts), which the desired document
 *   records and the execution key includes; it runs no container, and never pulls. An image not
 *   present here is `absent`: a current unit keeps the image it recorded, one that must execute
 *   fails with how to make the image present (the planner decides which).
 * - apply runs `RUNTIME run --rm --pull=never --network=<spec.network, default none> --runtime
 *   runc --ulimit nofile=4096:4096 --ulimit nproc=4096:4096 --name nyl_ENV_UNIT_RUN --label
 *   nyl.environment=ENV --label nyl.unit=UNIT --label nyl.run=RUN -v OUTPUTS:/nyl/outputs.json
 *   --env-file FILE --cidfile ID_FILE [--entrypoint COMMAND0] IMAGE [COMMAND1...] [ARGS...]`.
 *   runc and the explicit ulimits because the runtime's defaults fail where the hard limits are lower than they ask (a
 *   sandbox, a CI container); the name and labels let an importer find a container that outlived
 *   Nyl (./runtime.ts). `command` replaces the image's entrypoint (and its default arguments);
 *   without it, `args` replace only the image's default arguments.
 * - The environment reaches the container in a file, never on a command line (./env-file.ts),
 *   with NYL_ENVIRONMENT, NYL_UNIT, NYL_RUN, NYL_UID and NYL_OUTPUTS=/nyl/outputs.json; the file
 *   goes once the container exists (the runtime writes ID_FILE then). The outputs file is
 *   created empty with mode 0666 (a non-root container user writes it; its directory is the
 *   run's, 0700, so no other user reaches it) and read back, and removed, with a Command's rules
 *   (../outputs-file.ts).
 * - Outcomes as a Command's: a non-zero exit is retryable (`container exited with code N`; for
 *   125, the runtime's own error: it could not run the container at all), so is a runtime that
 *   cannot start; a timeout (`spec.timeout`) stops the container and needs an acknowledgement; a
 *   cancellation stops it and ends uncertain (./container.ts).
 * - teardown: a one-shot container leaves nothing Nyl could remove, so nothing claims a removal
 *   (incomplete); check: drift is unknown. No plan phase.
 * - reap: the importer of dead runs removes the containers they left (reap, below).
 */
import { chmodSync, writeFileSync } from 'node:fs';
import { parseDuration } from '../../util/duration';
import {
  type ApplyOutcome,
  type CheckOutcome,
  type Driver,
  type DriverContext,
  type Failure,
  failure,
  type PrepareOutcome,
  type ReapContext,
  type ReapOutcome,
  type TeardownOutcome,
  type Uncertain,
} from '../contract';
import { OCI_IMAGE_KIND } from '../kinds';
import { applyOutcome } from '../outputs-file';
import { classifyEnd } from '../tool';
import { type ContainerRun, runContainer } from './container';
import { type EnvFile, OUTPUTS_IN_CONTAINER, containerEnv, envFileProblem, removeOnceCreated, writeEnvFile } from './env-file';
import { NOT_PRESENT, notPresent, resolveImage } from './image';
import { LABELS, type Runtime, chooseRuntime, containerName, removeLeftovers } from './runtime';
import type { OciImageSpec } from './spec';

export { containerName, leftoverContainers, type LeftoverContainer } from './runtime';

/** Why this spec cannot become a command line: an image that would read as an option. */
function imageProblem(image: string): string | undefined {
  return image.startsWith('-') ? `image ${image} starts with "-", which the runtime would read as an option` : undefined;
}

async function prepare(ctx: DriverContext): Promise<PrepareOutcome> {
  const spec = ctx.rendering as OciImageSpec;
  const bad = imageProblem(spec.image);
  if (bad) return failure(bad, true);
  const runtime = await chooseRuntime(spec.runtime, ctx);
  if (typeof runtime !== 'string') return runtime;
  const resolved = await resolveImage(spec.image, runtime, ctx);
  if ('result' in resolved) return resolved;
  return { result: 'prepared', rendering: { ...ctx.rendering, image: resolved.image } };
}

/** The `run` command line; values of the environment are in the env file, not here. */
function runArgv(runtime: Runtime, spec: OciImageSpec, ctx: DriverContext, name: string, envFile: EnvFile): string[] {
  const command = spec.command ?? [];
  return [
    runtime,
    'run',
    '--rm',
    '--pull=never',
    `--network=${spec.network ?? 'none'}`,
    '--runtime',
    'runc',
    '--ulimit',
    'nofile=4096:4096',
    '--ulimit',
    'nproc=4096:4096',
    '--name',
    name,
    '--label',
    `${LABELS.environment}=${ctx.environment}`,
    '--label',
    `${LABELS.unit}=${ctx.unit}`,
    '--label',
    `${LABELS.run}=${ctx.run}`,
    '-v',
    `${ctx.outputsPath}:${OUTPUTS_IN_CONTAINER}`,
    '--env-file',
    envFile.path,
    '--cidfile',
    envFile.cidFile,
    ...(command.length > 0 ? ['--entrypoint', command[0]!] : []),
    spec.image,
    ...command.slice(1),
    ...(spec.args ?? []),
  ];
}

/** What makes the run impossible before anything starts. */
function refusal(spec: OciImageSpec, ctx: DriverContext, env: Record<string, string>): string | undefined {
  if (ctx.cancel.aborted) return 'cancelled before the container started';
  // `-v SOURCE:TARGET` splits at colons; the engine's paths have none, but say so if one does.
  if (ctx.outputsPath.includes(':')) return `the outputs file path ${ctx.outputsPath} contains ":", which a volume option cannot carry`;
  return imageProblem(spec.image) ?? envFileProblem(env);
}

/**
 * The files the run reads: the outputs file, empty and writable by any container user (the mode
 * is set after creation, as the umask would take bits off), and the env file.
 */
function writeInputs(env: Record<string, string>, ctx: DriverContext): { envFile: EnvFile } | Failure {
  try {
    writeFileSync(ctx.outputsPath, '');
    chmodSync(ctx.outputsPath, 0o666);
    return { envFile: writeEnvFile(env, ctx.scratchDir()) };
  } catch (error) {
    return failure(`cannot write the container's files: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`, true);
  }
}

/** Exit 125: the runtime's own error, before the container ran (an image that is not here, most often). */
function couldNotRun(run: ContainerRun, runtime: Runtime, image: string): Failure {
  if (run.runtimeError && NOT_PRESENT.test(run.runtimeError)) return notPresent(image, runtime);
  return failure(`${runtime} could not run the container (exit 125)${run.runtimeError ? `: ${run.runtimeError}` : ''}`, true);
}

/**
 * The outcome of a run that did not exit 0, or undefined when it did. A container the driver
 * stopped counts as its client's process would: cancelled, or timed out.
 */
function unsuccessful(run: ContainerRun, runtime: Runtime, spec: OciImageSpec): Failure | Uncertain | undefined {
  const done = { ...run.done, cancelled: run.stopped === 'cancelled', timedOut: run.stopped === 'timedOut' };
  return classifyEnd(done, {
    program: runtime,
    cancelledWhile: 'while the container ran; it was stopped',
    endedBy: `${runtime} `,
    timedOut: () => failure(`timed out after ${spec.timeout} and the container was stopped`, false, true),
    exited: () => {
      if (done.signal) return failure(`${runtime} was killed by ${done.signal}`, true);
      if (done.code === 125) return couldNotRun(run, runtime, spec.image);
      return failure(`container exited with code ${String(done.code)}`, true);
    },
  });
}

async function apply(ctx: DriverContext): Promise<ApplyOutcome> {
  const spec = ctx.rendering as OciImageSpec;
  const env = containerEnv(spec.env, ctx);
  const refused = refusal(spec, ctx, env);
  if (refused) return failure(refused, true);
  const runtime = await chooseRuntime(spec.runtime, ctx);
  if (typeof runtime !== 'string') return runtime;
  const name = containerName(ctx.environment, ctx.unit, ctx.run);
  const inputs = writeInputs(env, ctx);
  if ('result' in inputs) return inputs;
  const { envFile } = inputs;
  const stopWatching = removeOnceCreated(envFile);
  let run: ContainerRun;
  try {
    run = await runContainer(runtime, runArgv(runtime, spec, ctx, name, envFile), name, ctx, spec.timeout ? parseDuration(spec.timeout) : undefined);
  } finally {
    stopWatching();
    envFile.removeAll();
  }
  return applyOutcome(unsuccessful(run, runtime, spec), ctx.outputsPath);
}

async function teardown(ctx: DriverContext): Promise<TeardownOutcome> {
  return { result: 'incomplete', reason: `${ctx.unit} ${OCI_IMAGE_KIND.removalUnclaimed?.(ctx.rendering)}` };
}

/**
 * The containers dead runs left: `rm -f` (SIGTERM, SIGKILL after 10 s, then removal) of every
 * container of the environment labelled with one of those runs. A container of a dead run that
 * still exists never finished in a way Nyl saw (a finished one removes itself, `--rm`).
 */
async function reap(ctx: ReapContext): Promise<ReapOutcome> {
  const { removed, problem } = await removeLeftovers(ctx.runner, ctx.environment, ctx.runs, ctx.baseEnv);
  const ended = removed.map((c) => ({ unit: c.unit ?? '?', run: c.run!, what: `container ${c.name} (${c.state})` }));
  return problem ? { ended, problem } : { ended };
}

async function check(ctx: DriverContext): Promise<CheckOutcome> {
  return { result: 'checked', drift: 'unknown', detail: `${ctx.unit} runs a one-shot container: what it did cannot be observed` };
}

/** The OciImage driver's phases; its descriptor (version, recovery, spec) is OCI_IMAGE_KIND in ../kinds.ts. */
export const ociImageDriver: Driver = {
  ...OCI_IMAGE_KIND,
  prepare,
  apply,
  teardown,
  check,
  reap,
};
