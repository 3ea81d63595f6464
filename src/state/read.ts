/**
 * Reads an environment's state documents from the desired and observed commits, through the
 * store's batch reader: one tree read per directory and all unit files concurrently.
 */
import { fail } from '../errors/diagnostic';
import { parseTree } from '../git/batch-reader';
import { type DesiredUnitDoc, type EnvironmentStateDoc, type ObservedUnitDoc, fromYaml } from './documents';
import { type StateLocation, statePathOf } from './location';
import type { DocumentCache, ObjectReader, RefSnapshot } from './store';

export interface EnvironmentStateView {
  desiredOid?: string;
  observedOid?: string;
  /** state.yaml of the desired ref (the observed ref carries a copy). */
  state?: EnvironmentStateDoc;
  desiredUnits: Map<string, DesiredUnitDoc>;
  observedUnits: Map<string, ObservedUnitDoc>;
}

export async function readStateDoc(reader: ObjectReader, loc: StateLocation, commit: string | undefined): Promise<EnvironmentStateDoc | undefined> {
  if (!commit) return undefined;
  const blob = await reader.read(`${commit}:${statePathOf(loc, 'state.yaml')}`);
  if (!blob || blob.type !== 'blob') return undefined;
  return fromYaml<EnvironmentStateDoc>(blob.content.toString());
}

/**
 * Reads every units/NAME.yaml of a state commit. The parsed documents of a units tree are cached
 * by the tree's object id: a run that finds nothing to do reads one tree and one JSON file per
 * ref instead of parsing a YAML document per unit.
 */
export async function readUnitDocs<T>(reader: ObjectReader, loc: StateLocation, commit: string | undefined, cache?: DocumentCache): Promise<Map<string, T>> {
  const units = new Map<string, T>();
  if (!commit) return units;
  const treeObject = await reader.read(`${commit}:${statePathOf(loc, 'units')}`);
  if (!treeObject || treeObject.type !== 'tree') return units;
  const cached = cache?.get<[string, T][]>('units', treeObject.oid);
  if (cached) return new Map(cached);
  const files = parseTree(treeObject.content).filter((e) => e.type === 'blob' && e.name.endsWith('.yaml'));
  const blobs = await reader.readMany(files.map((e) => e.oid));
  files.forEach((e, i) => {
    const blob = blobs[i];
    if (blob) units.set(e.name.slice(0, -'.yaml'.length), fromYaml<T>(blob.content.toString()));
  });
  cache?.set('units', treeObject.oid, [...units]);
  return units;
}

export async function readEnvironmentState(reader: ObjectReader, loc: StateLocation, refs: RefSnapshot, cache?: DocumentCache): Promise<EnvironmentStateView> {
  const desiredOid = refs.get(loc.desiredRef);
  const observedOid = refs.get(loc.observedRef);
  const [state, desiredUnits, observedUnits] = await Promise.all([
    readStateDoc(reader, loc, desiredOid),
    readUnitDocs<DesiredUnitDoc>(reader, loc, desiredOid, cache),
    readUnitDocs<ObservedUnitDoc>(reader, loc, observedOid, cache),
  ]);
  if (state && state.environment !== loc.environment) {
    // Two environments configured onto the same refs without their own `path` would share state.
    fail('NYL-SOURCE-INVALID', `${loc.desiredRef} holds the state of environment ${state.environment}, not ${loc.environment}`, {
      env: loc.environment,
      fix: `give ${loc.environment} its own state.desiredRef and state.observedRef, or a state.path, in its Environment`,
    });
  }
  const view: EnvironmentStateView = { desiredUnits, observedUnits };
  if (desiredOid) view.desiredOid = desiredOid;
  if (observedOid) view.observedOid = observedOid;
  if (state) view.state = state;
  return view;
}

/** Records the documents a transition just wrote, so the next read of that tree parses nothing. */
export async function primeUnitDocs<T>(reader: ObjectReader, loc: StateLocation, commit: string | undefined, docs: Map<string, T>, cache: DocumentCache): Promise<void> {
  if (!commit) return;
  const treeObject = await reader.read(`${commit}:${statePathOf(loc, 'units')}`);
  if (treeObject?.type === 'tree') cache.set('units', treeObject.oid, [...docs]);
}
