/**
 * Renders a unit for one environment: every reference of its spec resolved, keys in canonical
 * (sorted) order, ready to feed the execution key.
 *
 * A reference to a unit without a current receipt makes the unit wait; a receipt without the
 * referenced output, or a missing environment value or label, is a source error. `dependsOn`
 * stays as written. Pure: the caller supplies receipts through `receiptOf`.
 *
 * A reference to a sensitive output is not resolved: the rendering keeps the reference as
 * written, because the rendering is committed, and the run resolves it for the execution only
 * (src/run/secrets.ts). Its digest enters the execution key instead, so a new value still runs
 * the unit again. It may stand only where the value reaches the tool through its environment
 * (the kind's secretFields): anywhere else, such as a command line, is a rendering error.
 */
import { type KindSet, isSecretField } from '../drivers/kinds';
import type { Diagnostic } from '../errors/diagnostic';
import type { SecretRead } from './execution-key';
import { type Reference, lookupKey, renderValue } from './references';
import type { EnvironmentResource, UnitResource } from './types';
import { sourceError } from './validate';

interface ConsumedOutput {
  unit: string;
  output: string;
  /** Pointer of the reference inside spec, e.g. `/env/DB_URL`. */
  pointer: string;
}

interface RenderWait {
  /** Pointer of the reference inside spec, e.g. `/env/DB_URL`. */
  pointer: string;
  unit: string;
  reason: 'no-current-receipt';
}

type RenderResult =
  | { ok: true; rendering: Record<string, unknown>; consumed: ConsumedOutput[]; secrets: SecretRead[] }
  | { ok: false; waits: RenderWait[] }
  | { ok: false; errors: Diagnostic[] };

/** What rendering reads of a producer's current receipt. */
export interface ProducerReceipt {
  /** Plain outputs. */
  outputs: Record<string, unknown>;
  /** Sensitive outputs: only their digests. */
  sensitive?: Record<string, { sha256: string }>;
  /** The run that produced the receipt. */
  run: string;
  /**
   * The producer executes before the consumer does: its plain outputs are not known yet, and every
   * reference to one renders as KNOWN_AFTER_APPLY (a preview for review, never for a key).
   */
  unknown?: true;
}

/** What a preview renders in place of an output not known before its producer executes (Terraform's words). */
export const KNOWN_AFTER_APPLY = '(known after apply)';

/** A unit's current receipt, or undefined when it has none. */
export type ReceiptOf = (unitName: string) => ProducerReceipt | undefined;

export function renderUnit(unit: UnitResource, env: EnvironmentResource, receiptOf: ReceiptOf, kinds: KindSet): RenderResult {
  const r = new Rendering(unit, env, receiptOf, kinds);
  const rendering: Record<string, unknown> = {};
  const resolve = (ref: Reference, pointer: string): unknown => r.resolve(ref, pointer);
  for (const [key, value] of Object.entries(unit.spec)) {
    rendering[key] = key === 'dependsOn' ? value : renderValue(value, resolve, `/${key}`);
  }
  if (r.errors.length > 0) return { ok: false, errors: r.errors };
  if (r.waits.length > 0) return { ok: false, waits: r.waits };
  return { ok: true, rendering: sortKeys(rendering) as Record<string, unknown>, consumed: r.consumed, secrets: r.secrets };
}

/** One unit's rendering in progress: resolves references and collects what they found. */
class Rendering {
  readonly consumed: ConsumedOutput[] = [];
  readonly secrets: SecretRead[] = [];
  readonly waits: RenderWait[] = [];
  readonly errors: Diagnostic[] = [];

  constructor(
    private readonly unit: UnitResource,
    private readonly env: EnvironmentResource,
    private readonly receiptOf: ReceiptOf,
    private readonly kinds: KindSet,
  ) {}

  private fail(pointer: string, message: string, fix: string): undefined {
    const { unit } = this;
    const line = unit.locations?.[pointer];
    const at = { file: unit.origin.file, line: line?.line ?? unit.origin.line, ...(line ? { column: line.column } : {}), pointer: `/spec${pointer}` };
    this.errors.push(sourceError(at, message, fix, [unit.name]));
    return undefined;
  }

