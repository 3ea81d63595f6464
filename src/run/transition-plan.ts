/**
 * Builds an operation's transition commits from the documents before and after it: one commit per
 * state ref whose documents changed, none when nothing did.
 */
import { canonicalJson } from '../project/execution-key';
import { type DesiredUnitDoc, type ObservedUnitDoc, type ReceiptRecord, toYaml } from '../state/documents';
import { blobOid, encodeDesired, encodeObserved, rememberStored, type StoredUnit, storedOf } from '../state/unit-format';
import type { StateLocation } from '../state/location';
import type { RefTransition } from '../lease/publish';
import type { RefSnapshot } from '../state/store';
import { type Headline, type TransitionBody, transitionMessage, type Trailers } from '../state/transition';

export interface DocumentSets {
  desired: Map<string, DesiredUnitDoc>;
  observed: Map<string, ObservedUnitDoc>;
}

/** The changed unit files of both refs, by path: the content of a commit, before it is one. */
export interface DocumentChanges {
  desired: Map<string, string | null>;
  observed: Map<string, string | null>;
  /** Units whose files are rewritten only to bring them to the current form (./unit-format.ts): no change of the operation's. */
  migrated: Set<string>;
  /** The blob and form of each document written, to remember once the transition landed (rememberWritten). */
  written: Map<object, StoredUnit>;
}

/** A unit's desired file: its blob and document, by unit name. */
type BlobsByUnit = Map<string, { oid: string; doc: DesiredUnitDoc }>;

/** Where each unit's desired file is after the transition, and was before it, when the blob is known. */
interface DesiredBlobs {
  after: BlobsByUnit;
  before: BlobsByUnit;
}

/** Whether `doc` must be written: it is new or differs from `prev` (an identical object never does). */
function differs<T>(prev: T | undefined, doc: T): boolean {
  return prev === undefined || (prev !== doc && canonicalJson(prev) !== canonicalJson(doc));
}

/** Where an unchanged document is stored: as itself, or as the document it equals (undefined: made since, not read). */
function storedAs(doc: object, prev: object | undefined): StoredUnit | undefined {
  return storedOf(doc) ?? (prev ? storedOf(prev) : undefined);
}

/** A document stored in an earlier form, which the next write migrates (unknown: not read, nothing to migrate). */
const earlierForm = (at: StoredUnit | undefined): boolean => at?.form === 1;

function desiredChanges(before: DocumentSets, after: DocumentSets, out: DocumentChanges, changedNames: Set<string>): DesiredBlobs {
  const blobs: DesiredBlobs = { after: new Map(), before: new Map() };
  for (const [name, doc] of before.desired) {
    const at = storedOf(doc);
    if (at) blobs.before.set(name, { oid: at.oid, doc });
  }
  for (const [name, doc] of after.desired) {
    const prev = before.desired.get(name);
    const changed = differs(prev, doc);
    const at = changed ? undefined : storedAs(doc, prev);
    if (!changed && !earlierForm(at)) {
      if (at) blobs.after.set(name, { oid: at.oid, doc });
      continue;
    }
    const text = toYaml(encodeDesired(doc));
    const stored: StoredUnit = { oid: blobOid(text), form: 2 };
    out.desired.set(`units/${name}.yaml`, text);
    out.written.set(doc, stored);
    blobs.after.set(name, { oid: stored.oid, doc });
    (changed ? changedNames : out.migrated).add(name);
  }
  for (const name of before.desired.keys()) if (!after.desired.has(name)) out.desired.set(`units/${name}.yaml`, null);
  return blobs;
}

/**
 * The blob a receipt may refer to for its desired document: the unit's desired file after this
 * transition, or before it (an ancestor of the new commit, so still on the desired ref), when
 * that file holds exactly the receipt's document. Else the receipt keeps its copy.
 */
function blobForReceipt(name: string, receipt: ReceiptRecord | undefined, blobs: DesiredBlobs): string | undefined {
  if (!receipt || receipt.keepsDesiredCopy) return undefined;
  // The same object, the usual case, needs no serialising.
  let key: string | undefined;
  for (const candidate of [blobs.after.get(name), blobs.before.get(name)]) {
    if (!candidate) continue;
    if (candidate.doc === receipt.desired) return candidate.oid;
    key ??= canonicalJson(receipt.desired);
    if (canonicalJson(candidate.doc) === key) return candidate.oid;
  }
  return undefined;
}

function observedChanges(before: DocumentSets, after: DocumentSets, blobs: DesiredBlobs, out: DocumentChanges, changedNames: Set<string>): void {
  for (const [name, doc] of after.observed) {
    const prev = before.observed.get(name);
    const changed = differs(prev, doc);
    if (!changed && !earlierForm(storedAs(doc, prev))) continue;
    const text = toYaml(encodeObserved(doc, blobForReceipt(name, doc.receipt, blobs)));
    out.observed.set(`units/${name}.yaml`, text);
    out.written.set(doc, { oid: blobOid(text), form: 2 });
    (changed ? changedNames : out.migrated).add(name);
  }
  for (const name of before.observed.keys()) if (!after.observed.has(name)) out.observed.set(`units/${name}.yaml`, null);
}

/**
 * The files an operation writes: every document that changed, in the current form, and every
 * document still in an earlier form (migrated on this first write). A unit both changed and
 * migrated counts as changed.
 */
export function documentChanges(before: DocumentSets, after: DocumentSets): DocumentChanges {
  const out: DocumentChanges = { desired: new Map(), observed: new Map(), migrated: new Set(), written: new Map() };
  // A unit migrated on one ref and changed on the other is a change of the operation.
  const changedNames = new Set<string>();
  const blobs = desiredChanges(before, after, out, changedNames);
  observedChanges(before, after, blobs, out, changedNames);
  for (const name of changedNames) out.migrated.delete(name);
  return out;
}

/** Once a transition landed: its documents are stored as written (what receipts may refer to, what the parse cache records). */
export function rememberWritten(changes: DocumentChanges): void {
  for (const [doc, stored] of changes.written) rememberStored(doc, stored);
}

/** The units whose files either ref changes, sorted, without those only migrated: a run's headline names what it changed. */
export function changedUnits(changes: DocumentChanges): string[] {
  const names = new Set<string>();
  for (const c of [changes.desired, changes.observed]) for (const path of c.keys()) names.add(path.slice('units/'.length, -'.yaml'.length));
  return [...names].filter((n) => !changes.migrated.has(n)).sort();
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
