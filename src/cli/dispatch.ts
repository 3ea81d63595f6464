/**
 * Turns a parsed command into a request, runs its operation with a real Runtime, renders the
 * report (text or exactly one JSON document) and returns the exit code.
 */
import { resolve as resolvePath } from 'node:path';
import { NodeProcessRunner } from '../exec/process';
import { diagnostic, type Diagnostic, fail, NylError } from '../errors/diagnostic';
import { DEFAULT_NETWORK_TIMEOUT_MS, Git } from '../git/git';
import { FORMAT_VERSION, REPORT_API_VERSION, type RefusalDocument, type Report, type SingleEnvironmentReport } from '../report/types';
import { OffsetClock, SystemClock, type Clock } from '../util/clock';
import { parseDuration } from '../util/duration';
import { FaultPoints, type Runtime } from '../util/runtime';
import type { CommandSpec } from './commands';
import { environmentSelectorOf, selectsEnvironments, singleEnvironmentOf, unitsOfSingle } from './environment-options';
import { exitCodeOf } from './exit-code';
import { parseCommand, type ParsedCommand } from './parse';
import { renderLog, renderOutputs, renderShow } from './render-inspect';
import { renderDoctorHost } from './render-doctor';
import { renderGraphDot, renderGraphMermaid, renderGraphText } from './render-graph';
import { renderPlan } from './render-plan';
import { renderDiagnostics, renderMultiEnvironment, renderReconcile, renderStateOperation, renderStatus } from './render-text';
import { installSignalHandlers } from './signals';
import { styled } from './style';
import { stderrPorts } from './terminal';

/** -o: text (or table), json; dot and mermaid for `nyl graph` only. */
type Output = 'text' | 'json' | 'dot' | 'mermaid';

function clockFrom(env: NodeJS.ProcessEnv): Clock {
  // NYL_TEST_NOW pins the start instant (ISO or epoch ms) for tests; time still advances.
  const pinned = env.NYL_TEST_NOW;
  if (pinned) {
    const ms = /^\d+$/.test(pinned) ? Number(pinned) : Date.parse(pinned);
    if (!Number.isNaN(ms)) return new OffsetClock(ms);
  }
  return new SystemClock();
}

/** NYL_GIT_TIMEOUT: how long a fetch, push or ls-remote may take (a duration, at most a day). */
function networkTimeoutFrom(env: NodeJS.ProcessEnv): number {
  const text = env.NYL_GIT_TIMEOUT;
  if (text === undefined || text === '') return DEFAULT_NETWORK_TIMEOUT_MS;
  const ms = parseDuration(text);
  if (ms === undefined || ms <= 0 || ms > 86_400_000) {
    fail('NYL-USAGE', `NYL_GIT_TIMEOUT=${JSON.stringify(text)} is not a duration between 1ms and 1d`, { fix: 'set NYL_GIT_TIMEOUT to a duration such as 30s or 2m, or unset it for the default of 60s' });
  }
  return ms;
}

export function createRuntime(env: NodeJS.ProcessEnv, cancel: AbortSignal): Runtime {
  const runner = new NodeProcessRunner();
  const clock = clockFrom(env);
  return {
    git: new Git(runner, env, networkTimeoutFrom(env)),
    runner,
    clock,
    env,
    cancel,
    faults: new FaultPoints(env, clock),
    ...stderrPorts(process.stderr, env),
  };
}

/** The environment a refusal document names: the one named by -e, else '' (none, or several). */
function environmentOfRefusal(p: ParsedCommand): string {
  if (!selectsEnvironments(p)) return stringOpt(p, 'environment') ?? '';
  try {
    const selector = environmentSelectorOf(p);
    return 'names' in selector && new Set(selector.names).size === 1 ? selector.names[0]! : '';
  } catch {
    return '';
  }
}

function stringOpt(p: ParsedCommand, name: string): string | undefined {
  const v = p.values[name];
  return typeof v === 'string' ? v : undefined;
}

