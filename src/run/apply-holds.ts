/**
 * Applies holds (from `nyl hold` or from signals delivered to a run) to desired documents.
 */
import { diagnostic, type Diagnostic } from '../errors/diagnostic';
import type { DesiredUnitDoc, HoldRecord, ObservedUnitDoc } from '../state/documents';
import { holdDocument } from '../plan/hold';

export interface HoldRequest {
  unit: string;
  by: string;
  reason?: string;
  at: string;
}

export interface AppliedHolds {
  desired: Map<string, DesiredUnitDoc>;
  held: string[];
  markers: string[];
  alreadyHeld: string[];
  refused: string[];
  diagnostics: Diagnostic[];
}

/** `generation`: the state's, which tells the current incarnation (../plan/unit-view.ts). */
export function applyHolds(
  env: string,
  desired: Map<string, DesiredUnitDoc>,
  observed: Map<string, ObservedUnitDoc>,
  holds: HoldRequest[],
  generation: number,
): AppliedHolds {
  const out: AppliedHolds = { desired: new Map(desired), held: [], markers: [], alreadyHeld: [], refused: [], diagnostics: [] };
  for (const h of holds) {
    const record: HoldRecord = { by: h.by, since: h.at };
    if (h.reason) record.reason = h.reason;
    const decision = holdDocument(out.desired.get(h.unit), observed.get(h.unit), record, generation);
    if (decision.kind === 'refused') {
      out.refused.push(h.unit);
      out.diagnostics.push(
        diagnostic('NYL-HOLD-REFUSED', 'error', `${h.unit} is a retained tombstone: nothing reconciles it, so it cannot be held`, {
          env,
          unit: h.unit,
          units: [h.unit],
        }),
      );
    } else if (decision.kind === 'already-held') {
      if (!out.alreadyHeld.includes(h.unit)) out.alreadyHeld.push(h.unit);
    } else {
      out.desired.set(h.unit, decision.doc);
      out.held.push(h.unit);
      if (decision.marker) out.markers.push(h.unit);
    }
  }
  return out;
}
