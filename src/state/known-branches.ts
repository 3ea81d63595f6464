/**
 * Which state repository each of the clone's known branches copies.
 *
 * For a `path` or `remote` location the checkout keeps a branch of each state ref under the ref's
 * own name (`refs/heads/nyl/dev/desired`): users read it with `git log`, a `--local` run on the
 * checkout's origin commits onto it, and `state move --from local` publishes it. One name can copy
 * one repository only. Two environments whose refs have the same name in two repositories (refused
 * in source, ./crossed-refs.ts, but possible across source revisions or branches) once shared it:
 * the second read the first one's state as its own, moved it, and blocked the first.
 *
 * So the clone records, for each known branch, the repository it copies:
 * `refs/nyl-known/<key>/heads/nyl/dev/desired` (the key: 12 hex digits of the sha256 of the
 * repository's identity, as its cache repository is named) points at the state tip the branch
 * was last set to. Exactly one repository's record exists for a branch Nyl keeps. A branch whose
 * record is another repository's is not this repository's to sync, judge or reset; a fast-forward
 * to this repository's tip still takes it over (its history is then this repository's: a move
 * from the other one). A branch without any record (a clone from before records, or a branch made
 * by hand) is this repository's unless its state.yaml is provably another environment's.
 * Pure: names and the decision; the store (./git-store.ts) reads and writes the refs.
 */
import { createHash } from 'node:crypto';

/** Where the records live: outside refs/heads/, so that no branch listing or plain push shows them. */
const KNOWN_RECORDS = 'refs/nyl-known/';

/** The key of a repository identity (location.ts, repositoryIdentity) in record names. */
export function repositoryKey(identity: string): string {
  return createHash('sha256').update(identity).digest('hex').slice(0, 12);
}

/** The record of a known branch for the repository of this key. */
export function recordRef(key: string, ref: string): string {
  return `${KNOWN_RECORDS}${key}/${ref.slice('refs/'.length)}`;
}

/** The pattern that lists a known branch's records of every repository (for-each-ref globs). */
export function recordPattern(ref: string): string {
  return `${KNOWN_RECORDS}*/${ref.slice('refs/'.length)}`;
}

/** A known branch of the checkout as read, with its records. */
export interface KnownBranch {
  ref: string;
  /** Its tip; undefined when the checkout has no such branch. */
  tip: string | undefined;
  /** This repository's record: the state tip the branch was last set to. */
  mine: string | undefined;
  /** The records of other repositories (ref names). */
  others: string[];
}

/** The known branches of these refs, from one listing of the branches and their records. */
export function knownBranchesOf(listing: ReadonlyMap<string, string>, refs: readonly string[], key: string): KnownBranch[] {
  return refs.map((ref) => {
    const suffix = `/${ref.slice('refs/'.length)}`;
    const records = [...listing.keys()].filter(
      (r) => r.startsWith(KNOWN_RECORDS) && r.endsWith(suffix) && !r.slice(KNOWN_RECORDS.length, -suffix.length).includes('/'),
    );
    const mineRef = recordRef(key, ref);
    return { ref, tip: listing.get(ref), mine: listing.get(mineRef), others: records.filter((r) => r !== mineRef) };
  });
}

/**
 * Whose a branch is, by its records: this repository's (its record), another's (only another
 * repository's record), or unrecorded.
 */
export function recordedOwner(branch: KnownBranch): 'mine' | 'other' | 'unrecorded' {
  if (branch.mine !== undefined) return 'mine';
  return branch.others.length > 0 ? 'other' : 'unrecorded';
}

/** The record changes once a branch is at the state's tip: this repository's record there, no other. */
export function recordUpdates(branch: KnownBranch, key: string, tip: string): Array<{ ref: string; expect: undefined; to: string | null }> {
  const mine = branch.mine === tip ? [] : [{ ref: recordRef(key, branch.ref), expect: undefined, to: tip }];
  return [...mine, ...branch.others.map((ref) => ({ ref, expect: undefined, to: null }))];
}
