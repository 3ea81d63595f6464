/**
 * The Command driver: runs `run` argv or `script` (by `sh -e -c`), with
 * `env`, `workingDir` and `timeout`; `teardown:` and `check:` are actions of the same shape. The
 * tool gets NYL_OUTPUTS (a path where it may write a JSON object: the receipt's outputs),
 * NYL_ENVIRONMENT, NYL_UNIT, NYL_RUN and NYL_UID; a teardown also NYL_RECEIPT_OUTPUTS.
 *
 * Values reach the tool only as argv elements or environment variables, never spliced into
 * shell text: the source model refuses references inside the `script` fields (shellTextFields).
 *
 * The tool runs in workingDir, which must stay inside the project directory of the source commit
 * once its symlinks are followed; one that leaves it fails the unit before anything starts.
 *
 * Failures: a non-zero exit, a tool that cannot start (a command too large for the system
 * included), a NUL byte from another unit's outputs in argv or env, and an outputs file that is
 * invalid, too large or not a regular file (../outputs-file.ts) are retryable (the next
 * reconcile runs the unit again). A timeout killed the tool midway, so its effects are
 * unknown: that failure is not retried until an operator acknowledges it with
 * `nyl recover --unit U --retry --reason`. A tool still running when the run is cancelled ends
 * uncertain.
 */
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { existsSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import type { ProcessResult } from '../../exec/process';
import { parseDuration } from '../../util/duration';
import {
  type ApplyOutcome,
  type CheckOutcome,
  type Driver,
  type DriverContext,
  type Failure,
  failure,
  type TeardownOutcome,
  type Uncertain,
} from '../contract';
import { COMMAND_KIND } from '../kinds';
import { applyOutcome } from '../outputs-file';
import { type EndTexts, asProcessText, classifyEnd, declaredEnv, exitHow, nylEnv, runTool } from '../tool';
import type { CommandAction, CommandSpec } from './spec';

function argvOf(action: CommandAction, ctx: DriverContext): string[] {
  return action.run ? action.run.map(asProcessText) : ['sh', '-e', '-c', action.script ?? '', `nyl:${ctx.unit}`];
}

function envOf(action: CommandAction, ctx: DriverContext, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...ctx.baseEnv, ...declaredEnv(action.env), NYL_OUTPUTS: ctx.outputsPath, ...nylEnv(ctx), ...extra };
}

/**
 * Why no process can take this argv or environment: a NUL byte. The source is checked for them
 * when it loads; one can still arrive in a value another unit's outputs provided.
 */
function nulByteIn(argv: string[], env: NodeJS.ProcessEnv): string | undefined {
  const arg = argv.findIndex((a) => a.includes('\0'));
  if (arg >= 0) return `argument ${arg} of the command contains a NUL byte`;
  const name = Object.keys(env).find((k) => k.includes('\0') || env[k]?.includes('\0'));
  if (name !== undefined) return `the environment variable ${name.replace(/\0/g, '\\0')} contains a NUL byte`;
  return undefined;
}

/** An action that could not start; nothing ran. */
interface Refused {
  refused: string;
}

