/**
 * Importing dead runs (takeover, `nyl recover -e`): turns what earlier runs recorded in their run
 * refs into receipts and conditions. Pure: the caller reads the run refs and writes the result.
 *
 * Per unit, oldest run first:
 * - a checkpoint with the unit's current execution key and uid becomes its receipt (imported);
 * - a started unit without checkpoint, or an uncertain checkpoint, becomes uncertain (recovered);
 * - a receipt checkpoint with another key or uid recorded real effects for something the unit no
 *   longer resolves to: uncertain, NYL-RUN-SUPERSEDED;
 * - a failed checkpoint with the current key is imported as the failure it recorded;
 * - a checkpoint of a run whose unit an earlier import already marked uncertain is a late
 *   checkpoint: kept as evidence, adopted only by `nyl recover --accept` (NYL-RUN-LATE-CHECKPOINT).
 * Units created by the dead run keep its uid (the run's desired document is adopted).
 */
import { diagnostic, type Diagnostic } from '../errors/diagnostic';
import { dependencyOrder } from '../project/graph';
import { ownershipSet } from '../project/selectors';
import type { EnvironmentResource, Project } from '../project/types';
import type { DriverSet } from '../drivers/registry';
import { currentUid, resolveUnit } from '../plan/planner';
import type { ConditionRecord, DesiredUnitDoc, ObservedUnitDoc } from '../state/documents';
import type { RecordedRun, RunUnitDoc } from '../state/run-record';

export interface ImportInput {
  project: Project;
  env: EnvironmentResource;
  generation: number;
  desired: Map<string, DesiredUnitDoc>;
  observed: Map<string, ObservedUnitDoc>;
  runs: RecordedRun[];
  /** ISO time of the import. */
  now: string;
  drivers?: DriverSet;
}

export interface ImportResult {
  desired: Map<string, DesiredUnitDoc>;
  observed: Map<string, ObservedUnitDoc>;
  imported: string[];
  recovered: string[];
  /** Units left uncertain, with the runs whose records are their evidence. */
  evidence: Map<string, Set<string>>;
  /** Run refs consumed by the import (deleted in the importer's transition push). */
  consumed: RecordedRun[];
  diagnostics: Diagnostic[];
}

function uncertain(run: string, reason: string, now: string, code?: string): ConditionRecord {
  const c: ConditionRecord = { type: 'uncertain', retryable: false, reason, run, since: now };
  if (code) c.code = code;
  return c;
}

