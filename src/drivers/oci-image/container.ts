/**
 * One container run, `RUNTIME run --rm ...`, with its output streamed line by line, and stopped
 * on a timeout or a cancellation.
 *
 * Why the driver stops the container itself rather than signalling the client as the runner
 * would: the container is not the client's child (conmon watches it), so a client killed after
 * its grace period leaves it running, and an image's PID 1 ignores SIGTERM unless it handles it.
 * So on a timeout or a cancellation: `RUNTIME stop -t <grace> NAME` (SIGTERM, SIGKILL after the
 * grace), `RUNTIME kill NAME` should the stop fail; the client then ends by itself as its container
 * did. Should it not (the container was not created yet when the stop came), the client is
 * signalled too, and a last `rm -f` removes whatever it left.
 */
import type { ProcessResult } from '../../exec/process';
import type { ToolLine } from '../../exec/lines';
import type { DriverContext } from '../contract';
import { runTool } from '../tool';
import { type Runtime, removeContainer, runHelper, runtimeError } from './runtime';

/** How long after a stop the client may take to end (removing its container) before it is signalled. */
const CLIENT_END_MS = 10_000;

export interface ContainerRun {
  done: ProcessResult;
  /** Why the driver stopped the container, if it did. */
  stopped?: 'cancelled' | 'timedOut';
  /** The runtime's own last error line (`Error: ...`), for reasons. */
  runtimeError?: string;
}

function graceSeconds(ctx: DriverContext): number {
  return Math.max(1, Math.ceil(ctx.killGraceMs / 1000));
}

/** The container's stderr, printed as the tool's output, its last error line kept for reasons. */
function stderrOf(ctx: DriverContext) {
  let lastError: string | undefined;
  const line = (l: ToolLine) => {
    lastError = runtimeError(l.text) ?? lastError;
    ctx.toolOutput(l);
  };
  return { line, lastError: () => lastError };
}

/** Stops the container; once the client ended (or was ended), makes sure nothing of it is left. */
async function stopContainer(
  runtime: Runtime,
  name: string,
  ctx: DriverContext,
  ended: Promise<unknown>,
  endedSignal: AbortSignal,
  client: AbortController,
): Promise<void> {
  const grace = graceSeconds(ctx);
  const stop = await runHelper(ctx, [runtime, 'stop', '-t', String(grace), name], { extraMs: grace * 1000 });
  if (stop.code !== 0) await runHelper(ctx, [runtime, 'kill', name]);
  await ctx.clock.sleep(grace * 1000 + CLIENT_END_MS, endedSignal);
  if (!endedSignal.aborted) client.abort('SIGTERM');
  await ended;
  // Usually gone already (--rm); not when the client was ended before it could remove it.
  await removeContainer(ctx, runtime, name, grace);
}

/** Runs argv (a `run --name NAME` of the runtime); stops the container on ctx.cancel or after timeoutMs. */
export async function runContainer(runtime: Runtime, argv: string[], name: string, ctx: DriverContext, timeoutMs: number | undefined): Promise<ContainerRun> {
  const client = new AbortController();
  const end = new AbortController();
  const stderr = stderrOf(ctx);
  const running = runTool(ctx, argv, { cwd: ctx.projectDir, env: ctx.baseEnv, cancel: client.signal, stdout: ctx.toolOutput, stderr: stderr.line });
  const ended = running.finally(() => end.abort());
  let stopped: ContainerRun['stopped'];
  let stopping: Promise<void> | undefined;
  const stopFor = (why: 'cancelled' | 'timedOut') => {
    if (stopped || end.signal.aborted) return;
    stopped = why;
    stopping = stopContainer(runtime, name, ctx, ended, end.signal, client);
  };
  const onCancel = () => stopFor('cancelled');
  ctx.cancel.addEventListener('abort', onCancel, { once: true });
  if (timeoutMs !== undefined) void ctx.clock.sleep(timeoutMs, end.signal).then(() => stopFor('timedOut'));
  const done = await ended;
  ctx.cancel.removeEventListener('abort', onCancel);
  await stopping;
  const error = stderr.lastError();
  return { done, ...(stopped ? { stopped } : {}), ...(error ? { runtimeError: error } : {}) };
}
