/**
 * Marks the runs of broken leases ended where nothing can import them: on a location whose state
 * is missing, deleted or moved, `recover -e` clears the break without importing anything.
 *
 * Why: a run ref that is not ended holds the environment until its deadline (a live run whose
 * lease ref is gone still holds it), so the command that repairs the state (`state init --fresh` after
 * `state delete`, `state init` after a broken init) would exit 2 NYL-LEASE-HELD behind a run the
 * operator declared dead. Ended, the run ref waits for the next import without holding anyone, and
 * keeps every record it holds: it may be the only record of what its run created.
 */
import type { Identity } from '../../git/object-writer';
import type { RefUpdate } from '../../git/refs';
import { type LeaseBreakRecord, breaksCarriedBy } from '../../lease/record';
import type { LeaseView } from '../../lease/lease';
import { readRunHeaders, serializeRunDoc } from '../../state/run-record';
import type { RefSnapshot, StateStore } from '../../state/store';

/** Why the run ended, as its run.yaml records it. */
function endReason(b: LeaseBreakRecord, finding: string): string {
  return `lease broken by ${b.by} (${b.reason}); not imported: ${finding}`;
}

/**
 * The updates that end the run refs of the breaks a replaced lease carries: a child commit of
 * each run ref that is readable and not ended yet, with `ended` in its run.yaml. Damaged run refs
 * are left alone (nobody can tell whether such a run lives; recover sets them aside).
 */
export async function endBrokenRuns(
  store: StateStore,
  refs: RefSnapshot,
  replaced: LeaseView | undefined,
  at: { now: string; timeMs: number; author: Identity; finding: string },
): Promise<RefUpdate[]> {
  const breaks = new Map((replaced ? breaksCarriedBy(replaced.record) : []).map((b) => [b.run, b]));
  if (breaks.size === 0) return [];
  const headers = (await readRunHeaders(store.reader, store.loc, refs)).filter((h) => h.doc && !h.doc.ended && breaks.has(h.run));
  if (headers.length === 0) return [];
  const oids = await store.writeCommits(
    headers.map((h) => {
      const doc = { ...h.doc!, ended: { at: at.now, reason: endReason(breaks.get(h.run)!, at.finding) } };
      return {
        parent: h.oid,
        changes: new Map([['run.yaml', serializeRunDoc(doc)]]),
        message: `nyl: run ${h.run} ended (lease broken, not imported)\n`,
        author: at.author,
        timeMs: at.timeMs,
      };
    }),
  );
  return headers.map((h, i) => ({ ref: h.ref, expect: h.oid, to: oids[i]! }));
}
