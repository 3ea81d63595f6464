/**
 * What happened to each unit in a run, as reports and transition commits name it.
 */
import type { ConditionRecord, DesiredUnitDoc, ReceiptRecord } from '../state/documents';
import type { Wait } from '../plan/resolve';

export type UnitResult =
  | 'executed'
  | 'current'
  | 'imported'
  | 'recovered'
  | 'failed'
  | 'uncertain'
  | 'held'
  | 'blocked'
  | 'awaiting-approval';

export interface UnitOutcome {
  name: string;
  kind: string;
  result: UnitResult;
  detail: string;
  uid?: string;
  executionKey?: string;
  durationMs?: number;
  waits?: Wait[];
  /** Set when the run decided a new desired document for the unit. */
  desired?: DesiredUnitDoc;
  /** Set when the run produced a receipt. */
  receipt?: ReceiptRecord;
  /** Set when the run left a condition (failed, uncertain). */
  condition?: ConditionRecord;
  /** Was the unit dispatched (its driver started) in this run? */
  dispatched: boolean;
  /** A held unit whose condition is uncertain: held, and still exit 4. */
  uncertain?: boolean;
}
