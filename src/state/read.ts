/**
 * Reads an environment's state documents from the desired and observed commits, through the
 * store's batch reader: one tree read per directory and all unit files concurrently.
 *
 * Every document is checked against its shape (./shapes.ts). A document that is not what Nyl
 * wrote is damage: its unit is left out of the maps, and by default the read refuses with
 * NYL-STATE-CORRUPT, so that no command decides on a document it misread. `status` and `recover`
 * read with `tolerate` to show and repair the damage.
 */
import { fail } from '../errors/diagnostic';
import { parseTree } from '../git/batch-reader';
import { type Damage, damageOf, requireUndamaged } from './damage';
import type { DesiredUnitDoc, EnvironmentStateDoc, ObservedUnitDoc } from './documents';
import { type StateLocation, statePathOf } from './location';
import { parseStateDocument } from './parse';
import { decodeDesired, decodeObserved, referencedBlob, rememberStored, storedOf } from './unit-format';
import type { DocumentCache, ObjectReader, RefSnapshot } from './store';

export interface EnvironmentStateView {
  desiredOid?: string;
  observedOid?: string;
  /** state.yaml of the desired ref (the observed ref carries a copy). */
  state?: EnvironmentStateDoc;
  desiredUnits: Map<string, DesiredUnitDoc>;
  observedUnits: Map<string, ObservedUnitDoc>;
  /** Documents that are not what Nyl wrote; their units are missing from the maps above. */
  damage: Damage[];
}

/** A state.yaml as read: the document, damage, or neither (no state.yaml). */
export interface StateFileRead {
  doc?: EnvironmentStateDoc;
  damage?: Damage;
}

/** Reads the state.yaml of a state ref's commit. */
export async function readStateFile(reader: ObjectReader, loc: StateLocation, ref: string, commit: string | undefined): Promise<StateFileRead> {
  if (!commit) return {};
  const path = statePathOf(loc, 'state.yaml');
  const blob = await reader.read(`${commit}:${path}`);
  if (!blob || blob.type !== 'blob') {
    // A ref that is not a commit holds no state.yaml either: that is damage, not missing state.
    const target = blob ? undefined : await reader.read(commit);
    if (target && target.type !== 'commit')
      return { damage: damageOf('state', { ref, object: commit }, { problem: `the ref points at a ${target.type}, not a commit` }) };
    return blob ? { damage: damageOf('state', { ref, object: commit, path }, { problem: `${path} is a ${blob.type}, not a file` }) } : {};
  }
  const parsed = parseStateDocument<EnvironmentStateDoc>('state', blob.content.toString());
  return parsed.ok ? { doc: parsed.value } : { damage: damageOf('state', { ref, object: commit, path }, parsed.flaw) };
}

/** Reads the state.yaml of a state ref's commit; refuses NYL-STATE-CORRUPT when it is damaged. */
export async function readStateDoc(
  reader: ObjectReader,
  loc: StateLocation,
  ref: string,
  commit: string | undefined,
): Promise<EnvironmentStateDoc | undefined> {
  const read = await readStateFile(reader, loc, ref, commit);
  requireUndamaged(loc.environment, read.damage ? [read.damage] : []);
  return read.doc;
}

interface UnitDocsRead<T> {
  units: Map<string, T>;
  damage: Damage[];
}

/**
 * The cache kind of checked unit documents, as Nyl works with them (receipts' desired documents
 * read back), with each one's blob and form (./unit-format.ts). Earlier kinds are not trusted.
 */
const CHECKED_UNITS = 'state-units-2';

type CachedUnit<T> = [name: string, doc: T, oid: string, form: 1 | 2];

/** The desired documents by blob id that an observed read resolves receipts from (desiredByBlob). */
type KnownDesired = () => ReadonlyMap<string, DesiredUnitDoc> | Promise<ReadonlyMap<string, DesiredUnitDoc>>;

/** A unit file of a units tree, parsed and shape-checked, before it is decoded. */
interface RawUnit {
  unit: string;
  oid: string;
  path: string;
  raw: Record<string, unknown>;
}

