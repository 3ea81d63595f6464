/**
 * `nyl outputs -e ENV [--unit U]`: the outputs of the units' receipts, for scripts. Reads state
 * only: no lease, no rendering, no write.
 *
 * A sensitive output's value is never printed: state keeps only its digest (and, for some kinds,
 * a sealed value that no report shows). It is left out of `outputs` and named under `sensitive`,
 * so that a script that reads it gets nothing instead of a placeholder it could take for the value.
 */
import type { ObservedUnitDoc } from '../../state/documents';
import { emptyDiagnostics, FORMAT_VERSION, type OutputsReport, REPORT_API_VERSION } from '../../report/types';
import { byCodeUnits } from '../../util/compare';
import type { Runtime } from '../../util/runtime';
import type { EnvironmentRequest, OpenedEnvironment } from '../shared/context';
import { locationDetails, readActiveState, unknownUnit, withEnvironmentRead } from './inspect-state';

interface OutputsRequest extends EnvironmentRequest {
  unit?: string;
}

/** A unit's plain outputs and the names of its sensitive ones (none without a receipt). */
export function unitOutputs(doc: ObservedUnitDoc | undefined): { outputs: Record<string, unknown>; sensitive: string[] } {
  const receipt = doc?.receipt;
  if (!receipt) return { outputs: {}, sensitive: [] };
  const sensitive = Object.keys(receipt.sensitiveOutputs ?? {}).sort(byCodeUnits);
  const outputs = Object.fromEntries(Object.entries(receipt.outputs).filter(([k]) => !sensitive.includes(k)));
  return { outputs, sensitive };
}

export async function outputs(rt: Runtime, req: OutputsRequest): Promise<OutputsReport> {
  return withEnvironmentRead(rt, req, (opened) => outputsOpened(opened, req.unit));
}

function emptyReport(opened: OpenedEnvironment, unit: string | undefined): OutputsReport {
  return {
    apiVersion: REPORT_API_VERSION,
    formatVersion: FORMAT_VERSION,
    kind: 'OutputsReport',
    operation: 'outputs',
    environment: opened.env.name,
    ...(unit !== undefined ? { unit } : {}),
    outputs: {},
    sensitive: unit !== undefined ? [] : {},
    details: locationDetails(opened),
    ...emptyDiagnostics(),
  };
}

async function outputsOpened(opened: OpenedEnvironment, unit: string | undefined): Promise<OutputsReport> {
  const report = emptyReport(opened, unit);
  const read = await readActiveState(opened, report.errors);
  if (!read?.active) return report;
  const { view } = read;
  if (unit === undefined) {
    allOutputs(view.observedUnits, report);
    return report;
  }
  if (unknownUnit(opened, view, unit, report.errors)) return report;
  const one = unitOutputs(view.observedUnits.get(unit));
  report.outputs = one.outputs;
  report.sensitive = one.sensitive;
  return report;
}

/** Every unit with a receipt, by name. */
function allOutputs(observed: ReadonlyMap<string, ObservedUnitDoc>, report: OutputsReport): void {
  const sensitive: Record<string, string[]> = {};
  for (const name of [...observed.keys()].sort(byCodeUnits)) {
    const doc = observed.get(name);
    if (!doc?.receipt) continue;
    const one = unitOutputs(doc);
    report.outputs[name] = one.outputs;
    if (one.sensitive.length > 0) sensitive[name] = one.sensitive;
  }
  report.sensitive = sensitive;
}