function requireEnvironment(p: ParsedCommand): string {
  if (selectsEnvironments(p)) return singleEnvironmentOf(p);
  const e = stringOpt(p, 'environment');
  if (!e) throw new NylError(diagnostic('NYL-USAGE', 'error', `nyl ${p.spec.words.join(' ')} needs -e <environment>`, { fix: 'pass -e <environment>' }));
  return e;
}

function requireUnit(p: ParsedCommand): string {
  const unit = stringOpt(p, 'unit');
  if (!unit) throw new NylError(diagnostic('NYL-USAGE', 'error', `nyl ${p.spec.words.join(' ')} needs --unit <name>`, { fix: 'pass --unit <name>' }));
  return unit;
}

/** --wait-lease in milliseconds; parseCommand checked it is a duration within its bounds. */
function waitMs(p: ParsedCommand): number | undefined {
  const text = stringOpt(p, 'wait-lease');
  return text === undefined ? undefined : parseDuration(text);
}

function outputOf(p: ParsedCommand): Output {
  const o = stringOpt(p, 'output') ?? 'text';
  const graph = p.spec.words[0] === 'graph';
  if (o === 'json') return 'json';
  if (o === 'text' || o === 'table') return 'text';
  if (graph && (o === 'dot' || o === 'mermaid')) return o;
  throw new NylError(diagnostic('NYL-USAGE', 'error', `-o ${o} is not an output format${graph ? '' : ` of nyl ${p.spec.words.join(' ')}`}`, { fix: graph ? 'pass -o text, -o dot, -o mermaid or -o json' : 'pass -o text, -o table or -o json' }));
}

/** What every environment command's request carries; `environment` given for a run over several. */
function common(p: ParsedCommand, environment?: string) {
  const req: { path: string; environment: string; author?: string; reason?: string; local?: boolean } = { path: p.path, environment: environment ?? requireEnvironment(p) };
  const author = stringOpt(p, 'author');
  if (author !== undefined) req.author = author;
  const reason = stringOpt(p, 'reason');
  if (reason !== undefined) req.reason = reason;
  if (p.values.local === true) req.local = true;
  return req;
}

/** `nyl state move`: each option naming the old location defaults to the configured value. */
async function stateMoveOf(rt: Runtime, p: ParsedCommand): Promise<Report> {
  const { stateMove } = await import('../operations/state-move');
  const w = waitMs(p);
  const named: Record<string, string | undefined> = {
    from: stringOpt(p, 'from'),
    desiredRef: stringOpt(p, 'desired-ref'),
    observedRef: stringOpt(p, 'observed-ref'),
    statePath: stringOpt(p, 'state-path'),
    coordinationRefs: stringOpt(p, 'coordination-refs'),
  };
  const from = Object.fromEntries(Object.entries(named).filter(([, v]) => v !== undefined));
  return stateMove(rt, { ...common(p), ...from, ...(w !== undefined ? { waitMs: w } : {}) });
}

/** `nyl state delete`; with --teardown its first step is `nyl teardown --all`. */
async function stateDeleteOf(rt: Runtime, p: ParsedCommand): Promise<Report> {
  const { stateDelete } = await import('../operations/state-delete');
  const { teardownAll } = await import('../operations/reconcile');
  const w = waitMs(p);
  const source = stringOpt(p, 'source');
  const req = {
    ...common(p),
    teardown: p.values.teardown === true,
    allowDependents: p.values['allow-dependents'] === true,
    allowIncomplete: p.values['allow-incomplete'] === true,
    ...(source !== undefined ? { source } : {}),
    ...(w !== undefined ? { waitMs: w } : {}),
  };
  return stateDelete(rt, req, teardownAll);
}