/**
 * Reads every units/NAME.yaml of a state commit. The documents of a units tree are cached by the
 * tree's object id: a run that finds nothing to do reads one tree and one JSON file per ref
 * instead of parsing a YAML document per unit. A tree with damage is never cached. `known`: the
 * desired documents already read (or being read), by blob id, which the observed side's receipts
 * refer to; asked for only when the observed tree is not in the cache.
 */
export async function readUnitDocs<T>(
  reader: ObjectReader,
  loc: StateLocation,
  side: 'desired' | 'observed',
  commit: string | undefined,
  cache?: DocumentCache,
  known: KnownDesired = () => new Map(),
): Promise<UnitDocsRead<T>> {
  const units = new Map<string, T>();
  if (!commit) return { units, damage: [] };
  const treeObject = await reader.read(`${commit}:${statePathOf(loc, 'units')}`);
  if (!treeObject || treeObject.type !== 'tree') return { units, damage: [] };
  const cached = cache?.get<CachedUnit<T>[]>(CHECKED_UNITS, treeObject.oid);
  if (cached) return { units: new Map(cached.map(([name, doc, oid, form]) => (rememberStored(doc as object, { oid, form }), [name, doc]))), damage: [] };
  const ref = side === 'desired' ? loc.desiredRef : loc.observedRef;
  const { raws, damage } = await readRawUnits(reader, loc, side, ref, commit, treeObject.content);
  const decoded =
    side === 'desired' ? raws.map((r) => ({ r, ...decodeDesired(r.raw) })) : await decodeObservedUnits(reader, raws, known, { ref, commit }, damage);
  const entries: CachedUnit<T>[] = [];
  for (const { r, doc, form } of decoded) {
    rememberStored(doc, { oid: r.oid, form });
    units.set(r.unit, doc as T);
    entries.push([r.unit, doc as T, r.oid, form]);
  }
  if (damage.length === 0) cache?.set(CHECKED_UNITS, treeObject.oid, entries);
  return { units, damage };
}

/** The unit files of a units tree, parsed and checked against their shape; the rest is damage. */
async function readRawUnits(
  reader: ObjectReader,
  loc: StateLocation,
  side: 'desired' | 'observed',
  ref: string,
  commit: string,
  tree: Buffer,
): Promise<{ raws: RawUnit[]; damage: Damage[] }> {
  const files = parseTree(tree).filter((e) => e.type === 'blob' && e.name.endsWith('.yaml'));
  const blobs = await reader.readMany(files.map((e) => e.oid));
  const raws: RawUnit[] = [];
  const damage: Damage[] = [];
  files.forEach((e, i) => {
    const blob = blobs[i];
    if (!blob) return;
    const unit = e.name.slice(0, -'.yaml'.length);
    const path = statePathOf(loc, `units/${e.name}`);
    const parsed = parseStateDocument<Record<string, unknown>>(side === 'desired' ? 'desired-unit' : 'observed-unit', blob.content.toString());
    if (parsed.ok) raws.push({ unit, oid: e.oid, path, raw: parsed.value });
    else damage.push(damageOf(`${side}-unit`, { ref, object: commit, path, unit }, parsed.flaw));
  });
  return { raws, damage };
}

/**
 * Observed documents with their receipts' desired documents read back: from `known` (the desired
 * documents of the same state, the usual case), else from their blobs, read in one batch. A
 * reference to a blob that is missing or not a desired document is damage of the observed file.
 */
