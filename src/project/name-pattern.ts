/**
 * The namePattern of an EnvironmentTemplate: a name with exactly one `*`, which stands for one or
 * more characters (the instance's suffix). Pure; the schema checks the pattern's form
 * (namePatternRule in schema.ts), these functions assume it.
 */

function parts(pattern: string): [string, string] {
  const star = pattern.indexOf('*');
  return [pattern.slice(0, star), pattern.slice(star + 1)];
}

/** The part of `name` the `*` of `pattern` matches (never empty), or undefined when it does not match. */
export function patternSuffix(pattern: string, name: string): string | undefined {
  const [before, after] = parts(pattern);
  if (name.length <= before.length + after.length) return undefined;
  if (!name.startsWith(before) || !name.endsWith(after)) return undefined;
  return name.slice(before.length, name.length - after.length);
}

/**
 * True when some name matches both patterns. Why this suffices: a name matching `a*b` starts
 * with a and ends with b; one starting with a1 and a2 exists only when one of them starts the
 * other (likewise for the ends), and then a long enough middle makes a name that matches both.
 */
export function patternsOverlap(a: string, b: string): boolean {
  const [beforeA, afterA] = parts(a);
  const [beforeB, afterB] = parts(b);
  return (beforeA.startsWith(beforeB) || beforeB.startsWith(beforeA)) && (afterA.endsWith(afterB) || afterB.endsWith(afterA));
}
