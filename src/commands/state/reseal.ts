/**
 * `nyl state reseal -e ENV [--reason R]`: after a key rotation (the new key first in the ring, the
 * old one after it), seals every sealed value of the environment's observed state again with the
 * first key in the current form and makes its digest again with it (./reseal-documents.ts), so that
 * the old key can leave the ring. One observed commit (operation state-reseal) under the lease,
 * published in the same atomic push that releases it; the desired ref does not change. Nothing
 * to change writes nothing and takes no lease (unless a live run's ref waits: see below).
 *
 * Refusals: a sealed value no configured key opens refuses the whole reseal with one
 * NYL-RESEAL-UNOPENED per value, before the lease when the first read shows it (nothing is
 * written), and again under the lease on the state as it is then. Run refs not imported yet
 * refuse it the same way (NYL-RESEAL-RUNS-UNIMPORTED): their checkpoints keep the seals of the key
 * they were made with, and importing them after the old key left the ring would bring back values
 * no key opens. Before the lease a live holder's own run ref is left to the lease, which waits for
 * it or refuses; under the lease every run ref left waits for its import.
 *
 * Reported beside the commit: the digests a backend keeps, which only an execution makes again
 * (NYL-RESEAL-KEPT: the key they need stays in the ring until then), and the consumers whose
 * execution keys cover a new digest (NYL-RESEAL-CONSUMERS: each executes once, with the same
 * value). Only the tips' documents are resealed: the state history keeps the old seals.
 */
import { diagnostic, type Diagnostic, NylError } from '../../errors/diagnostic';
import { withLease } from '../../lease/transaction';
import type { StateOperationReport } from '../../report/types';
import { buildTransitions } from '../../run/transition-plan';
import { consumersOf, type KeptDigest, type ResealOutcome, resealObserved } from './reseal-documents';
import { unimportedRuns } from '../../state/location';
import { type EnvironmentStateView, readEnvironmentState } from '../../state/read';
import type { RefSnapshot } from '../../state/store';
import type { Runtime } from '../../util/runtime';
import { keyRingFrom } from '../../util/sealed';
import { type EnvironmentRequest, leaseOptionsOf, openEnvironment, type OpenedEnvironment, trailersOf } from '../shared/context';
import { keyFileWarnings, stateOperationReport } from '../shared/report-base';
import { liveHolder, requireActive, stateUnderLease } from './state-checks';

interface ResealRequest extends EnvironmentRequest {
  reason?: string;
  waitMs?: number;
}

type ResealOptions = Omit<ResealRequest, keyof EnvironmentRequest>;

const OPERATION = 'state-reseal';

export async function reseal(rt: Runtime, req: ResealRequest): Promise<StateOperationReport> {
  // The seals are in state: the project is read at HEAD for the location, nothing is rendered.
  const opened = await openEnvironment(rt, req, { writes: true, renders: false });
  try {
    return await resealOpened(rt, opened, {
      ...(req.reason !== undefined ? { reason: req.reason } : {}),
      ...(req.waitMs !== undefined ? { waitMs: req.waitMs } : {}),
    });
  } finally {
    opened.close();
  }
}

export async function resealOpened(rt: Runtime, opened: OpenedEnvironment, req: ResealOptions = {}): Promise<StateOperationReport> {
  const { store, env, loc } = opened;
  await store.ensureOpen();
  const ring = keyRingFrom(rt.env);
  const report = stateOperationReport(OPERATION, env.name);
  report.warnings.push(...keyFileWarnings(env.name, rt.env));
  const refs0 = await store.snapshot();
  const view0 = await readEnvironmentState(store.reader, loc, refs0, store.cache);
  await requireActive(opened, { refs: refs0, view: view0 });
  await opened.local.requireNoUnpublishedWork(refs0);
  const runs0 = unimportedRuns(loc, refs0);
  if (runs0.length > 0 && !(await liveHolder(rt, opened, refs0))) refuseUnimported(env.name, runs0);
  const first = requireOpened(env.name, resealObserved(env.name, view0.observedUnits, ring));
  // A live run's ref: its receipts land when it ends, so only the lease can say nothing changes.
  if (first.resealed.length === 0 && runs0.length === 0) return unchanged(report, env.name, first, view0);
  return withLease(rt, store, leaseOptionsOf(rt, opened, OPERATION, { initial: refs0, waitMs: req.waitMs }), async (tx) => {
    const refs = tx.snapshot;
    const view = await stateUnderLease(opened, { refs: refs0, view: view0 }, refs);
    await requireActive(opened, { refs, view });
    // Under the lease no run lives any more: every run ref left waits for its import.
    refuseUnimported(env.name, unimportedRuns(loc, refs));
    const outcome = requireOpened(env.name, resealObserved(env.name, view.observedUnits, ring));
    if (outcome.resealed.length === 0) {
      await tx.end('nothing-to-write');
      return unchanged(report, env.name, outcome, view);
    }
    const published = await tx.publish(resealTransitions(opened, refs, view, outcome, req.reason));
    describe(report, env.name, outcome, view);
    report.result = 'done';
    report.observed = published.refs.get(loc.observedRef);
    await opened.local.syncKnownBranches(published.refs);
    return report;
  });
}

