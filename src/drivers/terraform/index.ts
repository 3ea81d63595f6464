/**
 * The Terraform and OpenTofu driver: one driver, two kinds, the same commands; `spec.binary`
 * overrides the kind's default executable (`terraform`, `tofu`).
 *
 * Every phase runs in a fresh scratch copy of the module at the source commit (./workdir.ts) with
 * its own TF_DATA_DIR, after `init -input=false -no-color [-backend-config=K=V ...]`:
 * - plan: `plan -input=false -no-color -out=FILE -detailed-exitcode [-var-file=FILE]` (0: no
 *   changes, 2: changes), then `show -json FILE`, reduced to the plan's digest and summary
 *   (./plan-json.ts);
 * - apply: `apply -input=false -no-color FILE` of exactly that saved plan, never a new one (a plan
 *   without changes runs no apply), then `output -json`: the receipt's outputs;
 * - teardown: `destroy -auto-approve -input=false -no-color [-var-file=FILE]`;
 * - check: `plan -refresh-only -detailed-exitcode`: 0 in sync, 2 drifted;
 * - readOutputs: `output -json`, for a consumer of a sensitive output: the receipt records only
 *   digests of sensitive outputs, the backend keeps the values.
 *
 * Variables go in a generated variables file, never on a command line; a variable that carries
 * another unit's sensitive output goes as `TF_VAR_<name>` in the tool's environment instead, so it
 * is in no file. Terraform keeps its state in the module's backend: a module must declare one that
 * outlives the scratch copy (a remote backend, or `local` with an absolute `path`), else the unit
 * fails before it plans. Providers are cached across runs in TF_PLUGIN_CACHE_DIR (default: the
 * Nyl cache's `terraform-plugins`). Failures carry the tool's `Error:` diagnostics (./tool.ts).
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { cacheRoot } from '../../util/cache-dir';
import { type ApplyOutcome, type CheckOutcome, type Driver, type DriverContext, type DriverPlan, type Failure, failure, type KindDescriptor, type PlanOutcome, type ReadOutcome, type TeardownOutcome, type Uncertain } from '../contract';
import { OPENTOFU_KIND, TERRAFORM_KIND } from '../kinds';
import { outputsOf, planOf } from './plan-json';
import { ModuleTool, type StepResult } from './tool';
import { type ModuleDir, moduleDir, writeVarFile } from './workdir';

interface ModuleSpec {
  module: string;
  variables?: Record<string, unknown>;
  binary?: string;
  backendConfig?: Record<string, string | number | boolean>;
  timeout?: string;
}

/** A module ready to run: its directory, its tool, and the `-var-file` argument if any. */
interface Session {
  dir: ModuleDir;
  tool: ModuleTool;
  varArgs: string[];
}

type Bad = Failure | Uncertain;

function isBad(x: object): x is Bad {
  return 'result' in x && ((x as Bad).result === 'failed' || (x as Bad).result === 'uncertain');
}

/** The names of the variables that carry a sensitive value (their pointers are under /variables/). */
function secretVariables(ctx: DriverContext): Set<string> {
  const names = new Set<string>();
  for (const pointer of ctx.secretPointers ?? []) {
    const [top, name] = pointer.split('/').slice(1);
    if (top === 'variables' && name !== undefined) names.add(name.replace(/~1/g, '/').replace(/~0/g, '~'));
  }
  return names;
}