/** `nyl state restore`: --to and --reason are checked by the operation. */
async function stateRestoreOf(rt: Runtime, p: ParsedCommand): Promise<Report> {
  const { stateRestore } = await import('../operations/state-restore');
  const w = waitMs(p);
  const to = stringOpt(p, 'to');
  return stateRestore(rt, { ...common(p), ...(to !== undefined ? { to } : {}), ...(w !== undefined ? { waitMs: w } : {}) });
}

/**
 * The environment a command about one environment runs for, and its `--unit` names there: the
 * environment of a single-environment command line, or each of a selection in turn.
 */
interface Target {
  environment: string;
  units: string[];
}

/** `nyl plan`: reads only, so it takes neither --author nor a reason. */
async function planOf(rt: Runtime, p: ParsedCommand, { environment, units }: Target): Promise<SingleEnvironmentReport> {
  const { plan } = await import('../operations/plan');
  const source = stringOpt(p, 'source');
  const worktree = await worktreeOf(p);
  return plan(rt, { path: p.path, environment, ...(units.length > 0 ? { units } : {}), ...(source !== undefined ? { source } : {}), ...(worktree ? { worktree } : {}) });
}

/** The options --worktree conflicts with, by their value names (a repeated -e is checked apart). */
const WORKTREE_CONFLICTS: [string, string][] = [['source', '--source'], ['labels', '-l'], ['group', '-g']];

/** --worktree: one named environment, from the working files (exit 1 NYL-USAGE on a conflict). */
async function worktreeOf(p: ParsedCommand): Promise<boolean> {
  if (p.values.worktree !== true) return false;
  // Loaded with the operation anyway: every --worktree command opens its environment there.
  const { worktreeConflict } = await import('../operations/context');
  for (const [name, flag] of WORKTREE_CONFLICTS) if (p.values[name] !== undefined) worktreeConflict(flag);
  const envs = p.values.environment;
  if (Array.isArray(envs) && envs.length > 1) worktreeConflict('more than one -e');
  return true;
}

async function verifyOf(rt: Runtime, p: ParsedCommand, { environment, units }: Target): Promise<SingleEnvironmentReport> {
  const { verify } = await import('../operations/verify');
  const w = waitMs(p);
  return verify(rt, { ...common(p, environment), ...(units.length > 0 ? { units } : {}), ...(w !== undefined ? { waitMs: w } : {}) });
}

async function statusOf(rt: Runtime, p: ParsedCommand, { environment }: Target): Promise<SingleEnvironmentReport> {
  const { status } = await import('../operations/status');
  return status(rt, common(p, environment));
}

/** True when the command line selects more than one environment, or any by -l or -g. */
function selectsSeveral(p: ParsedCommand): boolean {
  const selector = environmentSelectorOf(p);
  return !('names' in selector) || new Set(selector.names).size > 1;
}

/** The `--unit`/`--units` names as given (`UNIT` or `ENV/UNIT`). */
function unitNames(p: ParsedCommand): string[] {
  return listOpt(p, 'unit', 'units');
}

/**
 * The options of reconcile and teardown that are wrong whatever the environment, checked once,
 * before the first environment runs: a multi-environment run refuses them as a whole.
 */
function checkRunOptions(p: ParsedCommand): void {
  const units = unitNames(p);
  const command = p.spec.words[0];
  if (command === 'reconcile') {
    leavingConflict(p, units);
    reapplyOf(p, units);
  }
  if (command === 'teardown') teardownScope(p, units);
}

/**
 * A command that makes sense across environments (reconcile, teardown, plan, status, verify):
 * over the one environment named, or over each selected one as its own command.
 */
async function selectingCommandOf(rt: Runtime, p: ParsedCommand): Promise<Report> {
  checkRunOptions(p);
  if (selectsSeveral(p)) return severalOf(rt, p);
  const environment = requireEnvironment(p);
  return targetCommandOf(rt, p, { environment, units: unitsOfSingle(environment, unitNames(p)) });
}

