/**
 * The ReconcileReport of a run: its table rows in the spec's order (dispatched units first, in
 * dispatch order, then the rest in dependency order) and the warnings its unit results raise.
 */
import { diagnostic, type Diagnostic } from '../errors/diagnostic';
import type { Resolution } from '../plan/resolve';
import { emptyDiagnostics, FORMAT_VERSION, type ReconcileReport, REPORT_API_VERSION } from '../report/types';
import type { UnitOutcome } from '../run/unit-result';
import type { EnvironmentStateView } from '../state/read';
import type { OpenedEnvironment } from './context';

export function baseReport(opened: OpenedEnvironment): ReconcileReport {
  return {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'ReconcileReport',
    operation: 'reconcile',
    environment: opened.env.name,
    source: opened.sourceCommit,
    sourceOverride: opened.sourceOverride,
    committed: false,
    units: {},
    unitOrder: [],
    details: {},
    ...emptyDiagnostics(),
  };
}

export function unitWarnings(env: string, outcomes: Iterable<UnitOutcome>): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const o of outcomes) {
    if (o.result === 'held') out.push(diagnostic('NYL-UNIT-HELD', 'warning', `${o.name} is held: ${o.detail}`, { env, unit: o.name, units: [o.name] }));
    if (o.result === 'uncertain' || o.result === 'recovered') out.push(diagnostic('NYL-UNIT-UNCERTAIN', 'warning', `${o.name} may have had effects without a recorded result: ${o.detail}`, { env, unit: o.name, units: [o.name] }));
  }
  return out;
}

/** The report of a run that found nothing to do, from the read-only resolution. */
export function fastPathReport(opened: OpenedEnvironment, resolution: Resolution, view: EnvironmentStateView, only: Set<string> | undefined): ReconcileReport {
  const report = baseReport(opened);
  if (view.desiredOid) report.desired = view.desiredOid;
  if (view.observedOid) report.observed = view.observedOid;
  const outcomes: UnitOutcome[] = [];
  for (const name of resolution.order) {
    if (only && !only.has(name)) continue;
    const r = resolution.units.get(name)!;
    if (r.phase === 'leaving') continue;
    const result = r.phase === 'current' ? 'current' : r.phase === 'held' ? 'held' : r.phase === 'failed' ? 'failed' : r.phase === 'uncertain' ? 'uncertain' : 'blocked';
    const detail = r.phase === 'held' && r.detail.startsWith('pending changes from ') ? `held; changes from ${r.detail.slice('pending changes from '.length)} wait` : r.detail;
    const o: UnitOutcome = { name, kind: r.kind, result, detail, dispatched: false };
    if (r.phase === 'held' && r.observed?.condition?.type === 'uncertain') o.uncertain = true;
    if (r.uid) o.uid = r.uid;
    if (r.executionKey) o.executionKey = r.executionKey;
    if (r.waits.length > 0) o.waits = r.waits;
    outcomes.push(o);
    report.errors.push(...r.errors);
  }
  fillUnits(report, outcomes, []);
  report.warnings.push(...unitWarnings(opened.env.name, outcomes));
  return report;
}

export function fillUnits(report: ReconcileReport, outcomes: UnitOutcome[], dispatchOrder: string[]): void {
  const byName = new Map(outcomes.map((o) => [o.name, o]));
  const order = [...dispatchOrder, ...outcomes.map((o) => o.name).filter((n) => !dispatchOrder.includes(n))];
  for (const name of order) {
    const o = byName.get(name)!;
    const u: ReconcileReport['units'][string] = { kind: o.kind, result: o.result, detail: o.detail, dispatched: o.dispatched };
    if (o.uid) u.uid = o.uid;
    if (o.executionKey) u.executionKey = o.executionKey;
    if (o.durationMs !== undefined) u.durationMs = o.durationMs;
    if (o.waits && o.waits.length > 0) u.waits = o.waits;
    if (o.uncertain) u.uncertain = true;
    if (o.receipt) u.outputs = Object.keys(o.receipt.outputs).sort();
    report.units[name] = u;
  }
  report.unitOrder = order;
}
