/**
 * How deeply JSON-shaped data nests, and the deepest a state document may nest.
 *
 * The writers of state documents and execution keys (the YAML emitter, canonical JSON) recurse
 * once per level. They refuse data deeper than MAX_DOCUMENT_DEPTH with an error that names the
 * limit, rather than exhausting the stack, and everything that reaches them from outside is
 * bounded well below it first: outputs by the engine (OUTPUT_LIMITS in src/drivers/contract.ts,
 * a unit failure), source documents by the YAML parser. At this depth the fast reader of state
 * documents still reads back what was written.
 */

/** Levels of objects and arrays a state document may nest (the document itself is level 1). */
export const MAX_DOCUMENT_DEPTH = 1000;

/**
 * The levels of objects and arrays in `value` (a scalar: 0; `{}`: 1; `[[1]]`: 2), counted
 * without recursion, so any depth is measured safely. Stops once it passes `stopAbove`.
 */
export function nestingDepth(value: unknown, stopAbove = Infinity): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  while (stack.length > 0) {
    const [v, level] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (level > deepest) deepest = level;
    if (deepest > stopAbove) return deepest;
    for (const child of Array.isArray(v) ? v : Object.values(v)) if (typeof child === 'object' && child !== null) stack.push([child, level + 1]);
  }
  return deepest;
}

/** The error of a writer given data deeper than a document may nest. */
export function nestedTooDeep(what: string): RangeError {
  return new RangeError(`${what}: the value is nested deeper than ${MAX_DOCUMENT_DEPTH} levels of objects and arrays, more than a state document may hold`);
}
