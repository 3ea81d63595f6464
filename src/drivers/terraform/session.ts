/**
 * A module ready to run: its scratch copy, initialized once per unit and run, and what `init`
 * configured (the backend, the workspace, the local modules it calls).
 *
 * One session serves every phase of a unit in a run: the plan and the apply of an execution, and
 * a consumer's read of the unit's outputs later in the same run all use the same copy and data
 * directory, so `init` runs once. Sessions are kept per scratch slot (a unit's, in one command's
 * workspace: every run has its own), per project directory (a teardown may run in another commit)
 * and per what `init` depends on (executable, module, backend configuration, workspace); a phase
 * whose unit renders these differently gets a session of its own. A session whose `init` failed
 * is not kept, and one whose directory is gone (its workspace removed) is made again.
 *
 * The tool's environment is the invoking process's, minus TF_WORKSPACE (a workspace is the unit's
 * `workspace` field, part of its key: one inherited from a CI runner's environment would put the
 * state where nobody looks for it), plus automation settings, the data and plugin cache
 * directories, the unit's names and its sensitive variables (`TF_VAR_<name>`, in no file).
 */
import { ENV_VAR_PATTERN } from '../../util/fields';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, normalize, relative, sep } from 'node:path';
import { cacheRoot } from '../../util/cache-dir';
import { canonicalJson } from '../../util/canonical-json';
import { type DriverContext, failure } from '../contract';
import { type BackendIdentity, type BackendRecord, DEFAULT_WORKSPACE, backendIdentity, backendProblem, recordedBackend } from './backend';
import type { ModuleSpec } from './spec';
import { DEFAULT_LOCK_TIMEOUT } from './spec';
import { asProcessText, nylEnv } from '../tool';
import { type Bad, isBad, limitsOf, ModuleTool, type StepLimits } from './tool';
import { type ModuleDir, moduleDir, writeVarFile } from './workdir';

export interface Session {
  dir: ModuleDir;
  spec: ModuleSpec;
  binary: string;
  backend: BackendRecord;
  identity: BackendIdentity;
  workspace: string;
  /** Directories of source outside the module that its local module calls read (project-relative, `dir/`). */
  moduleReads: string[];
  /** The environment of every step (the phase's sensitive variables included). */
  env: NodeJS.ProcessEnv;
  /** `-var-file=FILE` when the phase has plain variables. */
  varArgs: string[];
}

const sessions = new Map<string, Promise<Session | Bad>>();

/** The names of the variables that carry a sensitive value (their pointers are under /variables/). */
function secretVariables(ctx: DriverContext): Set<string> {
  const names = new Set<string>();
  for (const pointer of ctx.secretPointers ?? []) {
    const [top, name] = pointer.split('/').slice(1);
    if (top === 'variables' && name !== undefined) names.add(name.replace(/~1/g, '/').replace(/~0/g, '~'));
  }
  return names;
}

/** The plugin cache: Nyl's environment's, else under Nyl's cache directory. */
function pluginCacheOf(ctx: DriverContext): string {
  return ctx.baseEnv.TF_PLUGIN_CACHE_DIR || join(cacheRoot(ctx.baseEnv), 'terraform-plugins');
}

/** The tool's environment for a phase (see the module header). */
function toolEnv(ctx: DriverContext, dataDir: string, spec: ModuleSpec, secrets: Record<string, string>): NodeJS.ProcessEnv {
  const { TF_WORKSPACE: _inherited, ...base } = ctx.baseEnv;
  return {
    ...base,
    TF_IN_AUTOMATION: '1',
    TF_INPUT: '0',
    CHECKPOINT_DISABLE: '1',
    TF_DATA_DIR: dataDir,
    TF_PLUGIN_CACHE_DIR: pluginCacheOf(ctx),
    ...(spec.workspace ? { TF_WORKSPACE: spec.workspace } : {}),
    ...nylEnv(ctx),
    ...secrets,
  };
}

