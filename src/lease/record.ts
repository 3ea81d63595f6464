/**
 * The lease record: the `lease.yaml` of the commit the lease ref points at, and the timing rules
 * every holder and taker applies to it.
 */
import { API_VERSION, toYaml } from '../state/documents';
import { parseLeaseDocument } from './lease-doc';
import type { RunHolder } from '../state/run-record';

type LeaseHolder = RunHolder;

interface LeaseBreak {
  by: string;
  reason: string;
  at: string;
}

export interface LeaseRecord {
  apiVersion: string;
  kind: 'Lease';
  environment: string;
  run: string;
  operation: string;
  holder: LeaseHolder;
  acquiredAt: string;
  /** ISO time with milliseconds; past it (plus the taker's skew margin) an importer may take over. */
  deadline: string;
  renewedAt?: string;
  broken?: LeaseBreak;
  /**
   * The holder whose lease was broken, kept when an importer carries the break forward: then
   * `broken` is that holder's break, not this one's (see carriesBreak).
   */
  brokenHolder?: { run: string; operation: string; holder: LeaseHolder };
  /**
   * Breaks no transition commit has recorded yet: an importer that took a broken lease over and
   * died carries them, so the next importer records every break, not just the last one.
   */
  unrecordedBreaks?: LeaseBreakRecord[];
}

/** A break as a transition commit records it under leaseBroken. */
export interface LeaseBreakRecord {
  by: string;
  reason: string;
  at: string;
  run: string;
  operation: string;
  holder: string;
}

/** The break of a broken lease record, naming the holder whose lease was broken. */
function breakOf(record: LeaseRecord): LeaseBreakRecord | undefined {
  const b = record.broken;
  if (!b) return undefined;
  const holder = record.brokenHolder ?? { run: record.run, operation: record.operation, holder: record.holder };
  return { by: b.by, reason: b.reason, at: b.at, run: holder.run, operation: holder.operation, holder: holder.holder.name };
}

/**
 * Is `broken` a break the holder carries (a recover keeps the break of the lease it took over, so
 * that one that dies leaves it for the next importer) rather than a break of the holder itself?
 */
export function carriesBreak(record: Pick<LeaseRecord, 'broken' | 'brokenHolder'>): boolean {
  return record.broken !== undefined && record.brokenHolder !== undefined;
}

/**
 * The record of a carrier about to be broken itself (`nyl lease break`): the break it carried
 * joins its unrecorded breaks, so the next importer records both.
 */
export function withoutCarriedBreak(record: LeaseRecord): LeaseRecord {
  if (!carriesBreak(record)) return record;
  const rest: LeaseRecord = { ...record, unrecordedBreaks: breaksCarriedBy(record) };
  delete rest.broken;
  delete rest.brokenHolder;
  return rest;
}

/** Every break a replaced lease leaves unrecorded, oldest first, without duplicates. */
export function breaksCarriedBy(record: LeaseRecord): LeaseBreakRecord[] {
  const all = [...(record.unrecordedBreaks ?? []), ...(breakOf(record) ? [breakOf(record)!] : [])];
  const seen = new Set<string>();
  return all.filter((b) => {
    const key = `${b.run}|${b.by}|${b.at}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

export type LeaseStatus = 'live' | 'expired' | 'broken';

/** Operations that import dead runs and so may take over an expired or broken lease. */
export const IMPORTERS = new Set(['reconcile', 'teardown', 'recover']);

/** Operations that leave run refs behind when they die. */
export const RUN_OPERATIONS = new Set(['reconcile', 'teardown']);

/**
 * The margins of a lease of a given duration:
 * - skewMs: a taker treats a lease as expired only once its deadline plus this margin has passed
 *   on the taker's own clock, so that a holder whose clock runs behind is not taken over early;
 *   and a record stamped further than this in the taker's future is evidence of clock skew;
 * - safetyMs: a holder starts no unit when less than this is left before the deadline it last
 *   pushed (a renewal that keeps failing stops it from starting anything near its deadline).
 * Both are a tenth of the duration, at most 30 s: 30 s for the default 5-minute lease. The
 * Environment's `lease.skewMargin` sets the skew margin where clocks are known to drift further.
 */
export interface LeaseTiming {
  durationMs: number;
  skewMs: number;
  safetyMs: number;
}

/** The lease settings of an Environment (`spec.lease`). */
export interface LeaseSettings {
  durationMs: number;
  skewMarginMs?: number | undefined;
}

const MAX_LEASE_MARGIN_MS = 30_000;

export function leaseTiming(settings: LeaseSettings): LeaseTiming {
  const margin = Math.min(MAX_LEASE_MARGIN_MS, Math.floor(settings.durationMs / 10));
  return { durationMs: settings.durationMs, skewMs: settings.skewMarginMs ?? margin, safetyMs: margin };
}

/**
 * How far beyond the skew margin the holder stamped its record in the caller's future (its
 * acquisition or last renewal), or undefined when it did not: a clock that runs that far ahead
 * or behind makes every deadline comparison meaningless, so it is reported, never taken over.
 */
export function clockSkewOf(
  record: Pick<LeaseRecord, 'acquiredAt' | 'renewedAt' | 'broken' | 'brokenHolder'>,
  nowMs: number,
  skewMs: number,
): number | undefined {
  if (record.broken && !carriesBreak(record)) return undefined;
  const stamped = Math.max(Date.parse(record.acquiredAt), record.renewedAt ? Date.parse(record.renewedAt) : 0);
  return stamped - nowMs > skewMs ? stamped - nowMs : undefined;
}

/**
 * live until the deadline plus the skew margin has passed on the caller's clock. A broken lease
 * is broken at once. A carried break counts only once its carrier is past that point too: a live
 * recover holds its lease like any holder, and a dead one leaves the break to the next importer.
 */
export function leaseStatus(record: LeaseRecord, nowMs: number, skewMs: number): LeaseStatus {
  const expired = Date.parse(record.deadline) + skewMs <= nowMs;
  if (record.broken && (expired || !carriesBreak(record))) return 'broken';
  return expired ? 'expired' : 'live';
}

export function serializeLease(record: LeaseRecord): string {
  return toYaml(record);
}

/** The lease record of a lease.yaml, or undefined when it is damaged (see ./lease-doc.ts). */
export function parseLease(text: string): LeaseRecord | undefined {
  const parsed = parseLeaseDocument<LeaseRecord>(text);
  return parsed.ok ? parsed.value : undefined;
}

export function newLeaseRecord(init: Omit<LeaseRecord, 'apiVersion' | 'kind'>): LeaseRecord {
  return { apiVersion: API_VERSION, kind: 'Lease', ...init };
}
