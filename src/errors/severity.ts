/**
 * The ranking of exit codes when several apply (spec: 4 > 3 > 1 > 2 > 0): an uncertain outcome
 * outranks a failure, a failure a refusal, a refusal a wait. One copy, for the CLI's exit code of
 * one report and for a multi-environment run's exit code across its environments.
 */

/** Rank of each exit code: higher is more severe. */
const RANK: Readonly<Record<number, number>> = { 0: 0, 2: 1, 1: 2, 3: 3, 4: 4 };

/** The most severe of the exit codes (0 for none). An unknown code counts as an error (1). */
export function mostSevereExit(codes: Iterable<number>): number {
  let worst = 0;
  for (const code of codes) {
    const known = RANK[code] === undefined ? 1 : code;
    if (RANK[known]! > RANK[worst]!) worst = known;
  }
  return worst;
}
