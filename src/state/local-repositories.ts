/**
 * The port of the local state service (./local-state.ts): the repository operations it needs on
 * this machine, and the layout of the repositories a location uses.
 *
 * The repositories are named by strings (paths for Git, `memory:<name>` for the fake in
 * test/fakes); a name is only ever compared and handed back. Two matter:
 * - the checkout, which keeps its known branches of the state refs and their records
 *   (./known-branches.ts);
 * - the work repository of the location's store (StateStore.localRepository), where the state's
 *   objects are and where a remote's state tips are mirrored by the store's reads.
 * They are one repository for a clone location, and for a remote that is the checkout's origin.
 *
 * Contract (every implementation, Git-backed or in memory, passes test/conformance/local-state):
 * - readRefs lists refs like `git for-each-ref`: a pattern matches a ref exactly, as a prefix up
 *   to a '/', or as a glob (`*`);
 * - mayHaveRefs is a cheap look that never says false when such a ref exists;
 * - updateRefs is one local all-or-nothing transaction (expect undefined: unchecked);
 * - isAncestor answers in the work repository; a commit it lacks is in no history;
 * - fastForwardKnown moves each of the checkout's branches to the tip given, as the work
 *   repository's copy of the state holds it, bringing its objects along: a branch that does not
 *   fast-forward keeps its tip (the others still move), and the answer is then false;
 * - copyCommits brings revisions (ids, or ref names of `from`) with their history into another
 *   repository and moves no ref; it answers why it failed, or undefined.
 */
import type { RefUpdate, RefWriteResult } from '../git/refs';
import type { StateLocation } from './location';
import type { ObjectReader, RefSnapshot } from './store';

export interface LocalRepositories {
  readonly loc: StateLocation;
  /** The checkout: its known branches of the state refs, and their records. */
  readonly checkout: string;
  /** The store's work repository (StateStore.localRepository). */
  readonly work: string;
  /**
   * The location's repository key in the checkout's records (./known-branches.ts); undefined when
   * the checkout keeps no known branches of it (a clone location: its branches are the state).
   */
  readonly key: string | undefined;
  /**
   * Where a --local command of this location writes while its run refs are not the state's (a
   * remote's work repository); undefined when --local opens the location as online commands do.
   */
  readonly localState: string | undefined;
  /** A remote's cache repository when it is not the checkout: its own state branches are --local work. */
  readonly cacheRepository: string | undefined;
  /** Reads objects of the checkout. */
  readonly checkoutReader: ObjectReader;
  readRefs(repository: string, patterns: string[]): Promise<RefSnapshot>;
  mayHaveRefs(repository: string, refs: string[]): boolean | undefined;
  updateRefs(repository: string, updates: RefUpdate[]): Promise<RefWriteResult>;
  isAncestor(ancestor: string, tip: string): Promise<boolean>;
  fastForwardKnown(tips: RefSnapshot): Promise<boolean>;
  copyCommits(into: string, from: string, revisions: string[]): Promise<string | undefined>;
}
