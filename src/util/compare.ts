/**
 * Code-unit string order: the same on every machine, unlike localeCompare, whose order follows
 * the user's locale. Waves, dispatch order and reports must not depend on where Nyl runs.
 */
export function byCodeUnits(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
