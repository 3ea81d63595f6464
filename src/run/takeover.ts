/**
 * What an importer (reconcile, recover -e) does with the records dead runs left: import them, and
 * compute the coordination refs its transition push moves: consumed run refs deleted (a damaged
 * one set aside under `damaged/runs/RUN`), evidence refs kept for units left uncertain and for
 * late checkpoints, evidence refs nobody needs deleted.
 *
 * A reconcile refuses damaged runs and signals (NYL-STATE-CORRUPT) before it starts anything;
 * only `recover`, an operator's explicit decision, imports them (`tolerate`). Both end what the
 * dead runs left running on this machine (reapLeftovers) before anything else runs, and remove
 * the scratch directories they left on it (./dead-scratch.ts).
 */
import { withoutKeyVariables } from '../util/sealed';
import type { DriverSet } from '../drivers/registry';
import type { RefUpdate } from '../git/refs';
import type { LeaseView } from '../lease/lease';
import { breaksCarriedBy, type LeaseBreakRecord } from '../lease/record';
import type { ObservedUnitDoc } from '../state/documents';
import { requireUndamaged } from '../state/damage';
import { damagedPrefix } from '../state/location';
import { type RecordedRun, readRecordedRuns } from '../state/run-record';
import type { RefSnapshot, StateStore } from '../state/store';
import type { Runtime } from '../util/runtime';
import { removeDeadScratch } from './dead-scratch';
import { type EvidenceRef, evidenceRefName, evidenceRefs, lateEvidenceRefName } from './evidence';
import { type ImportInput, importRuns, type ImportResult } from './import';
import { readSignals } from './signals';

export interface Takeover {
  imported: ImportResult;
  /** The latest break this importer records. */
  leaseBroken?: LeaseBreakRecord;
  /** Earlier breaks an importer that died did not record. */
  leaseBrokenEarlier?: LeaseBreakRecord[];
}

export async function takeOver(
  store: StateStore,
  refs: RefSnapshot,
  input: Omit<ImportInput, 'runs'>,
  ownRun: string | undefined,
  replaced: LeaseView | undefined,
  options: { tolerate?: boolean } = {},
): Promise<Takeover> {
  const runs = await readRecordedRuns(store.reader, store.loc, refs, ownRun);
  if (!options.tolerate) await refuseDamage(store, refs, runs);
  const imported = importRuns({ ...input, runs });
  const takeover: Takeover = { imported };
  Object.assign(takeover, breakFields(replaced));
  return takeover;
}

/**
 * The dead runs that started units of each kind without recording how they ended: the kinds whose
 * executions may still be going on, outside Nyl.
 */
function unfinishedRunsByKind(takeover: Takeover): Map<string, Set<string>> {
  const byKind = new Map<string, Set<string>>();
  for (const run of takeover.imported.consumed) {
    for (const doc of [...run.units.values(), ...run.teardowns.values()]) {
      if (doc.checkpoint) continue;
      const runs = byKind.get(doc.kind) ?? new Set<string>();
      byKind.set(doc.kind, runs.add(run.run));
    }
  }
  return byKind;
}

/**
 * Ends what the dead runs an importer consumed left running on this machine, before any unit
 * starts: for each kind whose driver can reap (an OciImage's container outlives Nyl), the runs
 * that started a unit of that kind and never checkpointed it. Then removes the scratch
 * directories every consumed run left here (after the reap: a container may mount a file of
 * them). Logs a progress line per thing ended or removed, and per driver that could not look.
 */
export async function reapLeftovers(takeover: Takeover, drivers: DriverSet, environment: string, rt: Pick<Runtime, 'runner' | 'env' | 'log'>): Promise<void> {
  for (const [kind, runs] of unfinishedRunsByKind(takeover)) {
    const driver = drivers.driver(kind);
    if (!driver?.reap) continue;
    const outcome = await driver.reap({ environment, runner: rt.runner, baseEnv: withoutKeyVariables(rt.env), runs: [...runs] });
    for (const e of outcome.ended) rt.log(`[${environment}/${e.unit}] removed ${e.what}, which the dead run ${e.run} left`);
    if (outcome.problem) rt.log(`[${environment}] cannot look for what dead runs of ${kind} units left on this machine: ${outcome.problem}`);
  }
  const scratch = removeDeadScratch(takeover.imported.consumed);
  for (const e of scratch.removed) rt.log(`[${environment}] removed ${e.dir}, the scratch directory of the dead run ${e.run}`);
  for (const problem of scratch.problems) rt.log(`[${environment}] ${problem}`);
}

