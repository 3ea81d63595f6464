/**
 * The commands that make sense across environments (reconcile, teardown, plan, status, verify):
 * their options checked once, then the one environment named, or each selected one as its own
 * command (operations/multi-environment.ts).
 */
import { resolve as resolvePath } from 'node:path';
import { fail } from '../errors/diagnostic';
import type { MultiEnvironmentOperation } from '../operations/multi-environment';
import type { Report, SingleEnvironmentReport } from '../report/types';
import type { Runtime } from '../util/runtime';
import { environmentSelectorOf, unitsOfSingle } from './environment-options';
import type { ParsedCommand } from './parse';
import { common, listOpt, positiveInt, requireEnvironment, stringOpt, waitMs } from './command-options';

/**
 * The environment a command about one environment runs for, and its `--unit` names there: the
 * environment of a single-environment command line, or each of a selection in turn.
 */
interface Target {
  environment: string;
  units: string[];
}

/**
 * A command that makes sense across environments (reconcile, teardown, plan, status, verify):
 * over the one environment named, or over each selected one as its own command.
 */
export async function selectingCommandOf(rt: Runtime, p: ParsedCommand): Promise<Report> {
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
  const operation = p.spec.words[0] as MultiEnvironmentOperation;
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

/** `nyl plan`: reads only, so it takes neither --author nor a reason. */
async function planOf(rt: Runtime, p: ParsedCommand, { environment, units }: Target): Promise<SingleEnvironmentReport> {
  const { plan } = await import('../operations/plan');
  const source = stringOpt(p, 'source');
  const worktree = await worktreeOf(p);
  return plan(rt, { path: p.path, environment, ...(units.length > 0 ? { units } : {}), ...(source !== undefined ? { source } : {}), ...(worktree ? { worktree } : {}) });
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

function leavingConflict(p: ParsedCommand, units: string[]): void {
  if (p.values.leaving === true && units.length > 0) {
    fail('NYL-USAGE', '--leaving conflicts with --unit/--units: --unit does no lifecycle work, --leaving only lifecycle work', { fix: 'pass either --leaving or --unit, not both' });
  }
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
