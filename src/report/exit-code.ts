/**
 * The one place that decides exit codes (spec: 4 > 3 > 1 > 2 > 0 when several apply).
 */
import { CATALOG, type ExitCategory } from '../errors/catalog';
import type { Diagnostic } from '../errors/diagnostic';
import { mostSevereExit } from '../errors/severity';
import type { ReconcileUnitReport, Report } from './types';

/** The most severe of the codes, by the one ranking in errors/severity.ts. */
export function worst(codes: number[]): number {
  return mostSevereExit(codes);
}

/** Commands that run units: a cancellation there is exit 4, elsewhere a refusal (exit 1). */
const RUN_COMMANDS = new Set(['reconcile', 'teardown']);

export function exitOfDiagnostic(d: Diagnostic, command: string): ExitCategory {
  if (d.code === 'NYL-RUN-CANCELLED') return RUN_COMMANDS.has(command) ? 4 : 1;
  return CATALOG[d.code].exit;
}

export function exitCodeOf(report: Report | undefined, errors: Diagnostic[], command: string): number {
  const codes: number[] = errors.map((d) => exitOfDiagnostic(d, command));
  if (report?.kind === 'MultiEnvironmentReport') codes.push(...Object.values(report.exitCodes));
  if (report?.kind === 'StatusReport') {
    for (const u of Object.values(report.units)) {
      if (u.state === 'uncertain' || (u.state === 'held' && u.condition?.type === 'uncertain')) codes.push(4);
      else if (u.state === 'failed') codes.push(3);
      else if (u.state !== 'current' && u.state !== 'retained' && u.state !== 'released') codes.push(2);
    }
  }
  if (report?.kind === 'StateOperationReport' && report.operation === 'verify') codes.push(...verifyExits(report.details));
  if (report?.kind === 'ReconcileReport') {
    const counted = report.selected ? report.selected.filter((n) => report.units[n]) : Object.keys(report.units);
    for (const n of counted) {
      const u = report.units[n]!;
      codes.push(u.uncertain ? 4 : report.operation === 'plan' ? exitOfPlanRow(u) : exitOfResult(u.result));
    }
  }
  return worst(codes);
}

/** `nyl verify`: a drifted unit is 2 (a failed check is its error NYL-DRIFT-CHECK-FAILED, 1). */
function verifyExits(details: Record<string, unknown>): number[] {
  const units = (details.units ?? {}) as Record<string, { drift?: unknown }>;
  return Object.values(units).map((u) => (u.drift === 'drifted' ? 2 : 0));
}

/**
 * `nyl plan`: what the next reconcile would do. 0 only where it would do nothing (current); 3 and
 * 4 where the unit waits for an operator (a failure that needs acknowledgement, an uncertain unit
 * under manual recovery), as a reconcile's table counts them; 2 for everything else it would do or
 * wait for: execute, wait, teardown, retain, release, blocked, held, awaiting-approval, drifted,
 * pending-teardown, and a current unit whose desired document it would write again.
 */
function exitOfPlanRow(u: ReconcileUnitReport): number {
  if (u.result === 'current') return u.reason === 'desired-restored' ? 2 : 0;
  const exit = exitOfResult(u.result);
  return exit === 0 ? 2 : exit;
}

function exitOfResult(result: string): number {
  // "recovered": a dead run left the unit uncertain and this run did not execute it again.
  if (result === 'uncertain' || result === 'recovered') return 4;
  if (result === 'failed') return 3;
  if (['blocked', 'held', 'awaiting-approval', 'drifted', 'pending-teardown', 'tearing-down'].includes(result)) return 2;
  return 0;
}
