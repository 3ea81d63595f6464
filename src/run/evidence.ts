/**
 * The evidence refs an importer keeps:
 * - `PREFIX/ENV/evidence/UNIT/RUN`: the run record of a unit left uncertain, kept after its run
 *   ref was consumed, so that `nyl recover` can show and adopt it; deleted once no uncertain unit
 *   needs it;
 * - `PREFIX/ENV/evidence/UNIT/late/RUN`: a late checkpoint (one that arrived after a newer result
 *   of its unit), kept even once the unit is not uncertain: its effects happened, and the record
 *   is the only trace of them. It goes when `recover --accept RUN` adopts it or the unit leaves
 *   state. `late` is no run id, so the two forms never clash.
 */
import { evidencePrefix } from '../state/location';
import type { RefSnapshot, StateStore } from '../state/store';

export interface EvidenceRef {
  unit: string;
  run: string;
  ref: string;
  oid: string;
  /** A late checkpoint's evidence. */
  late: boolean;
}

export function evidenceRefs(store: StateStore, refs: RefSnapshot): EvidenceRef[] {
  const prefix = evidencePrefix(store.loc);
  const out: EvidenceRef[] = [];
  for (const [ref, oid] of refs) {
    if (!ref.startsWith(prefix)) continue;
    const parts = ref.slice(prefix.length).split('/');
    const late = parts.length === 3 && parts[1] === 'late';
    const [unit, run] = late ? [parts[0], parts[2]] : parts;
    if (unit && run && (late || parts.length === 2)) out.push({ unit, run, ref, oid, late });
  }
  return out;
}

export function evidenceRefName(store: StateStore, unit: string, run: string): string {
  return `${evidencePrefix(store.loc)}${unit}/${run}`;
}

export function lateEvidenceRefName(store: StateStore, unit: string, run: string): string {
  return `${evidencePrefix(store.loc)}${unit}/late/${run}`;
}
