/**
 * What `nyl state reseal` changes, as a pure function over an environment's observed documents
 * and a key ring (src/util/sealed.ts).
 *
 * After a rotation the first key of the ring is the new one. Each sealed value a receipt records
 * is opened with the ring and sealed again with the first key in the current form (v2, bound to
 * the environment, the unit and the output), and its digest is made again with the first key, so
 * that the old key can leave the ring. A record whose seal is already the first key's in v2 form
 * and whose digest is the first key's is left as it is: a second reseal changes nothing.
 *
 * A value its tool keeps (a module's backend: a record without `sealed`) cannot be digested again
 * without running the tool, so it is left and listed with the key its digest needs. A sealed value
 * that no key opens is listed too; the operation then refuses as a whole, since a reseal that
 * left some values under the old key would let the operator drop a key still needed.
 */
import type { DesiredUnitDoc, ObservedUnitDoc, SensitiveOutputRecord } from '../../state/documents';
import { isCurrentSeal, type KeyRing, keyIdOf, type KeyRingProblem, type SealBinding } from '../../util/sealed';

/** A digest of a value a backend keeps, left as it is; keyId: the key it needs (none for unkeyed forms). */
export interface KeptDigest {
  unit: string;
  output: string;
  keyId?: string;
}

/** A sealed value the ring cannot open: the key that sealed it (when its form names one) and why. */
interface UnopenedSeal {
  unit: string;
  output: string;
  keyId?: string;
  problem: string;
}

export interface ResealOutcome {
  /** The id of the ring's first key, which sealed and digested what changed; undefined without a usable ring. */
  sealingKeyId?: string;
  /** The observed documents after the reseal: unchanged ones are the same objects. */
  observed: Map<string, ObservedUnitDoc>;
  /** `unit.output` of every record that changed, sorted. */
  resealed: string[];
  /** `unit.output` of every record whose digest changed (what consumers' execution keys cover), sorted. */
  redigested: string[];
  kept: KeptDigest[];
  /** Records already current. */
  unchanged: number;
  unopened: UnopenedSeal[];
}

/** What became of one record: the same, a new one, kept by a backend, or not opened. */
type RecordOutcome =
  | { kind: 'unchanged' }
  | { kind: 'changed'; record: SensitiveOutputRecord; redigested: boolean }
  | { kind: 'kept'; kept: KeptDigest }
  | { kind: 'unopened'; unopened: UnopenedSeal };

function isKeyedBy(digest: string, keyId: string | undefined): boolean {
  return keyId !== undefined && digest.startsWith('hmac-sha256:') && keyIdOf(digest) === keyId;
}

/** A digest a backend's value keeps: current when the first key made it, else listed with the key it needs. */
function keptRecord(unit: string, output: string, record: SensitiveOutputRecord, ring: KeyRing | KeyRingProblem): RecordOutcome {
  const sealingKeyId = 'problem' in ring ? undefined : ring.sealingKeyId;
  if (isKeyedBy(record.sha256, sealingKeyId)) return { kind: 'unchanged' };
  const keyId = record.sha256.startsWith('hmac-sha256:') ? keyIdOf(record.sha256) : undefined;
  return { kind: 'kept', kept: { unit, output, ...(keyId ? { keyId } : {}) } };
}

function resealRecord(binding: SealBinding, record: SensitiveOutputRecord & { sealed: string }, ring: KeyRing | KeyRingProblem): RecordOutcome {
  const { unit, output } = binding;
  if ('problem' in ring) return { kind: 'unopened', unopened: unopened(unit, output, record.sealed, ring.problem) };
  const sealCurrent = isCurrentSeal(record.sealed, ring.sealingKeyId);
  const digestCurrent = isKeyedBy(record.sha256, ring.sealingKeyId);
  if (sealCurrent && digestCurrent) return { kind: 'unchanged' };
  const opened = ring.open(binding, record.sealed);
  if (!opened.ok) return { kind: 'unopened', unopened: unopened(unit, output, record.sealed, opened.problem) };
  // A digest the first key made stays: the consumers' execution keys cover it, and it is current.
  const sha256 = digestCurrent ? record.sha256 : ring.digest(binding, opened.value);
  const sealed = sealCurrent ? record.sealed : ring.seal(binding, opened.value);
  return { kind: 'changed', record: { ...record, sha256, sealed }, redigested: !digestCurrent };
}

function unopened(unit: string, output: string, sealed: string, problem: string): UnopenedSeal {
  const keyId = keyIdOf(sealed);
  return { unit, output, ...(keyId ? { keyId } : {}), problem };
}

/** One unit's records: its document with the new ones (the same object when none changed). */
function resealUnit(environment: string, unit: string, doc: ObservedUnitDoc, ring: KeyRing | KeyRingProblem, out: ResealOutcome): ObservedUnitDoc {
  const records = doc.receipt?.sensitiveOutputs;
  if (!doc.receipt || !records) return doc;
  const next: Record<string, SensitiveOutputRecord> = {};
  let changed = false;
  for (const [output, record] of Object.entries(records).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const binding = { environment, unit, output };
    const r = record.sealed === undefined ? keptRecord(unit, output, record, ring) : resealRecord(binding, { ...record, sealed: record.sealed }, ring);
    next[output] = r.kind === 'changed' ? r.record : record;
    if (r.kind === 'unchanged') out.unchanged++;
    else if (r.kind === 'kept') out.kept.push(r.kept);
    else if (r.kind === 'unopened') out.unopened.push(r.unopened);
    else {
      changed = true;
      out.resealed.push(`${unit}.${output}`);
      if (r.redigested) out.redigested.push(`${unit}.${output}`);
    }
  }
  return changed ? { ...doc, receipt: { ...doc.receipt, sensitiveOutputs: next } } : doc;
}

/** The observed documents of `environment` with every sealed value and its digest under the ring's first key. */
export function resealObserved(environment: string, observed: ReadonlyMap<string, ObservedUnitDoc>, ring: KeyRing | KeyRingProblem): ResealOutcome {
  const out: ResealOutcome = {
    ...('problem' in ring ? {} : { sealingKeyId: ring.sealingKeyId }),
    observed: new Map(),
    resealed: [],
    redigested: [],
    kept: [],
    unchanged: 0,
    unopened: [],
  };
  for (const unit of [...observed.keys()].sort()) out.observed.set(unit, resealUnit(environment, unit, observed.get(unit)!, ring, out));
  return out;
}

/**
 * The units whose desired document reads one of these outputs (`unit.output`) as a secret: their
 * execution keys cover the digest, so each executes once on the next reconcile. Sorted.
 */
export function consumersOf(desired: ReadonlyMap<string, DesiredUnitDoc>, redigested: readonly string[]): string[] {
  const changed = new Set(redigested);
  const consumers = [...desired].filter(([, doc]) => (doc.reads?.secrets ?? []).some((r) => changed.has(`${r.unit}.${r.output}`)));
  return consumers.map(([name]) => name).sort();
}
