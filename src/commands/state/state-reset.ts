/**
 * `nyl state reset -e ENV --local [--discard U... | --discard-all]`: the way back from --local
 * without publishing. It reads the state repository (an online read) and moves only local refs:
 * the clone's known branches of the state refs and, for a remote that is not the checkout's
 * origin, its cache repository's own branches, to the state repository's tips. Nothing is pushed.
 *
 * Local receipts the state repository lacks are lost by the move, so each unit that has one must
 * be named (--discard) or all accepted (--discard-all). A --local run's lease, run and evidence
 * refs must be imported first, as NYL-STATE-LOCAL-WORK says (`lease break --local` and `recover
 * --local` for a killed run, `reconcile --local` for one that ended without its transition): the
 * reset never drops a record of effects that no receipt holds yet. A branch that is not just behind keeps its old tip under
 * refs/nyl-discarded/ENV/<time>/ in its repository, for audit and to bring it back by hand.
 */
import { NylError, diagnostic, fail } from '../../errors/diagnostic';
import type { StateOperationReport } from '../../report/types';
import type { ObservedUnitDoc } from '../../state/documents';
import { discardVerdict, localWorkDiagnostic, receiptsAbsent } from '../../state/local-work';
import { coordinationNamespace } from '../../state/location';
import { readEnvironmentState, readUnitDocs } from '../../state/read';
import type { LocalBranch } from '../../state/local-state';
import type { Runtime } from '../../util/runtime';
import { type EnvironmentRequest, openEnvironment, type OpenedEnvironment } from '../shared/context';
import { stateOperationReport } from '../shared/report-base';
import { requireActive } from './state-checks';

interface ResetRequest extends EnvironmentRequest {
  reason?: string;
  /** --discard: units whose local receipts the reset may lose. */
  discard: string[];
  /** --discard-all: every local receipt the state repository lacks may be lost. */
  discardAll: boolean;
}

const FORM = 'nyl state reset -e <env> --local [--discard <unit>... | --discard-all]';

export async function stateReset(rt: Runtime, req: ResetRequest): Promise<StateOperationReport> {
  if (!req.local) usage(`nyl state reset updates local refs only and needs --local: ${FORM}`, `run \`nyl state reset -e ${req.environment} --local\``);
  if (req.discardAll && req.discard.length > 0)
    usage('--discard and --discard-all exclude each other', 'pass the units with --discard, or --discard-all alone');
  // The configured location, read online: --local names what is reset, not where it reads.
  const opened = await openEnvironment(rt, { ...req, local: false }, { writes: false, renders: false });
  try {
    return await resetOpened(rt, opened, req);
  } finally {
    opened.close();
  }
}

function usage(message: string, fix: string): never {
  throw new NylError(diagnostic('NYL-USAGE', 'error', message, { fix }));
}

async function resetOpened(rt: Runtime, opened: OpenedEnvironment, req: ResetRequest): Promise<StateOperationReport> {
  const { store, loc, env } = opened;
  if (loc.kind === 'clone')
    usage(
      `the state of ${env.name} is the clone's own branches (${loc.chosenBy}): there is no state repository to reset them to`,
      'nothing to reset; `git log` shows the branches',
    );
  await store.ensureOpen();
  const refs = await store.snapshot();
  await requireActive(opened, { refs, view: await readEnvironmentState(store.reader, loc, refs, store.cache) });
  const work = await opened.local.localWork(refs);
  if (work.refs.size > 0) throw new NylError(localWorkDiagnostic(env.name, coordinationNamespace(loc), work.refs.keys(), 'error'));
  const discarded = await lostReceipts(opened, work.branches);
  const verdict = discardVerdict(discarded, req.discard, req.discardAll);
  if (verdict.kind === 'unnamed') {
    fail(
      'NYL-STATE-RESET-DISCARD',
      `the local state of ${env.name} holds receipts the state repository does not have: ${verdict.units.join(', ')}; nothing was changed`,
      { env: env.name, units: verdict.units },
    );
  }
  if (verdict.kind === 'not-absent') {
    usage(
      `--discard names ${verdict.units.join(', ')}, which ${verdict.units.length === 1 ? 'has' : 'have'} no local receipt the state repository lacks${discarded.length > 0 ? ` (those that do: ${discarded.join(', ')})` : ''}`,
      discarded.length > 0 ? `pass --discard ${discarded.join(',')}` : 'drop --discard: no local receipt is lost',
    );
  }
  const report = stateOperationReport('state-reset', env.name, { discarded, ...(req.reason ? { reason: req.reason } : {}) });
  report.desired = refs.get(loc.desiredRef);
  report.observed = refs.get(loc.observedRef);
  if (work.branches.length === 0) {
    report.notes.push(
      diagnostic('NYL-UNCHANGED', 'note', `the local branches of ${env.name} already are the state repository's; nothing changed`, { env: env.name }),
    );
    return report;
  }
  const keptUnder = `refs/nyl-discarded/${env.name}/${stamp(rt.clock.now())}/`;
  const moved = await opened.local.moveLocalBranches(work.branches, keptUnder);
  if (!moved.ok)
    fail('NYL-STATE-CONFLICT', `a local branch of ${env.name} moved while it was reset: ${moved.message}; nothing more was changed`, { env: env.name });
  report.result = 'done';
  report.details.branches = work.branches.map((b) => ({
    repository: b.repository,
    ref: b.ref,
    from: b.tip,
    to: b.state,
    ...(b.behind ? { fastForward: true } : { keptAs: `${keptUnder}${b.ref.slice('refs/'.length)}` }),
  }));
  return report;
}

/** The units whose receipts the local observed branches hold and the state repository's lack. */
async function lostReceipts(opened: OpenedEnvironment, branches: LocalBranch[]): Promise<string[]> {
  const { store, loc } = opened;
  const lost = new Set<string>();
  for (const b of branches) {
    if (b.behind || b.ref !== loc.observedRef) continue;
    const local = await readUnitDocs<ObservedUnitDoc>(store.reader, loc, 'observed', b.tip, store.cache);
    const remote = await readUnitDocs<ObservedUnitDoc>(store.reader, loc, 'observed', b.state, store.cache);
    for (const unit of receiptsAbsent(local.units, remote.units)) lost.add(unit);
  }
  return [...lost].sort();
}

/** A ref-name-safe UTC time: 20260101T120000Z. */
function stamp(ms: number): string {
  return new Date(ms)
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d+Z$/, 'Z');
}
