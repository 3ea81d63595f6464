/**
 * Renders a unit for one environment: every reference of its spec resolved, keys in canonical
 * (sorted) order, ready to feed the execution key.
 *
 * A reference to a unit without a current receipt makes the unit wait; a receipt without the
 * referenced output, or a missing environment value or label, is a source error. `dependsOn`
 * stays as written. Pure: the caller supplies receipts through `outputsOf`.
 */
import type { Diagnostic } from '../errors/diagnostic';
import { type Reference, lookupKey, renderValue } from './references';
import type { EnvironmentResource, UnitResource } from './types';
import { sourceError } from './validate';

export interface ConsumedOutput {
  unit: string;
  output: string;
  /** Pointer of the reference inside spec, e.g. `/env/DB_URL`. */
  pointer: string;
}

export interface RenderWait {
  /** Pointer of the reference inside spec, e.g. `/env/DB_URL`. */
  pointer: string;
  unit: string;
  reason: 'no-current-receipt';
}

export type RenderResult =
  | { ok: true; rendering: Record<string, unknown>; consumed: ConsumedOutput[] }
  | { ok: false; waits: RenderWait[] }
  | { ok: false; errors: Diagnostic[] };

/** Outputs of a unit's current receipt, or undefined when it has none. */
export type OutputsOf = (unitName: string) => Record<string, unknown> | undefined;

export function renderUnit(unit: UnitResource, env: EnvironmentResource, outputsOf: OutputsOf): RenderResult {
  const consumed: ConsumedOutput[] = [];
  const waits: RenderWait[] = [];
  const errors: Diagnostic[] = [];

  const fail = (pointer: string, message: string, fix: string): undefined => {
    const line = unit.locations?.[pointer];
    errors.push(
      sourceError(
        { file: unit.origin.file, line: line?.line ?? unit.origin.line, ...(line ? { column: line.column } : {}), pointer: `/spec${pointer}` },
        message,
        fix,
        [unit.name],
      ),
    );
    return undefined;
  };

  const resolve = (ref: Reference, pointer: string): unknown => {
    switch (ref.kind) {
      case 'env.name':
        return env.name;
      case 'env.values': {
        const hit = lookupKey(env.spec.values, ref.key);
        if (hit.found) return hit.value;
        return fail(
          pointer,
          `unit ${unit.name} references env.values.${ref.key}, which environment ${env.name} does not set`,
          `add ${ref.key} to spec.values of the Environment ${env.name}; it sets: ${listOrNone(Object.keys(env.spec.values))}`,
        );
      }
      case 'env.labels': {
        if (Object.prototype.hasOwnProperty.call(env.labels, ref.key)) return env.labels[ref.key];
        return fail(
          pointer,
          `unit ${unit.name} references env.labels.${ref.key}, which environment ${env.name} does not have`,
          `add the label ${ref.key} to metadata.labels of the Environment ${env.name}; it has: ${listOrNone(Object.keys(env.labels))}`,
        );
      }
      case 'units.outputs': {
        const outputs = outputsOf(ref.unit);
        if (outputs === undefined) {
          waits.push({ pointer, unit: ref.unit, reason: 'no-current-receipt' });
          return undefined;
        }
        const hit = lookupKey(outputs, ref.output);
        if (!hit.found) {
          return fail(
            pointer,
            `unit ${ref.unit} has no output ${ref.output}`,
            `reference one of the outputs of ${ref.unit}: ${listOrNone(Object.keys(outputs))}; or make ${ref.unit} write ${ref.output}`,
          );
        }
        consumed.push({ unit: ref.unit, output: ref.output, pointer });
        return hit.value;
      }
    }
  };

  const rendering: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(unit.spec)) {
    rendering[key] = key === 'dependsOn' ? value : renderValue(value, resolve, `/${key}`);
  }
  if (errors.length > 0) return { ok: false, errors };
  if (waits.length > 0) return { ok: false, waits };
  return { ok: true, rendering: sortKeys(rendering) as Record<string, unknown>, consumed };
}

function listOrNone(keys: string[]): string {
  return keys.length > 0 ? [...keys].sort().join(', ') : '(none)';
}

/** A deep copy with object keys in code-unit order, so the rendering reads the same everywhere. */
export function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v: unknown) => sortKeys(v));
  if (typeof value !== 'object' || value === null) return value;
  const record = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(record).sort()) out[key] = sortKeys(record[key]);
  return out;
}
