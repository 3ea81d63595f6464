/**
 * How unit documents are stored: the form of `units/NAME.yaml` on the desired and observed refs,
 * between the documents the rest of Nyl works with and the files a reviewer reads.
 *
 * Form 2 (`formatVersion: 2`, written by this version):
 * - multi-line strings are literal blocks (the emitter's rule, ./yaml-emit.ts);
 * - a receipt refers to the desired document it was produced for by the Git blob id of that
 *   document's file on the desired ref (`receipt.desiredBlob`) instead of repeating it: the
 *   observed diff of a run then shows what it observed, not a second copy of what it decided.
 *   An accepted receipt (`nyl recover --accept`) keeps its copy (`receipt.desired`), because
 *   the document a late run's checkpoint was produced for need not be a file of the desired ref;
 *   and so does any receipt whose desired document this writer cannot name by a blob it knows to
 *   be on the desired ref (see blobForReceipt).
 * Form 1 (no `formatVersion`, earlier versions): strings JSON-quoted, every receipt with its copy.
 *
 * Documents in memory are the same in both forms: `receipt.desired` is always the document (read
 * back from its blob), and `keepsDesiredCopy` marks a receipt stored with its copy. The stored
 * blob and form of each document read are remembered beside it (rememberStored), so that the
 * writer knows which blob a receipt may refer to and which documents still need migrating: the
 * first transition that writes an environment's state rewrites its form-1 documents in form 2.
 */
import { createHash } from 'node:crypto';
import type { DesiredUnitDoc, ObservedUnitDoc, ReceiptRecord } from './documents';

/** The form this version writes, as `formatVersion` (./shapes.ts refuses any other). */
export const UNIT_FORMAT = 2;

/** The form a stored document's `formatVersion` names: without one, form 1. */
const formOf = (formatVersion: unknown): 1 | 2 => (formatVersion === UNIT_FORMAT ? 2 : 1);

/** A stored unit file: its blob id and form. */
export interface StoredUnit {
  oid: string;
  form: 1 | 2;
}

const stored = new WeakMap<object, StoredUnit>();

/** Remembers which blob (and form) a document was read from or written as. */
export function rememberStored(doc: object, unit: StoredUnit): void {
  stored.set(doc, unit);
}

/** The blob and form a document was read from or written as; undefined for one made since. */
export function storedOf(doc: object): StoredUnit | undefined {
  return stored.get(doc);
}

/** The Git blob id of a file's content, as `git hash-object` computes it. */
export function blobOid(content: string): string {
  const bytes = Buffer.from(content, 'utf8');
  return createHash('sha1').update(`blob ${bytes.length}\0`).update(bytes).digest('hex');
}

/** A desired document as stored in form 2. */
export function encodeDesired(doc: DesiredUnitDoc): Record<string, unknown> {
  return { formatVersion: UNIT_FORMAT, ...doc };
}

/**
 * An observed document as stored in form 2: its receipt refers to `desiredBlob` when one is
 * given, else keeps its copy.
 */
export function encodeObserved(doc: ObservedUnitDoc, desiredBlob: string | undefined): Record<string, unknown> {
  if (!doc.receipt) return { formatVersion: UNIT_FORMAT, ...doc };
  const { desired, keepsDesiredCopy: _copy, ...receipt } = doc.receipt;
  return { formatVersion: UNIT_FORMAT, ...doc, receipt: desiredBlob ? { ...receipt, desiredBlob } : { ...receipt, desired } };
}

/** A stored desired document (shape-checked) as Nyl works with it, and its form. */
export function decodeDesired(raw: Record<string, unknown>): { doc: DesiredUnitDoc; form: 1 | 2 } {
  const { formatVersion, ...doc } = raw;
  return { doc: doc as unknown as DesiredUnitDoc, form: formOf(formatVersion) };
}

/**
 * A stored observed document (shape-checked) as Nyl works with it: `resolve` gives the desired
 * document of a blob a form-2 receipt refers to (undefined when there is no such document, which
 * the caller reports as damage).
 */
export function decodeObserved(
  raw: Record<string, unknown>,
  resolve: (oid: string) => DesiredUnitDoc | undefined,
): { doc: ObservedUnitDoc; form: 1 | 2 } | { missing: string } {
  const { formatVersion, ...rest } = raw;
  const form = formOf(formatVersion);
  const doc = rest as unknown as ObservedUnitDoc;
  const receipt = doc.receipt as (ReceiptRecord & { desiredBlob?: string }) | undefined;
  if (!receipt) return { doc, form };
  const { desiredBlob, ...inline } = receipt;
  if (desiredBlob === undefined) return { doc: form === 2 ? { ...doc, receipt: { ...inline, keepsDesiredCopy: true } } : doc, form };
  const desired = resolve(desiredBlob);
  if (!desired) return { missing: desiredBlob };
  return { doc: { ...doc, receipt: { ...inline, desired } }, form };
}

/** The blob ids a form-2 observed document (raw, shape-checked) refers to. */
export function referencedBlob(raw: Record<string, unknown>): string | undefined {
  const receipt = raw.receipt as { desiredBlob?: unknown } | undefined;
  return typeof receipt?.desiredBlob === 'string' ? receipt.desiredBlob : undefined;
}
