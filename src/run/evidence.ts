/**
 * The evidence refs a takeover keeps (`PREFIX/ENV/evidence/UNIT/RUN`): the run record of a unit
 * left uncertain, kept after its run ref was consumed, so that `nyl recover` can show and adopt it.
 */
import { evidencePrefix } from '../state/location';
import type { RefSnapshot, StateStore } from '../state/store';

export interface EvidenceRef {
  unit: string;
  run: string;
  ref: string;
  oid: string;
}

export function evidenceRefs(store: StateStore, refs: RefSnapshot): EvidenceRef[] {
  const prefix = evidencePrefix(store.loc);
  const out: EvidenceRef[] = [];
  for (const [ref, oid] of refs) {
    if (!ref.startsWith(prefix)) continue;
    const [unit, run] = ref.slice(prefix.length).split('/');
    if (unit && run) out.push({ unit, run, ref, oid });
  }
  return out;
}

export function evidenceRefName(store: StateStore, unit: string, run: string): string {
  return `${evidencePrefix(store.loc)}${unit}/${run}`;
}