async function decodeObservedUnits(reader: ObjectReader, raws: RawUnit[], knownDesired: KnownDesired, at: { ref: string; commit: string }, damage: Damage[]) {
  const known = await knownDesired();
  const wanted = [...new Set(raws.map((r) => referencedBlob(r.raw)).filter((oid): oid is string => oid !== undefined && !known.has(oid)))];
  const blobs = wanted.length > 0 ? await reader.readMany(wanted) : [];
  const read = new Map<string, DesiredUnitDoc>();
  wanted.forEach((oid, i) => {
    const blob = blobs[i];
    const parsed = blob?.type === 'blob' ? parseStateDocument<Record<string, unknown>>('desired-unit', blob.content.toString()) : undefined;
    if (parsed?.ok) read.set(oid, decodeDesired(parsed.value).doc);
  });
  const out: { r: RawUnit; doc: ObservedUnitDoc; form: 1 | 2 }[] = [];
  for (const r of raws) {
    const d = decodeObserved(r.raw, (oid) => known.get(oid) ?? read.get(oid));
    if ('missing' in d) {
      const problem = `its receipt refers to the desired document ${d.missing}, which is not a desired document of this repository`;
      damage.push(damageOf('observed-unit', { ref: at.ref, object: at.commit, path: r.path, unit: r.unit }, { problem }));
    } else out.push({ r, ...d });
  }
  return out;
}

/**
 * Reads state.yaml and the unit documents of both state refs. Refuses NYL-STATE-CORRUPT when a
 * document is damaged, unless `tolerate` (the view then lists the damage).
 */
export async function readEnvironmentState(
  reader: ObjectReader,
  loc: StateLocation,
  refs: RefSnapshot,
  cache?: DocumentCache,
  options: { tolerate?: boolean } = {},
): Promise<EnvironmentStateView> {
  const desiredOid = refs.get(loc.desiredRef);
  const observedOid = refs.get(loc.observedRef);
  const desiredRead = readUnitDocs<DesiredUnitDoc>(reader, loc, 'desired', desiredOid, cache);
  // The observed read waits for the desired documents only on a cache miss, when its receipts need them.
  const [state, desired, observed] = await Promise.all([
    readStateFile(reader, loc, loc.desiredRef, desiredOid),
    desiredRead,
    readUnitDocs<ObservedUnitDoc>(reader, loc, 'observed', observedOid, cache, async () => desiredByBlob((await desiredRead).units)),
  ]);
  const damage = [...(state.damage ? [state.damage] : []), ...desired.damage, ...observed.damage];
  if (!options.tolerate) requireUndamaged(loc.environment, damage);
  if (state.doc && state.doc.environment !== loc.environment) {
    // Two environments configured onto the same refs without their own `path` would share state.
    fail('NYL-SOURCE-INVALID', `${loc.desiredRef} holds the state of environment ${state.doc.environment}, not ${loc.environment}`, {
      env: loc.environment,
      fix: `give ${loc.environment} its own state.desiredRef and state.observedRef, or a state.path, in its Environment`,
    });
  }
  const view: EnvironmentStateView = { desiredUnits: desired.units, observedUnits: observed.units, damage };
  if (desiredOid) view.desiredOid = desiredOid;
  if (observedOid) view.observedOid = observedOid;
  if (state.doc) view.state = state.doc;
  return view;
}

/** The desired documents by the blob each was read from or written as: what receipts refer to. */
function desiredByBlob(units: ReadonlyMap<string, DesiredUnitDoc>): Map<string, DesiredUnitDoc> {
  const out = new Map<string, DesiredUnitDoc>();
  for (const doc of units.values()) {
    const at = storedOf(doc);
    if (at) out.set(at.oid, doc);
  }
  return out;
}

/**
 * Records the documents a transition just wrote, so the next read of that tree parses nothing.
 * Only when every document's blob is known (each was read, or written by this transition).
 */
export async function primeUnitDocs<T extends object>(
  reader: ObjectReader,
  loc: StateLocation,
  commit: string | undefined,
  docs: Map<string, T>,
  cache: DocumentCache,
): Promise<void> {
  if (!commit) return;
  const entries: CachedUnit<T>[] = [];
  for (const [name, doc] of docs) {
    const at = storedOf(doc);
    if (!at) return;
    entries.push([name, doc, at.oid, at.form]);
  }
  const treeObject = await reader.read(`${commit}:${statePathOf(loc, 'units')}`);
  if (treeObject?.type === 'tree') cache.set(CHECKED_UNITS, treeObject.oid, entries);
}