/**
 * Why a sensitive variable cannot reach the tool, if one cannot: it goes only through the tool's
 * environment as TF_VAR_<name>, and a tool started in a process group of its own gets only names
 * a shell can hold (src/exec/watchdog.ts). Terraform allows `-` in a variable's name; such a
 * variable would silently keep its default.
 */
function unpassableSecret(ctx: DriverContext): string | undefined {
  const name = [...secretVariables(ctx)].find((n) => !ENV_VAR_PATTERN.test(n));
  if (name === undefined) return undefined;
  return `variable ${name} carries a sensitive value, which reaches Terraform only as TF_VAR_${name} in its environment, and a name with characters other than letters, digits and _ cannot go there: rename the variable in the module and in variables (${name.replace(/[^A-Za-z0-9_]/g, '_')})`;
}

/** The phase's variables: the plain ones for the variables file, the sensitive ones as TF_VAR_. */
function splitVariables(ctx: DriverContext, spec: ModuleSpec): { plain: Record<string, unknown>; secrets: Record<string, string> } {
  const sensitive = secretVariables(ctx);
  const plain: Record<string, unknown> = {};
  const secrets: Record<string, string> = {};
  for (const [name, value] of Object.entries(spec.variables ?? {})) {
    // As TF_VAR_ takes a value: a string as it is, anything else as JSON (which HCL reads).
    if (sensitive.has(name)) secrets[`TF_VAR_${name}`] = asProcessText(value);
    else plain[name] = value;
  }
  return { plain, secrets };
}

/**
 * A module directory of the manifest as a project path: Terraform records a call through the
 * mirror's symlinks by its real path in the run's copy of the source, and one inside the copy of
 * the module relative to it. Undefined for anything outside the project (a downloaded module).
 */
function projectPath(dir: ModuleDir, projectDir: string, recorded: string): string | undefined {
  const path = isAbsolute(recorded) ? relative(projectDir, recorded) : relative(dir.mirrorRoot, join(dir.cwd, recorded));
  return path === '' || path.startsWith('..') || isAbsolute(path) ? undefined : path;
}

/**
 * The local modules the module calls outside its own directory, from Terraform's own manifest
 * (`modules/modules.json` in the data directory): project-relative directories.
 */
function moduleReadsOf(dir: ModuleDir, module: string, projectDir: string): string[] {
  let manifest: { Modules?: { Dir?: unknown }[] };
  try {
    manifest = JSON.parse(readFileSync(join(dir.dataDir, 'modules', 'modules.json'), 'utf8')) as typeof manifest;
  } catch {
    return [];
  }
  const own = normalize(module).replace(/[\\/]+$/, '');
  const reads = new Set<string>();
  for (const m of manifest.Modules ?? []) {
    const path = typeof m.Dir === 'string' ? projectPath(dir, projectDir, m.Dir) : undefined;
    if (path === undefined || path === own || path.startsWith(`${own}${sep}`)) continue;
    reads.add(`${path.split(sep).join('/')}/`);
  }
  return [...reads].sort();
}

/** The key of the session a phase may share: what `init` depends on, in which scratch slot and source. */
function sessionKey(ctx: DriverContext, spec: ModuleSpec, binary: string): string {
  return canonicalJson({
    slot: ctx.scratchDir(),
    project: ctx.projectDir,
    binary,
    module: spec.module,
    backendConfig: spec.backendConfig ?? {},
    workspace: spec.workspace ?? null,
  });
}

/** Says so when Nyl runs with a TF_WORKSPACE the tool does not get: a user may expect it to apply. */
function warnInheritedWorkspace(ctx: DriverContext, spec: ModuleSpec): void {
  const inherited = ctx.baseEnv.TF_WORKSPACE;
  if (!inherited || spec.workspace) return;
  const text = `note: TF_WORKSPACE=${inherited} in Nyl's environment is not passed to ${spec.module}: it uses the default workspace; declare workspace: ${inherited} on ${ctx.unit} to use that one`;
  ctx.toolOutput({ bytes: Buffer.from(`${text}\n`), text });
}

