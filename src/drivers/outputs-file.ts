/**
 * The outputs file of a Command or an OciImage container (NYL_OUTPUTS): a JSON object whose
 * members become the receipt's outputs. One reader, so both kinds follow the same rules. A
 * missing or empty file means no outputs. A file larger than the outputs of a unit may take
 * (OUTPUT_LIMITS) is refused unread; the engine checks the parsed outputs against the limits.
 * JSON.parse does not recurse, so a deeply nested file parses safely.
 *
 * A member written as `{"value": V, "sensitive": true}` (exactly these two keys) is the sensitive
 * output V: the engine seals it for Git and masks it in what consumers print. With
 * `"sensitive": false` it is the plain output V.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { OUTPUT_LIMITS, type Outputs, type UnitOutput, describeSize } from './contract';

export function readOutputsFile(path: string): { ok: true; outputs: Outputs } | { ok: false; reason: string } {
  if (!existsSync(path)) return { ok: true, outputs: {} };
  let text: string;
  try {
    const size = statSync(path).size;
    if (size > OUTPUT_LIMITS.bytes) {
      return { ok: false, reason: `NYL_OUTPUTS is ${describeSize(size)}, more than the ${describeSize(OUTPUT_LIMITS.bytes)} the outputs of a unit may take; it was not read` };
    }
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return { ok: false, reason: `NYL_OUTPUTS cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
  }
  if (text.trim() === '') return { ok: true, outputs: {} };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    // Only where: JSON.parse quotes the text around the error, and it may hold a secret.
    const at = /at position (\d+)/.exec((error as Error).message)?.[1];
    return { ok: false, reason: `NYL_OUTPUTS holds invalid JSON${at ? ` at position ${at}` : ''} (its content is not shown)` };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { ok: false, reason: 'NYL_OUTPUTS must hold a JSON object' };
  // JSON.parse makes "__proto__" an own member; assigned to the outputs, it would vanish silently.
  if (Object.prototype.hasOwnProperty.call(value, '__proto__')) return { ok: false, reason: 'NYL_OUTPUTS names an output __proto__, which cannot be recorded: rename it' };
  const outputs: Outputs = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) outputs[k] = asOutput(v);
  return { ok: true, outputs };
}

/** A member of the file as an output: the `{value, sensitive}` form, or any other value as plain. */
function asOutput(v: unknown): UnitOutput {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    const keys = Object.keys(v).sort();
    const marked = v as { value?: unknown; sensitive?: unknown };
    if (keys.length === 2 && keys[0] === 'sensitive' && keys[1] === 'value' && typeof marked.sensitive === 'boolean') return { value: marked.value, sensitive: marked.sensitive };
  }
  return { value: v, sensitive: false };
}
