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
    if (target && target.type !== 'commit') return { damage: damageOf('state', { ref, object: commit }, { problem: `the ref points at a ${target.type}, not a commit` }) };
    return blob ? { damage: damageOf('state', { ref, object: commit, path }, { problem: `${path} is a ${blob.type}, not a file` }) } : {};
  }
  const parsed = parseStateDocument<EnvironmentStateDoc>('state', blob.content.toString());
  return parsed.ok ? { doc: parsed.value } : { damage: damageOf('state', { ref, object: commit, path }, parsed.flaw) };
}

/** Reads the state.yaml of a state ref's commit; refuses NYL-STATE-CORRUPT when it is damaged. */
export async function readStateDoc(reader: ObjectReader, loc: StateLocation, ref: string, commit: string | undefined): Promise<EnvironmentStateDoc | undefined> {
  const read = await readStateFile(reader, loc, ref, commit);
  requireUndamaged(loc.environment, read.damage ? [read.damage] : []);
  return read.doc;
}

export interface UnitDocsRead<T> {
  units: Map<string, T>;
  damage: Damage[];
}

/** The cache kind of checked unit documents (parsed before shapes were checked, 'units' is not trusted). */
const CHECKED_UNITS = 'state-units';

/**
 * Reads every units/NAME.yaml of a state commit. The parsed documents of a units tree are cached
 * by the tree's object id: a run that finds nothing to do reads one tree and one JSON file per
 * ref instead of parsing a YAML document per unit. A tree with damage is never cached.
 */
export async function readUnitDocs<T>(reader: ObjectReader, loc: StateLocation, side: 'desired' | 'observed', commit: string | undefined, cache?: DocumentCache): Promise<UnitDocsRead<T>> {
  const units = new Map<string, T>();
  const damage: Damage[] = [];
  if (!commit) return { units, damage };
  const treeObject = await reader.read(`${commit}:${statePathOf(loc, 'units')}`);
  if (!treeObject || treeObject.type !== 'tree') return { units, damage };
  const cached = cache?.get<[string, T][]>(CHECKED_UNITS, treeObject.oid);
  if (cached) return { units: new Map(cached), damage };
  const ref = side === 'desired' ? loc.desiredRef : loc.observedRef;
  const files = parseTree(treeObject.content).filter((e) => e.type === 'blob' && e.name.endsWith('.yaml'));
  const blobs = await reader.readMany(files.map((e) => e.oid));
  files.forEach((e, i) => {
    const blob = blobs[i];
    if (!blob) return;
    const unit = e.name.slice(0, -'.yaml'.length);
    const parsed = parseStateDocument<T>(side === 'desired' ? 'desired-unit' : 'observed-unit', blob.content.toString());
    if (parsed.ok) units.set(unit, parsed.value);
    else damage.push(damageOf(`${side}-unit`, { ref, object: commit, path: statePathOf(loc, `units/${e.name}`), unit }, parsed.flaw));
  });
  if (damage.length === 0) cache?.set(CHECKED_UNITS, treeObject.oid, [...units]);
  return { units, damage };
}

/**
 * Reads state.yaml and the unit documents of both state refs. Refuses NYL-STATE-CORRUPT when a
 * document is damaged, unless `tolerate` (the view then lists the damage).
 */
export async function readEnvironmentState(reader: ObjectReader, loc: StateLocation, refs: RefSnapshot, cache?: DocumentCache, options: { tolerate?: boolean } = {}): Promise<EnvironmentStateView> {
  const desiredOid = refs.get(loc.desiredRef);
  const observedOid = refs.get(loc.observedRef);
  const [state, desired, observed] = await Promise.all([
    readStateFile(reader, loc, loc.desiredRef, desiredOid),
    readUnitDocs<DesiredUnitDoc>(reader, loc, 'desired', desiredOid, cache),
    readUnitDocs<ObservedUnitDoc>(reader, loc, 'observed', observedOid, cache),
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

/** Records the documents a transition just wrote, so the next read of that tree parses nothing. */
export async function primeUnitDocs<T>(reader: ObjectReader, loc: StateLocation, commit: string | undefined, docs: Map<string, T>, cache: DocumentCache): Promise<void> {
  if (!commit) return;
  const treeObject = await reader.read(`${commit}:${statePathOf(loc, 'units')}`);
  if (treeObject?.type === 'tree') cache.set(CHECKED_UNITS, treeObject.oid, [...docs]);
}