/** A damaged run or signal: nothing may start before an operator set it aside (`recover`). */
async function refuseDamage(store: StateStore, refs: RefSnapshot, runs: RecordedRun[]): Promise<void> {
  const signals = await readSignals(store, refs);
  requireUndamaged(store.loc.environment, [...runs.flatMap((r) => r.damage), ...signals.damaged]);
}

/** leaseBroken (the latest break) and leaseBrokenEarlier (unrecorded older ones) of a replaced lease. */
export function breakFields(replaced: LeaseView | undefined): { leaseBroken?: LeaseBreakRecord; leaseBrokenEarlier?: LeaseBreakRecord[] } {
  const breaks = replaced ? breaksCarriedBy(replaced.record) : [];
  if (breaks.length === 0) return {};
  const out: { leaseBroken?: LeaseBreakRecord; leaseBrokenEarlier?: LeaseBreakRecord[] } = { leaseBroken: breaks[breaks.length - 1]! };
  if (breaks.length > 1) out.leaseBrokenEarlier = breaks.slice(0, -1);
  return out;
}

/** Consumed run refs: deleted, and a damaged one set aside under `damaged/runs/RUN`. */
function consumedRunUpdates(store: StateStore, refs: RefSnapshot, consumed: readonly RecordedRun[]): RefUpdate[] {
  const updates: RefUpdate[] = [];
  for (const run of consumed) {
    updates.push({ ref: run.ref, expect: run.oid, to: null });
    const keep = `${damagedPrefix(store.loc)}runs/${run.run}`;
    if (run.damage.length > 0) updates.push({ ref: keep, expect: refs.get(keep) ?? null, to: run.oid });
  }
  return updates;
}

/** The evidence refs the import wants: for units still uncertain, and for late checkpoints. */
function wantedEvidence(store: StateStore, imported: ImportResult | undefined, stillUncertain: (unit: string) => boolean): Map<string, string> {
  const runOids = new Map((imported?.consumed ?? []).map((run) => [run.run, run.oid]));
  const wanted = new Map<string, string>();
  for (const [unit, runs] of imported?.evidence ?? []) {
    for (const run of runs) {
      const oid = runOids.get(run);
      if (!oid) continue;
      if (stillUncertain(unit)) wanted.set(evidenceRefName(store, unit, run), oid);
      else if (imported!.late.get(unit)?.has(run)) wanted.set(lateEvidenceRefName(store, unit, run), oid);
    }
  }
  return wanted;
}

/** Evidence nobody needs: no uncertain unit for a run's record; a late checkpoint adopted, or of a unit state no longer has. */
function unneeded(e: EvidenceRef, finalObserved: Map<string, ObservedUnitDoc>): boolean {
  const observed = finalObserved.get(e.unit);
  if (e.late) return !observed || observed.receipt?.run === e.run;
  return observed?.condition?.type !== 'uncertain';
}

/** The coordination ref updates of an importer's transition push. */
export function coordinationUpdates(
  store: StateStore,
  refs: RefSnapshot,
  takeover: Takeover | undefined,
  finalObserved: Map<string, ObservedUnitDoc>,
): RefUpdate[] {
  const updates = consumedRunUpdates(store, refs, takeover?.imported.consumed ?? []);
  const wanted = wantedEvidence(store, takeover?.imported, (unit) => finalObserved.get(unit)?.condition?.type === 'uncertain');
  for (const e of evidenceRefs(store, refs)) {
    if (!wanted.has(e.ref) && unneeded(e, finalObserved)) updates.push({ ref: e.ref, expect: e.oid, to: null });
  }
  for (const [ref, oid] of wanted) {
    const have = refs.get(ref);
    if (have !== oid) updates.push({ ref, expect: have ?? null, to: oid });
  }
  return updates;
}
