/**
 * Where `nyl state restore --to COMMIT` takes its documents from (docs/design.md, "state restore").
 *
 * COMMIT must be a commit of this environment's state history: on the first-parent history of
 * its desired ref or of its observed ref as they are now, holding the environment's state.yaml,
 * and, on a ref shared through `path`, a commit that changed the environment's directory (a commit
 * of another environment there is refused, although this environment's files are in it too).
 * It is named by its full id or by an abbreviation of at least 7 hex digits that names exactly one
 * commit of those histories; nothing else is resolved, so nothing outside the state refs is read.
 *
 * The matching point on the other ref: the commit of the same operation (one operation writes the
 * same message at the same time on both refs), else the newest commit not newer than COMMIT.
 */
import { fail } from '../../errors/diagnostic';
import { type StateLocation, statePathOf } from '../../state/location';
import { readStateFile } from '../../state/read';
import { firstParentHistory, pathChange, type StateCommit, wrotePath } from '../../state/state-commits';
import type { ObjectReader, RefSnapshot } from '../../state/store';

export interface RestorePoint {
  /** The commit --to named (full id). */
  commit: string;
  /** The ref whose history holds it. */
  side: 'desired' | 'observed';
  /** The commits the desired and observed documents come from (undefined: that ref had none yet). */
  desired: string | undefined;
  observed: string | undefined;
}

interface Histories {
  desired: StateCommit[];
  observed: StateCommit[];
}

/** Refuses what cannot name a commit: a commit is named by hex digits only. */
function checkCommitName(to: string): void {
  if (!/^[0-9a-fA-F]{7,40}$/.test(to)) {
    fail(
      'NYL-USAGE',
      `--to ${JSON.stringify(to)} is not a commit id: nyl state restore takes the full id of a state commit, or an abbreviation of at least 7 hex digits`,
      {
        fix: 'pass --to the id of a commit of the state refs, as `git log --first-parent` of the desired or observed ref prints it',
      },
    );
  }
}

function foreign(loc: StateLocation, to: string, why: string): never {
  fail('NYL-RESTORE-FOREIGN-COMMIT', `${to} ${why}; nothing was written`, {
    env: loc.environment,
    desiredRef: loc.desiredRef,
    observedRef: loc.observedRef,
    ...(loc.statePath ? { path: loc.statePath } : {}),
  });
}

/** The one commit of the histories whose id starts with `to`; refuses none or several. */
function findNamed(loc: StateLocation, histories: Histories, to: string): { commit: StateCommit; side: 'desired' | 'observed' } {
  const prefix = to.toLowerCase();
  const found = new Map<string, { commit: StateCommit; side: 'desired' | 'observed' }>();
  for (const side of ['desired', 'observed'] as const) {
    for (const c of histories[side]) if (c.oid.startsWith(prefix) && !found.has(c.oid)) found.set(c.oid, { commit: c, side });
  }
  if (found.size > 1) {
    fail('NYL-USAGE', `--to ${to} names ${found.size} commits of the state of ${loc.environment}: ${[...found.keys()].join(', ')}`, {
      fix: 'pass more digits of the commit id, or its full id',
    });
  }
  const only = [...found.values()][0];
  if (!only) foreign(loc, to, `is not a commit of the first-parent history of ${loc.desiredRef} or ${loc.observedRef}, the state refs of ${loc.environment}`);
  return only;
}

/** The commit of `history` that matches `at` on the other ref: the same operation, else the newest not newer. */
function matchingPoint(history: StateCommit[], at: StateCommit): string | undefined {
  const same = history.find((c) => c.time === at.time && c.message === at.message);
  return (same ?? history.find((c) => c.time <= at.time))?.oid;
}

/** Resolves --to in the state histories as they are in `refs`; refuses a commit outside them. */
export async function resolveRestorePoint(reader: ObjectReader, loc: StateLocation, refs: RefSnapshot, to: string): Promise<RestorePoint> {
  checkCommitName(to);
  const desiredWalk = firstParentHistory(reader, refs.get(loc.desiredRef));
  const [desired, observed] = await Promise.all([
    desiredWalk,
    loc.observedRef === loc.desiredRef ? desiredWalk : firstParentHistory(reader, refs.get(loc.observedRef)),
  ]);
  const { commit, side } = findNamed(loc, { desired, observed }, to);
  const state = await readStateFile(reader, loc, side === 'desired' ? loc.desiredRef : loc.observedRef, commit.oid);
  if (state.doc?.environment !== loc.environment) foreign(loc, commit.oid, `holds no ${statePathOf(loc, 'state.yaml')} of ${loc.environment}`);
  // On a shared ref: a commit of the environment's own changed its directory (a root commit that has it did).
  if (loc.statePath && !wrotePath(await pathChange(reader, commit, loc.statePath)))
    foreign(
      loc,
      commit.oid,
      `did not change ${loc.statePath}/, the directory of ${loc.environment} on its shared state refs: it is a commit of another environment`,
    );
  const other = side === 'desired' ? observed : desired;
  const match = matchingPoint(other, commit);
  return side === 'desired'
    ? { commit: commit.oid, side, desired: commit.oid, observed: match }
    : { commit: commit.oid, side, desired: match, observed: commit.oid };
}