/** One NYL-RESEAL-UNOPENED per value no key opens: the whole reseal is refused. */
function requireOpened(env: string, outcome: ResealOutcome): ResealOutcome {
  if (outcome.unopened.length === 0) return outcome;
  throw new NylError(
    outcome.unopened.map((s) =>
      diagnostic('NYL-RESEAL-UNOPENED', 'error', `the sealed value ${s.unit}.${s.output} does not open: ${s.problem}; nothing was resealed`, {
        env,
        unit: s.unit,
        units: [s.unit],
        output: s.output,
        ...(s.keyId ? { keyId: s.keyId } : {}),
      }),
    ),
  );
}

/**
 * A run ref nobody imported may hold checkpoints sealed with the old key, which this reseal cannot
 * reach; imported once the old key left the ring, no key would open them. Import first, then reseal.
 */
function refuseUnimported(env: string, runs: string[]): void {
  if (runs.length === 0) return;
  const what = runs.length === 1 ? `run ${runs[0]!} is` : `runs ${runs.join(', ')} are`;
  throw new NylError(
    diagnostic(
      'NYL-RESEAL-RUNS-UNIMPORTED',
      'error',
      `${what} not imported yet: a run ref may hold sealed values this reseal would not reach; nothing was resealed`,
      { env, data: { runs } },
    ),
  );
}

/** The report's details and diagnostics of an outcome, written or not. */
function describe(report: StateOperationReport, env: string, outcome: ResealOutcome, view: EnvironmentStateView): void {
  const consumers = consumersOf(view.desiredUnits, outcome.redigested);
  report.details = {
    ...(outcome.sealingKeyId ? { sealingKey: outcome.sealingKeyId } : {}),
    resealed: outcome.resealed,
    kept: outcome.kept,
    unchanged: outcome.unchanged,
    consumersToRun: consumers,
  };
  if (outcome.kept.length > 0) report.warnings.push(keptWarning(env, outcome.kept));
  if (consumers.length > 0) report.notes.push(consumersNote(env, consumers, outcome.redigested));
}

function unchanged(report: StateOperationReport, env: string, outcome: ResealOutcome, view: EnvironmentStateView): StateOperationReport {
  describe(report, env, outcome, view);
  const by = outcome.sealingKeyId ? ` (key id ${outcome.sealingKeyId})` : '';
  report.notes.push(
    diagnostic('NYL-UNCHANGED', 'note', `every sealed value of ${env} is already sealed and digested with the first key${by}; nothing was written`, { env }),
  );
  return report;
}

/** NYL-RESEAL-KEPT: the digests left, and the keys that must stay in the ring until their units execute again. */
function keptWarning(env: string, kept: KeptDigest[]): Diagnostic {
  const units = [...new Set(kept.map((k) => k.unit))].sort();
  const keys = [...new Set(kept.flatMap((k) => (k.keyId ? [k.keyId] : [])))].sort();
  const listed = kept.map((k) => `${k.unit}.${k.output} (${k.keyId ? `key ${k.keyId}` : 'unkeyed'})`).join(', ');
  const until = `${units.join(', ')} ${units.length === 1 ? 'has' : 'have'} executed again`;
  const keep =
    keys.length > 0 ? `; keep key ${keys.join(', key ')} in the ring until ${until}` : '; they need no key, and are keyed once their units execute again';
  const message = `the digests of ${listed} were left as they are: their units' Terraform or OpenTofu backends keep the values, and only an execution digests them again${keep}`;
  return diagnostic('NYL-RESEAL-KEPT', 'warning', message, { env, unit: units[0]!, units });
}

function consumersNote(env: string, consumers: string[], redigested: string[]): Diagnostic {
  const message = `${consumers.join(', ')} read${consumers.length === 1 ? 's' : ''} ${redigested.join(', ')}, whose digest${redigested.length === 1 ? '' : 's'} changed: an execution key covers the digest, so each executes once on the next reconcile, with the same value`;
  return diagnostic('NYL-RESEAL-CONSUMERS', 'note', message, { env, units: consumers });
}

/** One observed commit: the resealed documents; the body names each unit's resealed outputs and the key. */
function resealTransitions(opened: OpenedEnvironment, refs: RefSnapshot, view: EnvironmentStateView, outcome: ResealOutcome, reason: string | undefined) {
  const before = { desired: view.desiredUnits, observed: view.observedUnits };
  const after = { desired: view.desiredUnits, observed: outcome.observed };
  const units: Record<string, { action: string; outputs: string[] }> = {};
  for (const name of outcome.resealed) {
    const [unit, output] = splitName(name);
    (units[unit] ??= { action: 'reseal', outputs: [] }).outputs.push(output);
  }
  // Only a usable ring changes a record, so a transition always has the key that sealed.
  const body = { operation: OPERATION, sealingKey: outcome.sealingKeyId, units };
  return buildTransitions(opened.loc, refs, opened.env.name, before, after, body, trailersOf(opened, reason), Object.keys(units).sort());
}

/** `unit.output` -> [unit, output]: a unit name holds no dot, an output name may. */
function splitName(name: string): [string, string] {
  const dot = name.indexOf('.');
  return [name.slice(0, dot), name.slice(dot + 1)];
}