/** A variable's value as TF_VAR_ takes it: a string as it is, anything else as JSON (which HCL reads). */
function envValue(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** The tool's environment: the invoking process's, automation settings, the data and plugin cache directories, the unit's names and its sensitive variables. */
function toolEnv(ctx: DriverContext, dir: ModuleDir, secrets: Record<string, string>): NodeJS.ProcessEnv {
  const pluginCache = ctx.baseEnv.TF_PLUGIN_CACHE_DIR || join(cacheRoot(ctx.baseEnv), 'terraform-plugins');
  mkdirSync(pluginCache, { recursive: true });
  return {
    ...ctx.baseEnv,
    TF_IN_AUTOMATION: '1',
    TF_INPUT: '0',
    CHECKPOINT_DISABLE: '1',
    TF_DATA_DIR: dir.dataDir,
    TF_PLUGIN_CACHE_DIR: pluginCache,
    NYL_ENVIRONMENT: ctx.environment,
    NYL_UNIT: ctx.unit,
    NYL_RUN: ctx.run,
    NYL_UID: ctx.uid,
    ...secrets,
  };
}

/**
 * Why the backend `init` configured cannot keep the module's state past this run: none declared
 * (Terraform would write it into the scratch copy), or a local one without an absolute path.
 */
function backendProblem(dir: ModuleDir, module: string): string | undefined {
  const recorded = join(dir.dataDir, 'terraform.tfstate');
  const advice = 'declare a backend in the module (terraform { backend "s3" {...} }, or backend "local" {} with backendConfig: {path: /an/absolute/path})';
  if (!existsSync(recorded)) return `module ${module} declares no backend, so its state would be written into Nyl's scratch copy and lost after the run; ${advice}`;
  let backend: { type?: string; config?: { path?: unknown } } | undefined;
  try {
    backend = (JSON.parse(readFileSync(recorded, 'utf8')) as { backend?: typeof backend }).backend;
  } catch {
    return undefined;
  }
  if (backend?.type !== 'local') return undefined;
  const path = backend.config?.path;
  if (typeof path === 'string' && isAbsolute(path)) return undefined;
  return `module ${module} keeps its state in a local backend at ${typeof path === 'string' ? `the relative path ${path}` : 'its default path'}, inside Nyl's scratch copy, where it would be lost after the run; give backendConfig.path an absolute path, or ${advice}`;
}

/** A fresh copy of the module for one phase, its tool, and `init` run in it. */
async function openSession(ctx: DriverContext, defaultBinary: string, phase: string): Promise<Session | Bad> {
  const spec = ctx.rendering as unknown as ModuleSpec;
  const source = join(ctx.projectDir, spec.module);
  if (!existsSync(source) || !statSync(source).isDirectory()) return failure(`module ${spec.module} is not a directory of the source commit`, true);
  const dir = moduleDir(ctx.projectDir, spec.module, mkdtempSync(join(ctx.scratchDir(), `${phase}-`)));
  const sensitive = secretVariables(ctx);
  const plain: Record<string, unknown> = {};
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.variables ?? {})) {
    if (sensitive.has(name)) secrets[`TF_VAR_${name}`] = envValue(value);
    else plain[name] = value;
  }
  const varArgs = writeVarFile(dir, plain) ? [`-var-file=${dir.varFile}`] : [];
  const tool = new ModuleTool(ctx, spec.binary ?? defaultBinary, dir.cwd, toolEnv(ctx, dir, secrets), spec.timeout);
  const backendArgs = Object.entries(spec.backendConfig ?? {}).map(([k, v]) => `-backend-config=${k}=${String(v)}`);
  const init = await tool.step(['init', '-input=false', '-no-color', ...backendArgs], { stream: true });
  if (isBad(init)) return init;
  const problem = backendProblem(dir, spec.module);
  return problem ? failure(problem, true) : { dir, tool, varArgs };
}

/** What apply needs of a plan this driver made: its session, with the saved plan in it. */
interface PlanArtifact {
  planFile: string;
  session: Session;
}

async function planIn(session: Session): Promise<DriverPlan | Bad> {
  const { tool, dir, varArgs } = session;
  const planned = await tool.step(['plan', '-input=false', '-no-color', `-out=${dir.planFile}`, '-detailed-exitcode', ...varArgs], { stream: true, ok: [0, 2] });
  if (isBad(planned)) return planned;
  const shown = await tool.step(['show', '-json', dir.planFile]);
  if (isBad(shown)) return shown;
  const plan = planOf(shown.stdout, planned.code, dir.planFile);
  if ('problem' in plan) return failure(`${tool.binary} ${plan.problem}`, true);
  const artifact: PlanArtifact = { planFile: dir.planFile, session };
  return { ...plan, artifact };
}

