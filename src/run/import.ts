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
 * - a checkpoint of a run whose unit an earlier import already marked uncertain, or that a newer
 *   run has executed since, is a late checkpoint: it never replaces the newer result, it is kept
 *   as evidence (listed under `late`), and only `nyl recover --accept` adopts it
 *   (NYL-RUN-LATE-CHECKPOINT);
 * - a damaged record (`recover` imports damaged runs; reconcile refuses them) makes its unit
 *   uncertain: nothing it says is trusted. A run whose run.yaml is damaged is damaged as a whole:
 *   every unit it names becomes uncertain.
 * Units created by the dead run keep its uid (the run's desired document is adopted). A teardown's
 * record: removed drops the unit, anything else leaves it deleting (uncertain, or the failure).
 */
import { diagnostic, type Diagnostic } from '../errors/diagnostic';
import type { EnvironmentResource, Project, UnitResource } from '../project/types';
import type { KindSet } from '../drivers/kinds';
import { asProducer, currentUid, ownedGraph, resolveUnit, scopeOf } from '../plan/planner';
import { recordedPreparation } from '../plan/input';
import { checkpointMatches, incarnationCondition, incarnationReceipt } from '../plan/unit-view';
import type { ProducerReceipt } from '../project/render';
import type { ConditionRecord, DesiredUnitDoc, ObservedUnitDoc } from '../state/documents';
import { type Damage, whereOf } from '../state/damage';
import { type Checkpoint, conditionOf, type RecordedRun, receiptOf, runDamaged, type RunUnitDoc } from '../state/run-record';

export interface ImportInput {
  project: Project;
  env: EnvironmentResource;
  generation: number;
  desired: Map<string, DesiredUnitDoc>;
  observed: Map<string, ObservedUnitDoc>;
  runs: RecordedRun[];
  /** ISO time of the import. */
  now: string;
  /** The kinds whose version tags make execution keys. */
  drivers: KindSet;
}

export interface ImportResult {
  desired: Map<string, DesiredUnitDoc>;
  observed: Map<string, ObservedUnitDoc>;
  imported: string[];
  recovered: string[];
  /** Units left uncertain, with the runs whose records are their evidence. */
  evidence: Map<string, Set<string>>;
  /** Late checkpoints, by unit: the runs whose records are kept as evidence even once the unit is not uncertain. */
  late: Map<string, Set<string>>;
  /** Units a dead run's teardown removed: their files go. */
  removed: string[];
  /** Run refs consumed by the import (deleted in the importer's transition push). */
  consumed: RecordedRun[];
  diagnostics: Diagnostic[];
}

function uncertain(run: string, reason: string, now: string, code?: string, output?: string[]): ConditionRecord {
  const c: ConditionRecord = { type: 'uncertain', retryable: false, reason, run, since: now };
  if (code) c.code = code;
  if (output && output.length > 0) c.output = output;
  return c;
}

function remove(list: string[], name: string): void {
  const i = list.indexOf(name);
  if (i >= 0) list.splice(i, 1);
}

/** One import: documents updated unit by unit, each unit's records oldest run first. */
class Importer {
  readonly result: ImportResult;
  private readonly byName: ReadonlyMap<string, UnitResource>;
  private readonly order: readonly string[];

  constructor(private readonly input: ImportInput) {
    this.result = {
      desired: new Map(input.desired),
      observed: new Map(input.observed),
      imported: [],
      recovered: [],
      removed: [],
      evidence: new Map(),
      late: new Map(),
      consumed: [...input.runs],
      diagnostics: [],
    };
    ({ byName: this.byName, order: this.order } = ownedGraph(input.project, input.env));
  }

  /** Units the runs recorded: owned ones in dependency order (consumers resolve from imports), then the rest by name. */
  private unitsToImport(): string[] {
    const touched = new Set(this.input.runs.flatMap((run) => [...run.units.keys(), ...run.teardowns.keys(), ...damagedUnits(run)]));
    return [...this.order.filter((n) => touched.has(n)), ...[...touched].filter((n) => !this.byName.has(n)).sort()];
  }

  private uidOf(name: string): string | undefined {
    return currentUid(this.result.desired.get(name), this.input.generation);
  }

  private readonly receiptOf = (name: string): ProducerReceipt | undefined => {
    const o = this.result.observed.get(name);
    const uid = this.uidOf(name);
    return incarnationCondition(o, uid) ? undefined : asProducer(incarnationReceipt(o, uid));
  };

  private addEvidence(name: string, run: string, to = this.result.evidence): void {
    const runs = to.get(name) ?? new Set<string>();
    to.set(name, runs.add(run));
  }

  private warn(code: 'NYL-RUN-LATE-CHECKPOINT' | 'NYL-RUN-SUPERSEDED', name: string, message: string, data?: Record<string, unknown>): void {
    this.result.diagnostics.push(diagnostic(code, 'warning', message, { env: this.input.env.name, unit: name, units: [name], ...(data ? { data } : {}) }));
  }

  /**
   * Late: an earlier import already marked the unit uncertain for this run (an operator may have
   * cleared the condition with --retry since), or a newer run (run ids are UUIDv7, ordered by
   * time) has executed it since. What it recorded stays as evidence only.
   */
  private isLate(name: string, run: string): boolean {
    const prev = this.result.observed.get(name);
    const newerRun = prev?.lastRun?.run ?? prev?.receipt?.run;
    const importedUncertain = prev?.lastRun?.run === run && prev.lastRun.result === 'uncertain';
    return (prev?.condition?.type === 'uncertain' && prev.condition.run === run) || importedUncertain || (newerRun !== undefined && newerRun > run);
  }

  /** `output`: the last lines of the tool, when an uncertain checkpoint kept them. */
  private markUncertain(name: string, run: string, reason: string, code?: string, output?: string[]): void {
    const { observed, recovered, imported } = this.result;
    const next: ObservedUnitDoc = { ...(observed.get(name) ?? {}) };
    const uid = this.uidOf(name);
    if (uid) next.uid = uid;
    next.condition = uncertain(run, reason, this.input.now, code, output);
    next.lastRun = { run, result: 'uncertain', at: this.input.now };
    observed.set(name, next);
    if (!recovered.includes(name)) recovered.push(name);
    remove(imported, name);
    this.addEvidence(name, run);
  }

  private importReceipt(name: string, run: string, doc: RunUnitDoc, cp: Checkpoint): void {
    this.result.observed.set(name, { uid: doc.uid, receipt: receiptOf(run, doc, cp), lastRun: { run, result: 'executed', at: cp.finishedAt } });
    this.result.evidence.delete(name);
    remove(this.result.recovered, name);
    if (!this.result.imported.includes(name)) this.result.imported.push(name);
  }

  private importFailure(name: string, run: string, doc: RunUnitDoc, cp: Checkpoint): void {
    const prev = this.result.observed.get(name);
    const next: ObservedUnitDoc = prev && prev.uid === doc.uid ? { ...prev } : { uid: doc.uid };
    next.condition = conditionOf(run, cp);
    next.lastRun = { run, result: 'failed', at: cp.finishedAt };
    this.result.observed.set(name, next);
    if (!this.result.imported.includes(name)) this.result.imported.push(name);
  }

  /** Does the record's key and uid equal what the unit resolves to now? */
  private keyMatches(name: string, doc: RunUnitDoc): boolean {
    const unit = this.byName.get(name);
    const uid = this.uidOf(name);
    // A record of another incarnation matches no key: no need to resolve the unit.
    if (!unit || !checkpointMatches(doc, uid, doc.executionKey)) return false;
    return checkpointMatches(doc, uid, resolveUnit(unit, uid, scopeOf(this.input, this.receiptOf), recordedPreparation(doc.desired)).executionKey);
  }

  /** One unit's record in one run. */
  importRecord(name: string, run: string, doc: RunUnitDoc): void {
    const cp = doc.checkpoint;
    if (cp?.result === 'not-started') return;
    if (this.isLate(name, run)) {
      if (!cp) return;
      this.addEvidence(name, run);
      this.addEvidence(name, run, this.result.late);
      this.warn(
        'NYL-RUN-LATE-CHECKPOINT',
        name,
        `run ${run} checkpointed ${name} (${cp.result}) after it was marked uncertain or executed again; the checkpoint stays as evidence`,
        { run, result: cp.result },
      );
      return;
    }
    if (doc.phase === 'teardown') return this.importTeardown(name, run, doc);
    // A unit the dead run created keeps the run's incarnation.
    if (!this.uidOf(name)) this.result.desired.set(name, doc.desired);
    if (!cp || cp.result === 'uncertain') {
      this.markUncertain(
        name,
        run,
        cp?.reason ? `run ${run}: ${cp.reason}` : `run ${run} started ${name} and ended without a checkpoint`,
        undefined,
        cp?.output,
      );
      return;
    }
    const matches = this.keyMatches(name, doc);
    if (cp.result === 'receipt' && matches) return this.importReceipt(name, run, doc, cp);
    if (cp.result === 'failed' && matches) return this.importFailure(name, run, doc, cp);
    if (cp.result !== 'receipt') return;
    this.markUncertain(name, run, `run ${run} applied ${name} for execution key ${doc.executionKey}, which it no longer resolves to`, 'NYL-RUN-SUPERSEDED');
    this.warn(
      'NYL-RUN-SUPERSEDED',
      name,
      `run ${run} checkpointed ${name} with an execution key the new resolution no longer has; its effects are real, so ${name} is uncertain`,
    );
  }

  /**
   * A dead run's teardown of the unit's incarnation: removed, its files go; failed, it keeps the
   * deleting document with the failure; without a checkpoint (or uncertain), it is uncertain and
   * deleting, so a converging teardown runs again and a manual one waits for `recover --retry`.
   * The teardown of an incarnation state no longer has changes nothing.
   */
  private importTeardown(name: string, run: string, doc: RunUnitDoc): void {
    if (this.uidOf(name) !== doc.uid) return;
    const cp = doc.checkpoint;
    if (cp?.result === 'removed') {
      this.result.desired.delete(name);
      this.result.observed.delete(name);
      this.result.evidence.delete(name);
      remove(this.result.recovered, name);
      if (!this.result.removed.includes(name)) this.result.removed.push(name);
      if (!this.result.imported.includes(name)) this.result.imported.push(name);
      return;
    }
    this.result.desired.set(name, doc.desired);
    if (cp?.result === 'failed') return this.importFailure(name, run, doc, cp);
    this.markUncertain(name, run, cp?.reason ? `run ${run}: ${cp.reason}` : `run ${run} started the teardown of ${name} and ended without a checkpoint`);
  }

  /**
   * A unit whose record cannot be trusted: uncertain, unless a newer result makes the run late.
   * A healthy record of a damaged run still names the incarnation the run created.
   */
  importDamaged(name: string, run: RecordedRun, damage: Damage): void {
    if (this.isLate(name, run.run)) return;
    const doc = run.units.get(name) ?? run.teardowns.get(name);
    if (doc && !this.uidOf(name)) this.result.desired.set(name, doc.desired);
    this.markUncertain(
      name,
      run.run,
      `run ${run.run}'s records are damaged (${whereOf(damage)}: ${damage.problem}); nothing they say is trusted`,
      'NYL-STATE-CORRUPT',
    );
  }

  run(): ImportResult {
    for (const name of this.unitsToImport()) {
      for (const run of this.input.runs) {
        const damage = damageFor(run, name);
        if (damage) {
          this.importDamaged(name, run, damage);
          continue;
        }
        // A run that tore a unit down and then executed it (a kind change) did the teardown first.
        const teardown = run.teardowns.get(name);
        const doc = run.units.get(name);
        if (teardown) this.importRecord(name, run.run, teardown);
        if (doc) this.importRecord(name, run.run, doc);
      }
    }
    return this.result;
  }
}

/** The units a run's damaged records name. */
function damagedUnits(run: RecordedRun): string[] {
  return run.damage.flatMap((d) => (d.unit ? [d.unit] : []));
}

/** Why a run's record of a unit cannot be trusted: its own damage, or the whole run's. */
function damageFor(run: RecordedRun, name: string): Damage | undefined {
  if (run.damage.length === 0) return undefined;
  const own = run.damage.find((d) => d.unit === name);
  if (own) return own;
  return runDamaged(run) && (run.units.has(name) || run.teardowns.has(name)) ? run.damage.find((d) => d.document === 'run') : undefined;
}

export function importRuns(input: ImportInput): ImportResult {
  return new Importer(input).run();
}
