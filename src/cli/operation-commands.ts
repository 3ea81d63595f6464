/**
 * Every command line to its operation's request and the operation's report: the commands of one
 * environment (state, hold, recover, lease, log, show, outputs, graph) and `nyl doctor host`; the
 * commands across environments go through run-commands.ts.
 */
import { fail } from '../errors/diagnostic';
import type { Report } from '../report/types';
import type { Runtime } from '../util/runtime';
import type { ParsedCommand } from './parse';
import { common, countOf, listOpt, requireEnvironment, requireUnit, stringOpt, waitMs } from './command-options';
import { selectingCommandOf } from './run-commands';

export async function runOperation(rt: Runtime, p: ParsedCommand): Promise<Report> {
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
    case 'state reseal': {
      const { reseal } = await import('../operations/reseal');
      const w = waitMs(p);
      return reseal(rt, { ...common(p), ...(w !== undefined ? { waitMs: w } : {}) });
    }
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