/** Over several environments: each its own command, in the order and under the gate of its command. */
async function severalOf(rt: Runtime, p: ParsedCommand): Promise<Report> {
  const { runEnvironments } = await import('../operations/multi-environment');
  await worktreeOf(p);
  const units = unitNames(p);
  const source = stringOpt(p, 'source');
  const request = {
    path: p.path,
    selector: environmentSelectorOf(p),
    environmentConcurrency: positiveInt(p, 'environment-concurrency', 1),
    ...(units.length > 0 ? { units } : {}),
    ...(source !== undefined ? { source } : {}),
    ...(p.values.local === true ? { local: true } : {}),
  };
  const operation = p.spec.words[0] as 'reconcile' | 'teardown' | 'plan' | 'status' | 'verify';
  return runEnvironments(rt, operation, request, (environment, named) => targetCommandOf(rt, p, { environment, units: named ?? [] }));
}

function targetCommandOf(rt: Runtime, p: ParsedCommand, target: Target): Promise<SingleEnvironmentReport> {
  switch (p.spec.words[0]) {
    case 'reconcile':
      return reconcileOf(rt, p, target);
    case 'teardown':
      return teardownOf(rt, p, target);
    case 'plan':
      return planOf(rt, p, target);
    case 'status':
      return statusOf(rt, p, target);
    default:
      return verifyOf(rt, p, target);
  }
}

function leavingConflict(p: ParsedCommand, units: string[]): void {
  if (p.values.leaving === true && units.length > 0) {
    fail('NYL-USAGE', '--leaving conflicts with --unit/--units: --unit does no lifecycle work, --leaving only lifecycle work', { fix: 'pass either --leaving or --unit, not both' });
  }
}

/** `nyl reconcile`: its unit selection, lifecycle and approval options. */
async function reconcileOf(rt: Runtime, p: ParsedCommand, { environment, units }: Target): Promise<SingleEnvironmentReport> {
  const { reconcile } = await import('../operations/reconcile');
  const worktree = await worktreeOf(p);
  return reconcile(rt, {
    ...runOptions(p, environment),
    ...(worktree ? { worktree } : {}),
    allowTeardown: p.values['allow-teardown'] === true,
    leaving: p.values.leaving === true,
    ...(units.length > 0 ? { units } : {}),
    ...(reapplyOf(p, units) ? { reapply: true } : {}),
    approval: approvalOptions(p),
  });
}

/** `nyl teardown`: the units named for the environment, or every unit with --all. */
async function teardownOf(rt: Runtime, p: ParsedCommand, { environment, units }: Target): Promise<SingleEnvironmentReport> {
  const { reconcile } = await import('../operations/reconcile');
  return reconcile(rt, { ...runOptions(p, environment), teardown: { units: p.values.all === true ? 'all' : units } });
}

/** `nyl recover`: the import of a broken lease's run, or one unit with --retry / --accept. */
async function recoverOf(rt: Runtime, p: ParsedCommand): Promise<Report> {
  const { recover } = await import('../operations/recover');
  const w = waitMs(p);
  const unit = stringOpt(p, 'unit');
  const accept = stringOpt(p, 'accept');
  return recover(rt, {
    ...common(p),
    retry: p.values.retry === true,
    ...(unit !== undefined ? { unit } : {}),
    ...(accept !== undefined ? { accept } : {}),
    ...(w !== undefined ? { waitMs: w } : {}),
  });
}