/** A fresh copy of the module and `init` run in it; the backend it configured must keep the state. */
async function initialize(ctx: DriverContext, spec: ModuleSpec, binary: string, limits: StepLimits): Promise<Session | Bad> {
  const source = join(ctx.projectDir, spec.module);
  if (!existsSync(source) || !statSync(source).isDirectory()) return failure(`module ${spec.module} is not a directory of the source commit`, true);
  const workspace = spec.workspace ?? DEFAULT_WORKSPACE;
  if (!/^[A-Za-z0-9_.-]+$/.test(workspace))
    return failure(`workspace ${JSON.stringify(workspace)} of ${ctx.unit} is not a name Terraform accepts: use letters, digits, "_", "-" and "."`, false);
  const dir = moduleDir(ctx.projectDir, spec.module, mkdtempSync(join(ctx.scratchDir(), 'tf-')));
  // Made once per session, so that providers are downloaded once, not once per run.
  mkdirSync(pluginCacheOf(ctx), { recursive: true });
  const env = toolEnv(ctx, dir.dataDir, spec, {});
  warnInheritedWorkspace(ctx, spec);
  const tool = new ModuleTool(ctx, binary, dir.cwd, env, limits);
  const backendArgs = Object.entries(spec.backendConfig ?? {}).map(([k, v]) => `-backend-config=${k}=${String(v)}`);
  const init = await tool.step(['init', '-input=false', '-no-color', ...backendArgs], { stream: true });
  if (isBad(init)) return init;
  const backend = recordedBackend(dir.dataDir);
  const problem = backendProblem(backend, spec.module, workspace);
  if (problem || !backend) return failure(problem!, true);
  const moduleReads = moduleReadsOf(dir, spec.module, ctx.projectDir);
  return { dir, spec, binary, backend, identity: backendIdentity(backend), workspace, moduleReads, env, varArgs: [] };
}

/** The limits of an execution of this unit that starts now: its deadline and its lock wait. */
export function executionLimits(ctx: DriverContext): StepLimits {
  const spec = ctx.rendering as ModuleSpec;
  return limitsOf(ctx, spec.timeout, spec.lockTimeout ?? DEFAULT_LOCK_TIMEOUT);
}

/**
 * The unit's session, made once per slot and source (see the module header), with this phase's
 * variables written and its sensitive ones in the environment. `limits` bound its `init`, when
 * this phase is the one that runs it.
 */
export async function openSession(ctx: DriverContext, defaultBinary: string, limits: StepLimits): Promise<Session | Bad> {
  const spec = ctx.rendering as ModuleSpec;
  const unpassable = unpassableSecret(ctx);
  if (unpassable) return failure(unpassable, true);
  const binary = spec.binary ?? defaultBinary;
  const key = sessionKey(ctx, spec, binary);
  let opening = sessions.get(key);
  const known = opening ? await opening : undefined;
  if (!known || isBad(known) || !existsSync(known.dir.dataDir)) {
    opening = initialize(ctx, spec, binary, limits);
    sessions.set(key, opening);
  }
  const session = await opening!;
  if (isBad(session)) {
    sessions.delete(key);
    return session;
  }
  const { plain, secrets } = splitVariables(ctx, spec);
  const varArgs = writeVarFile(session.dir, plain) ? [`-var-file=${session.dir.varFile}`] : [];
  return { ...session, spec, varArgs, env: toolEnv(ctx, session.dir.dataDir, spec, secrets) };
}

/** The tool of one phase of the session, within the execution's limits. */
export function toolOf(ctx: DriverContext, session: Session, limits: StepLimits): ModuleTool {
  return new ModuleTool(ctx, session.binary, session.dir.cwd, session.env, limits);
}
