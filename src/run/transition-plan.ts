/**
 * Builds an operation's transition commits from the documents before and after it: one commit per
 * state ref whose documents changed, none when nothing did.
 */
import { canonicalJson } from '../project/execution-key';
import { type DesiredUnitDoc, type ObservedUnitDoc, toYaml } from '../state/documents';
import type { StateLocation } from '../state/location';
import type { RefTransition } from '../lease/publish';
import type { RefSnapshot } from '../state/store';
import { type Headline, type TransitionBody, transitionMessage, type Trailers } from '../state/transition';

export interface DocumentSets {
  desired: Map<string, DesiredUnitDoc>;
  observed: Map<string, ObservedUnitDoc>;
}

/** Changed files by path; an identical object is unchanged without serializing it. */
function diff<T>(before: Map<string, T>, after: Map<string, T>): Map<string, string | null> {
  const changes = new Map<string, string | null>();
  for (const [name, doc] of after) {
    const prev = before.get(name);
    if (prev === doc) continue;
    if (prev === undefined || canonicalJson(prev) !== canonicalJson(doc)) changes.set(`units/${name}.yaml`, toYaml(doc));
  }
  for (const name of before.keys()) if (!after.has(name)) changes.set(`units/${name}.yaml`, null);
  return changes;
}

/** The changed unit files of both refs, by path: the content of a commit, before it is one. */
export interface DocumentChanges {
  desired: Map<string, string | null>;
  observed: Map<string, string | null>;
}

export function documentChanges(before: DocumentSets, after: DocumentSets): DocumentChanges {
  return { desired: diff(before.desired, after.desired), observed: diff(before.observed, after.observed) };
}

/** The units whose files either ref changes, sorted: a run's headline names what it changed. */
export function changedUnits(changes: DocumentChanges): string[] {
  const names = new Set<string>();
  for (const c of [changes.desired, changes.observed]) for (const path of c.keys()) names.add(path.slice('units/'.length, -'.yaml'.length));
  return [...names].sort();
}

/**
 * headlineUnits names the units of the commit headline (or a run's outcomes, which it
 * summarises); 'changed' names every unit whose documents changed, from the same diff that
 * builds the commits.
 */
export function buildTransitions(
  loc: StateLocation,
  refs: RefSnapshot,
  env: string,
  before: DocumentSets,
  after: DocumentSets,
  body: TransitionBody,
  trailers: Trailers,
  headlineUnits: Headline | 'changed',
  /** Write a commit on the desired ref even without document changes (a recorded lease break). */
  forceDesired = false,
): RefTransition[] {
  return transitionsOf(loc, refs, env, documentChanges(before, after), body, trailers, headlineUnits, forceDesired);
}

/** buildTransitions from changes already computed (a run lists the changed units in its report first). */
export function transitionsOf(
  loc: StateLocation,
  refs: RefSnapshot,
  env: string,
  changes: DocumentChanges,
  body: TransitionBody,
  trailers: Trailers,
  headlineUnits: Headline | 'changed',
  forceDesired = false,
): RefTransition[] {
  const { desired, observed } = changes;
  const message = transitionMessage(env, body, trailers, headlineUnits === 'changed' ? changedUnits(changes) : headlineUnits);
  const list: RefTransition[] = [];
  if (desired.size > 0 || forceDesired) list.push({ ref: loc.desiredRef, base: refs.get(loc.desiredRef), changes: desired, message });
  if (observed.size > 0) list.push({ ref: loc.observedRef, base: refs.get(loc.observedRef), changes: observed, message });
  return list;
}