async function runOperation(rt: Runtime, p: ParsedCommand): Promise<Report> {
  const name = p.spec.words.join(' ');
  switch (name) {
    case 'state init': {
      const { stateInit } = await import('../operations/state-init');
      const w = waitMs(p);
      return stateInit(rt, { ...common(p), fresh: p.values.fresh === true, ...(w !== undefined ? { waitMs: w } : {}) });
    }
    case 'state delete':
      return stateDeleteOf(rt, p);
    case 'state reset': {
      const { stateReset } = await import('../operations/state-reset');
      return stateReset(rt, { ...common(p), discard: listOpt(p, 'discard'), discardAll: p.values['discard-all'] === true });
    }
    case 'status':
    case 'reconcile':
    case 'teardown':
    case 'plan':
    case 'verify':
      return selectingCommandOf(rt, p);
    case 'recover':
      return recoverOf(rt, p);
    case 'hold':
    case 'resume': {
      const w = waitMs(p);
      const req = { ...common(p), unit: requireUnit(p), ...(w !== undefined ? { waitMs: w } : {}) };
      if (name === 'hold') {
        const { hold } = await import('../operations/hold');
        return hold(rt, req);
      }
      const { resume } = await import('../operations/resume');
      return resume(rt, req);
    }
    case 'state move':
      return stateMoveOf(rt, p);
    case 'state forget': {
      const { forget } = await import('../operations/forget');
      const w = waitMs(p);
      return forget(rt, { ...common(p), unit: requireUnit(p), ...(w !== undefined ? { waitMs: w } : {}) });
    }
    case 'state restore':
      return stateRestoreOf(rt, p);
    case 'log':
    case 'show':
    case 'outputs':
      return inspectOf(rt, p);
    case 'doctor host':
      return doctorHostOf(rt, p);
    case 'graph': {
      const { graph } = await import('../operations/graph');
      return graph(rt, readRequestOf(p));
    }
    case 'lease break': {
      const { leaseBreak } = await import('../operations/lease-break');
      const w = waitMs(p);
      return leaseBreak(rt, { ...common(p), ...(w !== undefined ? { waitMs: w } : {}) });
    }
    default:
      throw new Error(`no operation for ${name}`);
  }
}

/** `nyl log`, `nyl show` and `nyl outputs`: read state only, so they take neither --author nor a reason. */
/** What the read-only commands (log, show, outputs, graph) open: the project, one environment, --local. */
function readRequestOf(p: ParsedCommand) {
  return { path: p.path, environment: requireEnvironment(p), ...(p.values.local === true ? { local: true } : {}) };
}

async function inspectOf(rt: Runtime, p: ParsedCommand): Promise<Report> {
  const req = readRequestOf(p);
  const unit = stringOpt(p, 'unit');
  if (p.spec.words[0] === 'show') {
    const { show } = await import('../operations/show');
    return show(rt, { ...req, unit: requireUnit(p) });
  }
  if (p.spec.words[0] === 'outputs') {
    const { outputs } = await import('../operations/outputs');
    return outputs(rt, { ...req, ...(unit !== undefined ? { unit } : {}) });
  }
  const { log } = await import('../operations/log');
  const count = stringOpt(p, 'max-count');
  return log(rt, { ...req, ...(unit !== undefined ? { unit } : {}), ...(count !== undefined ? { limit: countOf(count) } : {}) });
}

/** `nyl doctor host URL [--prefix P]`: the URL is required; a prefix is a ref namespace ending in '/'. */
async function doctorHostOf(rt: Runtime, p: ParsedCommand): Promise<Report> {
  if (!p.pathGiven) fail('NYL-USAGE', 'nyl doctor host needs the URL of a repository on the host', { fix: 'pass a URL such as https://git.example.com/team/scratch.git: nyl doctor host <url>' });
  const prefix = stringOpt(p, 'prefix');
  if (prefix !== undefined && !/^refs\/(?:[A-Za-z0-9._-]+\/)+$/.test(prefix)) {
    fail('NYL-USAGE', `--prefix ${prefix} is not a ref namespace such as refs/nyl/`, { fix: 'pass --prefix refs/<name>/ ending in a slash, such as --prefix refs/heads/nyl-run/' });
  }
  const { doctorHost } = await import('../operations/doctor-host');
  return doctorHost(rt, { url: p.path, ...(prefix !== undefined ? { prefix } : {}) });
}