/** True when path is dir itself or inside it. */
function within(dir: string, path: string): boolean {
  const rel = relative(dir, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

/**
 * The tool's working directory: workingDir inside the project directory of the source commit.
 * Validation refuses `..` and absolute paths as written, but a rendered reference can still hold
 * them, and a committed symlink can point anywhere (a tool once ran in /etc): so the path is
 * resolved with its symlinks followed, and refused unless it stays inside.
 */
function workingDirOf(action: CommandAction, ctx: DriverContext): { cwd: string } | Refused {
  const written = action.workingDir ?? '.';
  const cwd = resolve(ctx.projectDir, written);
  const leaves = (to: string): Refused => ({
    refused: `workingDir ${written} leaves the source tree (it resolves to ${to}); it must stay inside the project directory`,
  });
  if (!within(ctx.projectDir, cwd)) return leaves(cwd);
  if (!existsSync(cwd)) return { refused: `workingDir ${written} does not exist in the source commit` };
  const real = realpathSync(cwd);
  return within(realpathSync(ctx.projectDir), real) ? { cwd } : leaves(real);
}

/** Runs one action of the unit in its own process group, streaming its output line by line. */
async function runAction(
  action: CommandAction,
  timeout: string | undefined,
  ctx: DriverContext,
  extraEnv?: Record<string, string>,
): Promise<ProcessResult | Refused> {
  const dir = workingDirOf(action, ctx);
  if ('refused' in dir) return dir;
  const { cwd } = dir;
  const argv = argvOf(action, ctx);
  const env = envOf(action, ctx, extraEnv);
  const nul = nulByteIn(argv, env);
  if (nul) return { refused: `${nul} (a value from a reference to another unit's outputs?): no process can take one` };
  const timeoutMs = timeout ? parseDuration(timeout) : undefined;
  return runTool(ctx, argv, { cwd, env, ...(timeoutMs !== undefined ? { timeoutMs } : {}), stdout: ctx.toolOutput, stderr: ctx.toolOutput });
}

/** What to do about a command too large for the system. */
function startHint(error: NodeJS.ErrnoException): string {
  if (error.code !== 'E2BIG') return '';
  return ' (its arguments and environment are too large for the system; on Linux one argument, such as a script, or one environment variable may take at most 128 KiB: put a long script in a file of the source and run that file, and pass large values in files)';
}

/** The failure or uncertainty of an action that did not exit 0, or undefined when it did. */
function unsuccessful(done: ProcessResult | Refused, timeout: string | undefined, okCodes: number[] = [0]): Failure | Uncertain | undefined {
  if ('refused' in done) return failure(done.refused, true);
  const texts: EndTexts = {
    program: done.argv[0] ?? 'the command',
    startHint,
    cancelledWhile: 'while running',
    timedOut: () => failure(`timed out after ${timeout} and was killed`, false, true),
    exited: (end) => failure(`command ${exitHow(end)}`, true),
  };
  return classifyEnd(done, texts, okCodes);
}

async function apply(ctx: DriverContext): Promise<ApplyOutcome> {
  const spec = ctx.rendering as CommandSpec;
  return applyOutcome(unsuccessful(await runAction(spec, spec.timeout, ctx), spec.timeout), ctx.outputsPath);
}

/** A teardown or check action with the unit's env and workingDir, unless the action sets its own. */
function inheriting(spec: CommandSpec, action: CommandAction): CommandAction {
  const workingDir = action.workingDir ?? spec.workingDir;
  return { ...action, env: { ...(spec.env ?? {}), ...(action.env ?? {}) }, ...(workingDir ? { workingDir } : {}) };
}

/**
 * The teardown action as the unit's run would run: its env and workingDir unless the action sets
 * its own, and NYL_RECEIPT_OUTPUTS, a file with the outputs of the last receipt (what it removes).
 * Without a teardown: action nothing can claim the removal: incomplete, and nothing runs.
 */
async function teardown(ctx: DriverContext): Promise<TeardownOutcome> {
  const spec = ctx.rendering as CommandSpec;
  // The kind's one rule (COMMAND_KIND.removalUnclaimed), which state delete also asks up front.
  const unclaimed = COMMAND_KIND.removalUnclaimed?.(spec);
  if (unclaimed !== undefined) return { result: 'incomplete', reason: `${ctx.unit} ${unclaimed}` };
  const action = inheriting(spec, spec.teardown!);
  const receiptFile = join(ctx.scratchDir(), 'receipt-outputs.json');
  writeFileSync(receiptFile, JSON.stringify(ctx.receiptOutputs ?? {}), { mode: 0o600 });
  try {
    const bad = unsuccessful(await runAction(action, spec.timeout, ctx, { NYL_RECEIPT_OUTPUTS: receiptFile }), spec.timeout);
    return bad ?? { result: 'removed' };
  } finally {
    // The receipt's outputs: gone once the action ended, as the outputs file is once read.
    rmSync(receiptFile, { force: true });
  }
}

async function check(ctx: DriverContext): Promise<CheckOutcome> {
  const spec = ctx.rendering as CommandSpec;
  if (!spec.check) return { result: 'checked', drift: 'unknown', detail: `${ctx.unit} declares no check: action` };
  // Like the teardown, the check sees what the unit saw: its env (credentials) and workingDir.
  const done = await runAction(inheriting(spec, spec.check), spec.timeout, ctx);
  const bad = unsuccessful(done, spec.timeout, [0, 1]);
  // A check has no effects: one that was cancelled is a failed check, not an uncertain one.
  if (bad) return bad.result === 'uncertain' ? failure(bad.reason, true) : bad;
  return { result: 'checked', drift: (done as ProcessResult).code === 0 ? 'in-sync' : 'drifted' };
}

/** The Command driver's phases; its descriptor (version, recovery, spec) is COMMAND_KIND in ../kinds.ts. */
export const commandDriver: Driver = {
  ...COMMAND_KIND,
  apply,
  teardown,
  check,
};
