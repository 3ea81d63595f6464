/**
 * `nyl show -e ENV --unit U`: one unit's desired and observed documents, its receipt, outputs,
 * condition, hold, drift and its last runs. Reads state only: no lease, no rendering, no write.
 *
 * The receipt is shown by its own fields (run, executionKey, finishedAt, outputs), never by its
 * `desired` field: that one is the desired document the receipt was produced for, whose form
 * state may change (an inline copy, or a reference to a blob); the desired document shown is the
 * one on the desired ref. A sensitive output shows its digest only: state keeps a sealed value
 * for some, and no report prints it.
 */
import type { ObservedUnitDoc, ReceiptRecord } from '../../state/documents';
import type { RefSnapshot } from '../../state/store';
import { emptyDiagnostics, FORMAT_VERSION, REPORT_API_VERSION, type ShowReport, type ShownReceipt } from '../../report/types';
import type { Runtime } from '../../util/runtime';
import type { EnvironmentRequest, OpenedEnvironment } from '../shared/context';
import { locationDetails, readActiveState, unknownUnit, withEnvironmentRead } from './inspect-state';
import { selectEntries } from './log';

/** How many of the unit's operations show lists under its last runs. */
const SHOW_LAST_RUNS = 5;

interface ShowRequest extends EnvironmentRequest {
  unit: string;
}

/** The receipt without its desired document and without any sealed value. */
export function shownReceipt(r: ReceiptRecord): ShownReceipt {
  const shown: ShownReceipt = { run: r.run, executionKey: r.executionKey, finishedAt: r.finishedAt, outputs: { ...r.outputs } };
  if (r.toolState) shown.toolState = r.toolState;
  if (r.toolReads) shown.toolReads = r.toolReads;
  const sensitive = Object.entries(r.sensitiveOutputs ?? {});
  if (sensitive.length > 0) shown.sensitiveOutputs = Object.fromEntries(sensitive.map(([k, v]) => [k, { sha256: v.sha256 }]));
  // Kept apart by design; should a key be in both, its value stays unshown.
  for (const [k] of sensitive) delete shown.outputs[k];
  return shown;
}

/** The observed document with its receipt as shownReceipt shows it (`shown`, of doc.receipt). */
function shownObserved(doc: ObservedUnitDoc, shown: ShownReceipt | undefined): Record<string, unknown> {
  const { receipt: _receipt, ...rest } = doc;
  return { ...rest, ...(shown ? { receipt: shown } : {}) };
}

export async function show(rt: Runtime, req: ShowRequest): Promise<ShowReport> {
  return withEnvironmentRead(rt, req, (opened) => showOpened(opened, req.unit));
}

function emptyReport(opened: OpenedEnvironment, unit: string): ShowReport {
  return {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'ShowReport',
    operation: 'show',
    environment: opened.env.name,
    unit,
    lastRuns: [],
    details: locationDetails(opened),
    ...emptyDiagnostics(),
  };
}

/** `known`: the state refs read a moment ago in this opening, if any (readRefs). */
export async function showOpened(opened: OpenedEnvironment, unit: string, known?: RefSnapshot): Promise<ShowReport> {
  const report = emptyReport(opened, unit);
  const read = await readActiveState(opened, report.errors, known);
  if (read?.view.desiredOid) report.desired = read.view.desiredOid;
  if (read?.view.observedOid) report.observed = read.view.observedOid;
  if (!read?.active || unknownUnit(opened, read.view, unit, report.errors)) return report;
  const desired = read.view.desiredUnits.get(unit);
  const observed = read.view.observedUnits.get(unit);
  if (desired) report.desiredDocument = { ...desired };
  const receipt = observed?.receipt ? shownReceipt(observed.receipt) : undefined;
  if (observed) report.observedDocument = shownObserved(observed, receipt);
  if (receipt) report.receipt = receipt;
  report.lastRuns = (await selectEntries(opened, read.refs, unit, SHOW_LAST_RUNS)).entries;
  return report;
}