  resolve(ref: Reference, pointer: string): unknown {
    const { unit, env } = this;
    switch (ref.kind) {
      case 'env.name':
        return env.name;
      case 'env.values': {
        const hit = lookupKey(env.spec.values, ref.key);
        if (hit.found) return hit.value;
        return this.fail(
          pointer,
          `unit ${unit.name} references env.values.${ref.key}, which environment ${env.name} does not set`,
          `add ${ref.key} to spec.values of the Environment ${env.name}; it sets: ${listOrNone(Object.keys(env.spec.values))}`,
        );
      }
      case 'env.labels': {
        if (Object.prototype.hasOwnProperty.call(env.labels, ref.key)) return env.labels[ref.key];
        return this.fail(
          pointer,
          `unit ${unit.name} references env.labels.${ref.key}, which environment ${env.name} does not have`,
          `add the label ${ref.key} to metadata.labels of the Environment ${env.name}; it has: ${listOrNone(Object.keys(env.labels))}`,
        );
      }
      case 'units.outputs':
        return this.unitOutput(ref, pointer);
    }
  }

  private unitOutput(ref: Reference & { kind: 'units.outputs' }, pointer: string): unknown {
    const receipt = this.receiptOf(ref.unit);
    if (receipt === undefined) {
      this.waits.push({ pointer, unit: ref.unit, reason: 'no-current-receipt' });
      return undefined;
    }
    const secret = receipt.sensitive?.[ref.output];
    if (secret) return this.keepSecretReference(ref, pointer, secret.sha256);
    if (receipt.unknown) return KNOWN_AFTER_APPLY;
    const hit = lookupKey(receipt.outputs, ref.output);
    if (!hit.found) {
      return this.fail(
        pointer,
        `unit ${ref.unit} has no output ${ref.output}`,
        `reference one of the outputs of ${ref.unit}: ${listOrNone(Object.keys(receipt.outputs))}; or make ${ref.unit} write ${ref.output}`,
      );
    }
    this.consumed.push({ unit: ref.unit, output: ref.output, pointer });
    return hit.value;
  }

  /** A sensitive output: the reference stays as written, and its digest is recorded for the key. */
  private keepSecretReference(ref: Reference & { kind: 'units.outputs' }, pointer: string, sha256: string): unknown {
    const { unit, kinds } = this;
    if (!isSecretField(unit.kind, pointer, kinds)) {
      return this.fail(
        pointer,
        `unit ${unit.name} references the sensitive output ${ref.output} of ${ref.unit} at ${pointer}, where its value would reach the tool's command line or a committed file`,
        `pass it through the environment instead: ${secretFieldsText(unit.kind, kinds)}; sensitive values reach a tool only through its environment`,
      );
    }
    this.secrets.push({ pointer, unit: ref.unit, output: ref.output, sha256 });
    return secretReference(ref.unit, ref.output);
  }
}

/** The reference a rendering keeps in place of a sensitive value. */
export function secretReference(unit: string, output: string): string {
  return `\${{ units.${unit}.outputs.${output} }}`;
}

/** Where a kind takes sensitive values, for a fix text. */
function secretFieldsText(kind: string, kinds: KindSet): string {
  const fields = kinds.descriptor(kind)?.secretFields ?? [];
  if (fields.length === 0) return `the ${kind} kind takes no sensitive values; let the producer write a plain output or read the secret itself`;
  return `reference it under ${fields.map((f) => `spec${f.replace(/\//g, '.')}`).join(' or ')}`;
}

function listOrNone(keys: string[]): string {
  return keys.length > 0 ? [...keys].sort().join(', ') : '(none)';
}

/** A deep copy with object keys in code-unit order, so the rendering reads the same everywhere. */
function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v: unknown) => sortKeys(v));
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(record).sort()) out[key] = sortKeys(record[key]);
  return out;
}
