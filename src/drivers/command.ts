/**
 * The Command driver (DESIGN.md section 1): runs `run` argv or `script` (by `sh -e -c`), with
 * `env`, `workingDir` and `timeout`. The tool gets NYL_OUTPUTS (a path where it may write a JSON
 * object: the receipt's outputs), NYL_ENVIRONMENT, NYL_UNIT, NYL_RUN and NYL_UID.
 *
 * Values reach the tool only as argv elements or environment variables, never spliced into
 * shell text: the source model refuses references inside `script`.
 *
 * Failures: a non-zero exit, a tool that cannot start and an invalid outputs file are retryable
 * (the next reconcile runs the unit again). A timeout killed the tool midway, so its effects are
 * unknown: that failure is not retried until an operator acknowledges it with
 * `nyl recover --unit U --retry --reason`. A tool still running when the run is cancelled ends
 * uncertain.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { LineSplitter, supervise } from '../exec/supervise';
import { parseDuration } from '../util/clock';
import { DRIVER_VERSIONS } from './versions';
import type { Driver, DriverContext, DriverOutcome } from './types';

interface CommandSpec {
  run?: unknown[];
  script?: string;
  env?: Record<string, unknown>;
  workingDir?: string;
  timeout?: string;
}

/** A rendered value as a process sees it: strings as they are, anything else as JSON. */
export function asProcessText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

export function readOutputs(path: string): { ok: true; outputs: Record<string, unknown> } | { ok: false; reason: string } {
  if (!existsSync(path)) return { ok: true, outputs: {} };
  const text = readFileSync(path, 'utf8');
  if (text.trim() === '') return { ok: true, outputs: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, reason: `NYL_OUTPUTS holds invalid JSON: ${(error as Error).message.split('\n')[0]}` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { ok: false, reason: 'NYL_OUTPUTS must hold a JSON object' };
  }
  return { ok: true, outputs: value as Record<string, unknown> };
}

export const commandDriver: Driver = {
  kind: 'Command',
  version: DRIVER_VERSIONS.Command,
  defaultRecovery: 'manual',
  async execute(ctx: DriverContext): Promise<DriverOutcome> {
    const spec = ctx.rendering as CommandSpec;
    const argv = spec.run ? spec.run.map(asProcessText) : ['sh', '-e', '-c', spec.script ?? '', `nyl:${ctx.unit}`];
    const declared: Record<string, string> = {};
    for (const [k, v] of Object.entries(spec.env ?? {})) declared[k] = asProcessText(v);
    const outputsPath = ctx.outputsPath;
    const cwd = resolve(ctx.projectDir, spec.workingDir ?? '.');
    if (!existsSync(cwd)) return { result: 'failed', reason: `workingDir ${spec.workingDir ?? '.'} does not exist in the source commit`, retryable: true };
    const env: NodeJS.ProcessEnv = {
      ...ctx.baseEnv,
      ...declared,
      NYL_OUTPUTS: outputsPath,
      NYL_ENVIRONMENT: ctx.environment,
      NYL_UNIT: ctx.unit,
      NYL_RUN: ctx.run,
      NYL_UID: ctx.uid,
    };
    const timeoutMs = spec.timeout ? parseDuration(spec.timeout) : undefined;
    const child = ctx.runner.start(argv, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    const out = new LineSplitter(ctx.toolOutput);
    const err = new LineSplitter(ctx.toolOutput);
    const done = await supervise(child, {
      ...(timeoutMs !== undefined ? { timeoutMs } : {}),
      cancel: ctx.cancel,
      graceMs: ctx.killGraceMs,
      onStdout: (b) => out.push(b),
      onStderr: (b) => err.push(b),
    });
    out.flush();
    err.flush();
    if (done.spawnError) {
      return { result: 'failed', reason: `cannot start ${argv[0]}: ${done.spawnError.code ?? done.spawnError.message}`, retryable: true };
    }
    if (done.cancelled && !(done.code === 0)) {
      return { result: 'uncertain', reason: `cancelled while running (${done.signal ? `ended by ${done.signal}` : `exit ${String(done.code)}`} after ${seconds(done.durationMs)})` };
    }
    if (done.timedOut) {
      return { result: 'failed', reason: `timed out after ${spec.timeout} and was killed`, retryable: false, acknowledgementRequired: true };
    }
    if (done.code !== 0) {
      const why = done.signal ? `command was killed by ${done.signal}` : `command exited with code ${String(done.code)}`;
      return { result: 'failed', reason: why, retryable: true };
    }
    const outputs = readOutputs(outputsPath);
    if (!outputs.ok) return { result: 'failed', reason: outputs.reason, retryable: true };
    return { result: 'receipt', outputs: outputs.outputs };
  },
};