/** -n: a count of entries, 0 for all. */
function countOf(text: string): number {
  if (!/^\d+$/.test(text)) throw new NylError(diagnostic('NYL-USAGE', 'error', `-n ${text} is not a count`, { fix: 'pass -n <count> with a whole number, or -n 0 for every entry' }));
  return Number(text);
}

function render(report: Report, output: Output): string {
  switch (report.kind) {
    case 'DoctorHostReport':
      return renderDoctorHost(report);
    case 'GraphReport':
      return output === 'dot' ? renderGraphDot(report) : output === 'mermaid' ? renderGraphMermaid(report) : renderGraphText(report);
    case 'MultiEnvironmentReport':
      return renderMultiEnvironment(report, renderSingle);
    case 'LogReport':
      return renderLog(report);
    case 'ShowReport':
      return renderShow(report);
    case 'OutputsReport':
      return renderOutputs(report);
    default:
      return renderSingle(report);
  }
}

function renderSingle(report: SingleEnvironmentReport): string {
  switch (report.kind) {
    case 'StatusReport':
      return renderStatus(report);
    case 'ReconcileReport':
      return report.operation === 'plan' ? renderPlan(report) : renderReconcile(report);
    default:
      return renderStateOperation(report);
  }
}

/** What reconcile and teardown runs share: output controls, concurrency, --source, --wait-lease, --allow-dependents/-incomplete. */
function runOptions(p: ParsedCommand, environment?: string) {
  const w = waitMs(p);
  const source = stringOpt(p, 'source');
  const logDir = stringOpt(p, 'unit-log-dir');
  return {
    ...common(p, environment),
    failFast: p.values['fail-fast'] === true,
    quietUnitOutput: p.values['quiet-unit-output'] === true,
    ...(logDir !== undefined ? { unitLogDir: resolvePath(logDir) } : {}),
    concurrency: positiveInt(p, 'concurrency', 4),
    allowDependents: p.values['allow-dependents'] === true,
    allowIncomplete: p.values['allow-incomplete'] === true,
    ...(source !== undefined ? { source } : {}),
    ...(w !== undefined ? { waitMs: w } : {}),
  };
}

/** --reapply needs --unit and --reason: it runs named units again on purpose, and says why. */
function reapplyOf(p: ParsedCommand, units: string[]): boolean {
  if (p.values.reapply !== true) return false;
  if (units.length === 0 || !stringOpt(p, 'reason')?.trim()) {
    fail('NYL-USAGE', '--reapply needs --unit and --reason: it executes the named units again although their receipts are current', { fix: 'pass --reapply --unit <name> --reason "<why>"' });
  }
  return true;
}

/** --approve, --approve-all, --approved-by, --approval-source, as given (checked against the environment later). */
function approvalOptions(p: ParsedCommand) {
  const source = stringOpt(p, 'approval-source');
  return { approve: listOpt(p, 'approve'), approveAll: p.values['approve-all'] === true, approvedBy: listOpt(p, 'approved-by'), ...(source !== undefined ? { approvalSource: source } : {}) };
}

/** `nyl teardown`: exactly one of --unit U... and --all. */
function teardownScope(p: ParsedCommand, units: string[]): void {
  const all = p.values.all === true;
  if (all === units.length > 0) {
    fail('NYL-USAGE', all ? 'nyl teardown takes --unit or --all, not both' : 'nyl teardown needs --unit <name> or --all', { fix: 'pass --unit <name> (repeatable) to tear down those units, or --all to tear down every unit' });
  }
}

function listOpt(p: ParsedCommand, ...names: string[]): string[] {
  const out: string[] = [];
  for (const n of names) {
    const v = p.values[n];
    const items = Array.isArray(v) ? v : typeof v === 'string' ? [v] : [];
    // parseCommand refused empty names, so every item is one.
    for (const item of items) out.push(...item.split(',').map((s) => s.trim()));
  }
  return out;
}

