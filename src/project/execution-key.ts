/**
 * Canonical JSON and the execution key of a unit.
 *
 * The execution key is `sha256:` over the canonical JSON of kind, rendered spec, uid, the
 * driver's version tag and what the unit reads besides its spec (KeyReads): the Git object ids of
 * source files and directories, the receipt runs of the units it is triggered by, and the digests
 * of the sensitive values it consumes. Reads are left out when there are none, so that a unit
 * that reads nothing keeps the key it had before reads existed. The key is computed over canonical JSON
 * (src/util/canonical-json.ts), so the same inputs give the same key on every machine.
 */
import { createHash } from 'node:crypto';
import { canonicalJson } from '../util/canonical-json';

export { canonicalJson };

/**
 * What a unit reads besides its rendered spec, recorded in its desired document so that its key
 * can be computed again from state alone (recover does).
 */
export interface KeyReads {
  /** Source path (relative to the project root) -> Git object id: a module's tree, the files `inputs` match. */
  sources?: Record<string, string>;
  /** Unit named in `triggers` -> the run of its receipt. */
  triggers?: Record<string, string>;
  /** Each reference to a sensitive output, in order of appearance, with that value's digest (never the value). */
  secrets?: SecretRead[];
}

export interface SecretRead {
  /** Pointer of the reference inside spec, e.g. `/env/DB_PASSWORD`. */
  pointer: string;
  unit: string;
  output: string;
  sha256: string;
}

interface ExecutionKeyInput {
  kind: string;
  rendering: Record<string, unknown>;
  uid: string;
  driverVersion: string;
  reads?: KeyReads;
}

/** The reads with their empty members dropped; undefined when nothing is left. */
export function compactReads(reads: KeyReads | undefined): KeyReads | undefined {
  if (!reads) return undefined;
  const out: KeyReads = {};
  if (reads.sources && Object.keys(reads.sources).length > 0) out.sources = reads.sources;
  if (reads.triggers && Object.keys(reads.triggers).length > 0) out.triggers = reads.triggers;
  if (reads.secrets && reads.secrets.length > 0) out.secrets = reads.secrets;
  return Object.keys(out).length > 0 ? out : undefined;
}

export function executionKey(input: ExecutionKeyInput): string {
  const text = canonicalJson({
    driverVersion: input.driverVersion,
    kind: input.kind,
    reads: compactReads(input.reads),
    rendering: input.rendering,
    uid: input.uid,
  });
  return `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;
}
