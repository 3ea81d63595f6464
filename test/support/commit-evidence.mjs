// What transition commits say, read the same way by the in-process invariants (test/protocol)
// and the crash campaigns of real processes (test/support/crash-harness.mjs): the YAML body
// between headline and trailers, a trailer, and the runs after which a unit may execute again.
import YAML from 'yaml';

/** The YAML body of a transition commit message (between headline and trailers); {} when none. */
export function commitBody(message) {
  const parts = message.split('\n\n');
  if (parts.length < 3) return {};
  try {
    return YAML.parse(parts.slice(1, -1).join('\n\n')) ?? {};
  } catch {
    return {};
  }
}

export function trailer(message, name) {
  return message.match(new RegExp(`^${name}: (.*)$`, 'm'))?.[1];
}

/**
 * Adds, for each unit a commit recovered, the run that recovered it (a takeover that re-ran it
 * in the same run) to `recoveredBy`, and the broken runs it names (an import that made it
 * uncertain, maybe cleared in the same commit by recover --retry) to `conditionRuns`.
 */
export function addRecoveryEvidence(commits, conditionRuns, recoveredBy) {
  for (const c of commits) {
    const body = commitBody(c.message);
    const run = trailer(c.message, 'Nyl-Run');
    for (const name of body.recovered ?? []) {
      if (!recoveredBy.has(name)) continue;
      if (run) recoveredBy.get(name).add(run);
      for (const b of [body.leaseBroken, ...(body.leaseBrokenEarlier ?? [])]) if (b?.run) conditionRuns.get(name).add(b.run);
    }
  }
}