function positiveInt(p: ParsedCommand, name: string, fallback: number): number {
  const text = stringOpt(p, name);
  if (text === undefined) return fallback;
  if (!/^[1-9]\d*$/.test(text)) throw new NylError(diagnostic('NYL-USAGE', 'error', `--${name} ${text} is not a positive integer`, { fix: `pass --${name} <n> with n >= 1` }));
  return Number(text);
}

/**
 * Did the command line ask for JSON? Read from the raw arguments, so that a command line the
 * parser refuses (an unknown option, a missing value) still gets exactly one JSON document.
 */
export function asksForJson(args: readonly string[]): boolean {
  return args.some((a, i) => ((a === '-o' || a === '--output') && args[i + 1] === 'json') || a === '-ojson' || a === '-o=json' || a === '--output=json');
}

/** The one JSON document of a command that refused before it ran (a `kind` of every command's family). */
export function refusalDocument(
  kind: Report['kind'],
  operation: string | undefined,
  environment: string,
  diagnostics: Diagnostic[],
  details: Record<string, unknown> = {},
): RefusalDocument {
  return {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind,
    ...(operation !== undefined ? { operation } : {}),
    environment,
    result: 'refused',
    errors: diagnostics,
    warnings: [],
    notes: [],
    details,
  };
}

/** The kind of the read-only inspection commands' reports, by command. */
const INSPECT_KINDS: Record<string, Report['kind']> = { log: 'LogReport', show: 'ShowReport', outputs: 'OutputsReport', graph: 'GraphReport', doctor: 'DoctorHostReport' };

function reportKindOf(spec: CommandSpec): Report['kind'] {
  const inspect = INSPECT_KINDS[spec.words[0]!];
  if (inspect) return inspect;
  return spec.words[0] === 'status' ? 'StatusReport' : ['reconcile', 'teardown', 'plan'].includes(spec.words[0]!) ? 'ReconcileReport' : 'StateOperationReport';
}

export async function dispatch(spec: CommandSpec, rest: string[]): Promise<number> {
  const command = spec.words.join(' ');
  const signals = installSignalHandlers();
  let output: Output = asksForJson(rest) ? 'json' : 'text';
  let environment = '';
  try {
    const parsed = parseCommand(spec, rest);
    output = outputOf(parsed);
    environment = environmentOfRefusal(parsed);
    // A plain copy: process.env is a view of the C environment, slow to spread for every tool.
    const rt = createRuntime({ ...process.env }, signals.signal);
    // The web view serves until a signal instead of producing one report.
    if (command === 'ui') return await (await import('./ui-command')).runUi(rt, parsed);
    const report = await runOperation(rt, parsed);
    const code = exitCodeOf(report, report.errors, command);
    if (output === 'json') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else process.stdout.write(styled(process.stdout, () => render(report, output)));
    // A drawing on stdout is for its tool: what went wrong goes to stderr.
    if ((output === 'dot' || output === 'mermaid') && report.errors.length + report.warnings.length > 0) process.stderr.write(`${renderDiagnostics([...report.errors, ...report.warnings])}\n`);
    return code;
  } catch (error) {
    const diagnostics: Diagnostic[] =
      error instanceof NylError
        ? error.diagnostics
        : [diagnostic('NYL-INTERNAL', 'error', (error as Error)?.stack ?? String(error))];
    const details = error instanceof NylError ? (error.details ?? {}) : {};
    if (output === 'json') {
      const doc = refusalDocument(reportKindOf(spec), spec.words[0] === 'status' ? undefined : (spec.operation ?? spec.words.join('-')), environment, diagnostics, details);
      process.stdout.write(`${JSON.stringify(doc, null, 2)}\n`);
    } else {
      process.stderr.write(`${styled(process.stderr, () => renderDiagnostics(diagnostics))}\n`);
    }
    return exitCodeOf(undefined, diagnostics, command);
  } finally {
    signals.dispose();
  }
}
