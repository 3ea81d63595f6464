/**
 * `nyl log -e ENV [--unit U] [-n N]`: the environment's history from its transition commits, one
 * entry per operation, newest first (docs/design.md, "nyl log, show and outputs").
 *
 * Reads the first-parent histories of both state refs and merges them (./log-entries.ts);
 * takes no lease and writes nothing. A deleted or moved state still has its history, which is
 * what a user looks for then: log shows it under a warning; missing state is an error, as in
 * status. The histories are walked whole (their merge needs both); with --unit, the entries are
 * then checked newest first and the checks stop at the first matching entry past the limit, since
 * telling whether an operation changed a unit costs a read per commit.
 */
import { damageDiagnostic } from '../../state/damage';
import {
  entryTime,
  type HistoryEntry,
  namesUnit,
  parseTransition,
  readEnvironmentHistory,
  type TransitionView,
  unitChangeCheck,
  unitResults,
} from './log-entries';
import { readStateFile } from '../../state/read';
import type { RefSnapshot } from '../../state/store';
import { emptyDiagnostics, FORMAT_VERSION, type LogEntry, type LogReport, REPORT_API_VERSION } from '../../report/types';
import type { Runtime } from '../../util/runtime';
import type { EnvironmentRequest, OpenedEnvironment } from '../shared/context';
import { locationDetails, readRefs, withEnvironmentRead } from './inspect-state';
import { inactiveStateOf } from '../state/state-checks';

/** How many entries log shows without -n: a screenful, as `helm history` and `kubectl rollout history` users expect a short list. */
const DEFAULT_LOG_LIMIT = 20;

interface LogRequest extends EnvironmentRequest {
  unit?: string;
  /** At most this many entries; 0 for all. Default DEFAULT_LOG_LIMIT. */
  limit?: number;
}

/** An operation as the report shows it; `t` and `results`: its message parsed, when the caller has already. */
export function logEntryOf(e: HistoryEntry, t: TransitionView = parseTransition(e.message), results: ReadonlyMap<string, string> = unitResults(t)): LogEntry {
  const tr = t.trailers;
  const by = tr['Nyl-Requested-By'] ?? e.desired?.author ?? e.observed?.author;
  const entry: LogEntry = { operation: t.operation, at: entryTime(e), headline: t.headline, units: Object.fromEntries(results), body: t.body };
  if (e.desired) entry.desired = e.desired.oid;
  if (e.observed) entry.observed = e.observed.oid;
  if (by) entry.by = by;
  if (tr['Nyl-Reason']) entry.reason = tr['Nyl-Reason'];
  if (tr['Nyl-Run']) entry.run = tr['Nyl-Run'];
  if (tr['Nyl-Source']) entry.source = tr['Nyl-Source'];
  if (t.operation === 'state-move') entry.moved = movedOf(t.body);
  return entry;
}

function movedOf(body: Record<string, unknown>): { from?: string; to?: string } {
  return { ...(typeof body.from === 'string' ? { from: body.from } : {}), ...(typeof body.to === 'string' ? { to: body.to } : {}) };
}

/**
 * The entries to show, newest first, and whether older ones were left out. With a unit, an
 * operation counts when it names the unit or changed one of its documents.
 */
export async function selectEntries(
  opened: OpenedEnvironment,
  refs: RefSnapshot,
  unit: string | undefined,
  limit: number,
): Promise<{ entries: LogEntry[]; truncated: boolean }> {
  const { reader } = opened.store;
  const history = await readEnvironmentHistory(reader, opened.loc, refs);
  const changedUnit = unit !== undefined ? unitChangeCheck(reader, opened.loc, unit) : undefined;
  const entries: LogEntry[] = [];
  for (const e of history) {
    const t = parseTransition(e.message);
    const results = unitResults(t);
    if (unit !== undefined && !namesUnit(t, unit, results) && !(await changedUnit!(e))) continue;
    // Truncated only when an entry that would show was left out.
    if (limit > 0 && entries.length === limit) return { entries, truncated: true };
    entries.push(logEntryOf(e, t, results));
  }
  return { entries, truncated: false };
}

export async function log(rt: Runtime, req: LogRequest): Promise<LogReport> {
  return withEnvironmentRead(rt, req, (opened) => logOpened(opened, req));
}

/** `known`: the state refs read a moment ago in this opening, if any (readRefs). */
export async function logOpened(opened: OpenedEnvironment, req: LogRequest, known?: RefSnapshot): Promise<LogReport> {
  const report: LogReport = {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'LogReport',
    operation: 'log',
    environment: opened.env.name,
    ...(req.unit !== undefined ? { unit: req.unit } : {}),
    entries: [],
    truncated: false,
    details: locationDetails(opened),
    ...emptyDiagnostics(),
  };
  const read = await readRefs(opened, known);
  if (!read.refs) {
    report.errors.push(...read.errors);
    return report;
  }
  const { refs } = read;
  const state = await readStateFile(opened.store.reader, opened.loc, opened.loc.desiredRef, refs.get(opened.loc.desiredRef));
  // A damaged state.yaml stops writers, not the history that helps repair it.
  if (state.damage) report.errors.push(damageDiagnostic(opened.env.name, state.damage));
  else {
    const inactive = await inactiveStateOf(opened, refs, state.doc, state.doc ? 'warning' : 'error');
    if (inactive?.severity === 'error') {
      report.errors.push(inactive);
      return report;
    }
    if (inactive) report.warnings.push(inactive);
  }
  const selected = await selectEntries(opened, refs, req.unit, req.limit ?? DEFAULT_LOG_LIMIT);
  report.entries = selected.entries;
  report.truncated = selected.truncated;
  return report;
}