export function importRuns(input: ImportInput): ImportResult {
  const desired = new Map(input.desired);
  const observed = new Map(input.observed);
  const result: ImportResult = { desired, observed, imported: [], recovered: [], evidence: new Map(), consumed: [...input.runs], diagnostics: [] };
  if (input.runs.length === 0) return result;
  const env = input.env.name;
  const owned = ownershipSet(input.project, input.env);
  const byName = new Map(owned.map((u) => [u.name, u]));
  const ownedNames = new Set(byName.keys());
  const order = dependencyOrder(new Map(owned.map((u) => [u.name, { dependsOn: u.dependsOn.filter((d) => ownedNames.has(d)) }])));
  const touched = new Set<string>();
  for (const run of input.runs) for (const name of run.units.keys()) touched.add(name);
  const names = [...order.filter((n) => touched.has(n)), ...[...touched].filter((n) => !ownedNames.has(n)).sort()];

  const outputsOf = (name: string): Record<string, unknown> | undefined => {
    const o = observed.get(name);
    const d = desired.get(name);
    const uid = currentUid(d, input.generation);
    if (!o?.receipt || o.uid !== uid || o.condition) return undefined;
    return o.receipt.outputs ?? {};
  };

  const markUncertain = (name: string, run: string, reason: string, code?: string) => {
    const prev = observed.get(name);
    const base: ObservedUnitDoc = prev ? { ...prev } : {};
    const uid = currentUid(desired.get(name), input.generation);
    if (uid) base.uid = uid;
    base.condition = uncertain(run, reason, input.now, code);
    base.lastRun = { run, result: 'uncertain', at: input.now };
    observed.set(name, base);
    if (!result.recovered.includes(name)) result.recovered.push(name);
    const wasImported = result.imported.indexOf(name);
    if (wasImported >= 0) result.imported.splice(wasImported, 1);
    const runs = result.evidence.get(name) ?? new Set<string>();
    runs.add(run);
    result.evidence.set(name, runs);
  };

  for (const name of names) {
    for (const run of input.runs) {
      const doc: RunUnitDoc | undefined = run.units.get(name);
      if (!doc) continue;
      const cp = doc.checkpoint;
      if (cp?.result === 'not-started') continue;
      const prev = observed.get(name);
      // Late: an earlier import already marked the unit uncertain for this run, or a newer run
      // (run ids are UUIDv7, ordered by time) has executed it since.
      const newerRun = prev?.lastRun?.run ?? prev?.receipt?.run;
      // Already imported as uncertain for this run (an operator may have cleared the condition
      // with --retry since): what the run recorded now arrived late.
      const importedUncertain = prev?.lastRun?.run === run.run && prev.lastRun.result === 'uncertain';
      const late = (prev?.condition?.type === 'uncertain' && prev.condition.run === run.run) || importedUncertain || (newerRun !== undefined && newerRun > run.run);
      if (late) {
        if (cp) {
          const runs = result.evidence.get(name) ?? new Set<string>();
          runs.add(run.run);
          result.evidence.set(name, runs);
          result.diagnostics.push(
            diagnostic('NYL-RUN-LATE-CHECKPOINT', 'warning', `run ${run.run} checkpointed ${name} (${cp.result}) after it was marked uncertain; the checkpoint stays as evidence`, {
              env,
              unit: name,
              units: [name],
              data: { run: run.run, result: cp.result },
            }),
          );
        }
        continue;
      }
      // A unit the dead run created keeps the run's incarnation.
      if (!currentUid(desired.get(name), input.generation)) {
        desired.set(name, doc.desired);
      }
      const uid = currentUid(desired.get(name), input.generation);
      if (!cp || cp.result === 'uncertain') {
        markUncertain(name, run.run, cp?.reason ? `run ${run.run}: ${cp.reason}` : `run ${run.run} started ${name} and ended without a checkpoint`);
        continue;
      }
      const unit = byName.get(name);
      const now = unit && uid ? resolveUnit(unit, input.env, uid, outputsOf, undefined, input.drivers) : undefined;
      const keyMatches = uid === doc.uid && now?.executionKey === doc.executionKey;
      if (cp.result === 'receipt') {
        if (!keyMatches) {
          markUncertain(name, run.run, `run ${run.run} applied ${name} for execution key ${doc.executionKey}, which it no longer resolves to`, 'NYL-RUN-SUPERSEDED');
          result.diagnostics.push(
            diagnostic('NYL-RUN-SUPERSEDED', 'warning', `run ${run.run} checkpointed ${name} with an execution key the new resolution no longer has; its effects are real, so ${name} is uncertain`, {
              env,
              unit: name,
              units: [name],
            }),
          );
          continue;
        }
        observed.set(name, {
          uid: doc.uid,
          receipt: { run: run.run, executionKey: doc.executionKey, finishedAt: cp.finishedAt, outputs: cp.outputs ?? {}, desired: doc.desired },
          lastRun: { run: run.run, result: 'executed', at: cp.finishedAt },
        });
        result.evidence.delete(name);
        const wasRecovered = result.recovered.indexOf(name);
        if (wasRecovered >= 0) result.recovered.splice(wasRecovered, 1);
        if (!result.imported.includes(name)) result.imported.push(name);
      } else if (cp.result === 'failed' && keyMatches) {
        const base: ObservedUnitDoc = prev && prev.uid === doc.uid ? { ...prev } : { uid: doc.uid };
        base.condition = { type: 'failed', retryable: cp.retryable ?? true, reason: cp.reason ?? 'failed', run: run.run, since: cp.finishedAt };
        if (cp.acknowledgementRequired) base.condition.acknowledgementRequired = true;
        base.lastRun = { run: run.run, result: 'failed', at: cp.finishedAt };
        observed.set(name, base);
        if (!result.imported.includes(name)) result.imported.push(name);
      }
    }
  }
  return result;
}
