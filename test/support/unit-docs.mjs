// Unit documents as Nyl works with them, from their stored files (src/state/unit-format.ts):
// without the field that names their form, and a receipt's reference to its desired document
// (form 2, `desiredBlob`) read back from the blob. Shared by the in-process world and the
// end-to-end helpers, which read files from a memory repository and a Git repository.
import YAML from 'yaml';

/** A stored unit document without the field that names its form. */
export function withoutFormat(doc) {
  if (!doc) return doc;
  const { formatVersion: _form, ...rest } = doc;
  return rest;
}

/** A stored observed document as Nyl works with it; `blobText(oid)` is the text of a blob of the repository. */
export function workingObserved(stored, blobText) {
  const doc = withoutFormat(stored);
  const blob = doc?.receipt?.desiredBlob;
  if (!blob) return doc;
  const { desiredBlob: _ref, ...receipt } = doc.receipt;
  return { ...doc, receipt: { ...receipt, desired: withoutFormat(YAML.parse(blobText(blob))) } };
}