async function outputsIn(session: Session): Promise<ReadOutcome | Bad> {
  const read = await session.tool.step(['output', '-json']);
  if (isBad(read)) return read;
  const outputs = outputsOf((read as StepResult).stdout);
  return 'problem' in outputs ? failure(`${session.tool.binary} ${outputs.problem}`, true) : { result: 'read', outputs };
}

async function plan(ctx: DriverContext, defaultBinary: string): Promise<PlanOutcome> {
  const session = await openSession(ctx, defaultBinary, 'plan');
  if (isBad(session)) return asFailure(session);
  const planned = await planIn(session);
  return isBad(planned) ? asFailure(planned) : { result: 'planned', plan: planned };
}

/** The plan to apply: the one given, when this driver made it in this process, else a new one. */
async function planToApply(ctx: DriverContext, defaultBinary: string, given: DriverPlan | undefined): Promise<DriverPlan | Bad> {
  if ((given?.artifact as PlanArtifact | undefined)?.session) return given!;
  const session = await openSession(ctx, defaultBinary, 'apply');
  return isBad(session) ? session : planIn(session);
}

async function apply(ctx: DriverContext, defaultBinary: string, given?: DriverPlan): Promise<ApplyOutcome> {
  const planned = await planToApply(ctx, defaultBinary, given);
  if (isBad(planned)) return planned;
  const { session, planFile } = planned.artifact as PlanArtifact;
  if (planned.changes !== 'none') {
    const applied = await session.tool.step(['apply', '-input=false', '-no-color', planFile], { stream: true, effects: true });
    if (isBad(applied)) return applied;
  }
  const read = await outputsIn(session);
  return read.result === 'read' ? { result: 'receipt', outputs: read.outputs } : read;
}

async function teardown(ctx: DriverContext, defaultBinary: string): Promise<TeardownOutcome> {
  const session = await openSession(ctx, defaultBinary, 'destroy');
  if (isBad(session)) return session;
  const destroyed = await session.tool.step(['destroy', '-auto-approve', '-input=false', '-no-color', ...session.varArgs], { stream: true, effects: true });
  return isBad(destroyed) ? destroyed : { result: 'removed' };
}

async function check(ctx: DriverContext, defaultBinary: string): Promise<CheckOutcome> {
  const session = await openSession(ctx, defaultBinary, 'check');
  if (isBad(session)) return asFailure(session);
  const checked = await session.tool.step(['plan', '-refresh-only', '-detailed-exitcode', '-input=false', '-no-color', ...session.varArgs], { stream: true, ok: [0, 2] });
  if (isBad(checked)) return asFailure(checked);
  return { result: 'checked', drift: checked.code === 0 ? 'in-sync' : 'drifted' };
}

async function readOutputs(ctx: DriverContext, defaultBinary: string): Promise<ReadOutcome> {
  const session = await openSession(ctx, defaultBinary, 'read');
  if (isBad(session)) return asFailure(session);
  const read = await outputsIn(session);
  return isBad(read) ? asFailure(read) : read;
}

/** The phases of a module driver whose executable defaults to `defaultBinary`. */
function moduleDriver(kind: KindDescriptor, defaultBinary: string): Driver {
  return {
    ...kind,
    plan: (ctx) => plan(ctx, defaultBinary),
    apply: (ctx, given) => apply(ctx, defaultBinary, given),
    teardown: (ctx) => teardown(ctx, defaultBinary),
    check: (ctx) => check(ctx, defaultBinary),
    readOutputs: (ctx) => readOutputs(ctx, defaultBinary),
  };
}

/** A phase without effects that was cancelled failed; it is not uncertain. */
function asFailure(bad: Bad): Failure {
  return bad.result === 'failed' ? bad : failure(bad.reason, true);
}

export const terraformDriver: Driver = moduleDriver(TERRAFORM_KIND, 'terraform');
export const openTofuDriver: Driver = moduleDriver(OPENTOFU_KIND, 'tofu');
