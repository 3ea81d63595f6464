/**
 * A waiting unit as it will render once its dependencies ran, for review: `nyl plan` shows its
 * diff as Terraform does, with the outputs of units that execute first as `(known after apply)`
 * and every other reference resolved from current receipts. It also tells the planner whether the
 * unit changed on its own: its preview differs from the rendering of its receipt somewhere no
 * unknown output reaches, so it executes whatever its dependencies output next. Pure.
 */
import type { KindSet } from '../drivers/kinds';
import { KNOWN_AFTER_APPLY, type ProducerReceipt, type ReceiptOf, renderUnit } from '../project/render';
import type { EnvironmentResource, UnitResource } from '../project/types';
import type { ReceiptRecord } from '../state/documents';
import { canonicalJson } from '../util/canonical-json';

/**
 * What a consumer's preview reads of a producer that executes first: no plain output known yet;
 * its sensitive outputs stay references, as the receipt it has now records them.
 */
export function unknownOutputs(latest: ReceiptRecord | undefined): ProducerReceipt {
  return { outputs: {}, run: '', unknown: true, ...(latest?.sensitiveOutputs ? { sensitive: latest.sensitiveOutputs } : {}) };
}

/** The unit rendered with `receiptOf` (which answers unknownOutputs for producers that execute first); undefined when it cannot render. */
export function previewRendering(unit: UnitResource, env: EnvironmentResource, receiptOf: ReceiptOf, kinds: KindSet): Record<string, unknown> | undefined {
  const rendered = renderUnit(unit, env, receiptOf, kinds);
  return rendered.ok ? rendered.rendering : undefined;
}

/**
 * Does a string of the preview match the recorded value, each unknown output in it standing for
 * any text? The parts around the unknowns must match as they are: `postgres://(known after
 * apply)/db2` is a change of its own from `postgres://h/db1`.
 */
function sameAroundUnknowns(preview: string, recorded: unknown): boolean {
  if (preview === KNOWN_AFTER_APPLY) return true;
  if (typeof recorded !== 'string') return false;
  const literal = (part: string) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${preview.split(KNOWN_AFTER_APPLY).map(literal).join('[\\s\\S]*')}$`).test(recorded);
}

/** Does a value of the preview equal the recorded one, where an unknown output counts as equal to anything? */
function sameKnown(preview: unknown, recorded: unknown): boolean {
  if (typeof preview === 'string' && preview.includes(KNOWN_AFTER_APPLY)) return sameAroundUnknowns(preview, recorded);
  if (Array.isArray(preview)) return Array.isArray(recorded) && preview.length === recorded.length && preview.every((v, i) => sameKnown(v, recorded[i]));
  if (preview !== null && typeof preview === 'object') {
    if (recorded === null || typeof recorded !== 'object' || Array.isArray(recorded)) return false;
    const a = preview as Record<string, unknown>;
    const b = recorded as Record<string, unknown>;
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => k in a && k in b && sameKnown(a[k], b[k]));
  }
  return canonicalJson(preview) === canonicalJson(recorded);
}

/** The top-level spec fields where the preview differs from the recorded rendering, whatever the unknown outputs turn out to be. */
export function ownChanges(preview: Record<string, unknown>, recorded: Record<string, unknown>): string[] {
  const keys = [...new Set([...Object.keys(preview), ...Object.keys(recorded)])].sort();
  return keys.filter((k) => !(k in preview && k in recorded && sameKnown(preview[k], recorded[k])));
}
