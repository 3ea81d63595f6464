/**
 * The state store port: where an environment's state refs and their objects live.
 *
 * Contract (every implementation, Git-backed or in memory, passes test/conformance/state-store):
 * - `snapshot()` returns the current values of the environment's watched refs (desired, observed
 *   and everything under its coordination prefix); absent refs are missing from the map.
 *   `snapshot({readOnly: true})` returns the same and moves no ref anywhere, not even a mirror
 *   of the remote's refs in the work repository: it only brings the objects in (`nyl plan`).
 * - `write(updates)` is a Git-style transaction: it moves refs all or nothing. Every update
 *   states the value its ref must have now (`expect`, null = absent), and one stale expectation
 *   rejects the whole write (`{ok: false, kind: 'rejected'}`), leaving every ref as it was.
 *   `unreachable` means nothing is known about the outcome's cause beyond "the repository could
 *   not be reached".
 *   As with `git push --atomic --force-with-lease`, an update whose ref already holds its target
 *   value is up to date and passes whatever it expected. And a push judges an update to a ref's
 *   own value only against the refs the remote advertised when the push began: git sends no
 *   command for it, so the remote does not check it again under its ref lock, where it checks
 *   every ref the push moves. A ref moved in that window does not stop the write. A write that
 *   must not land once a ref moved therefore moves that ref: every write of a lease holder moves
 *   the lease to a new commit (../lease/lease.ts). A local ref transaction checks every update
 *   under its lock.
 * - `writeCommits(specs)` creates commits (with their trees and blobs) and returns their ids in
 *   order; it moves no ref. Objects are immutable: the same id always reads the same content.
 * - `reader` reads objects by id or `commit:path`; a tree's content is Git's binary tree format.
 * - Reads after a successful write see that write (read-your-writes within one store).
 */
import type { TreeEntry, GitObject } from '../git/batch-reader';
import type { CommitSpec } from '../git/object-writer';
import type { RefUpdate, RefWriteResult } from '../git/refs';
import type { StateLocation } from './location';

/** Remote ref values as last read; absent refs are missing from the map. */
export type RefSnapshot = Map<string, string>;

/** Reads immutable objects by id or `commit:path`. */
export interface ObjectReader {
  read(spec: string): Promise<GitObject | undefined>;
  readMany(specs: string[]): Promise<(GitObject | undefined)[]>;
  readTree(spec: string): Promise<TreeEntry[] | undefined>;
}

/** Values derived from immutable objects, keyed by object id; losing an entry only costs time. */
export interface DocumentCache {
  get<T>(kind: string, oid: string): T | undefined;
  set(kind: string, oid: string, value: unknown): void;
}

export interface StateStore {
  readonly loc: StateLocation;
  readonly reader: ObjectReader;
  readonly cache: DocumentCache;
  /** Where objects are written, as reports name it (a directory, or `memory:` for fakes). */
  readonly localRepository: string;
  /** Checks that the location can be opened; creates no repository (state init does). */
  ensureOpen(): Promise<void>;
  /**
   * `once`: a single attempt, for a caller that retries on its own (a write checking whether it
   * landed); otherwise a read that fails the way a network blip does is tried again first.
   * `readOnly`: move no ref of any repository (no mirror refs); the objects become readable.
   * `stateMayBeMissing`: the caller expects state refs to be absent (state init): a network
   * store reads in the way that costs no round trip more when they are.
   * `cached`: the refs as this machine last read or wrote them, without asking a network
   * repository (empty when it never did): only for a decision that a write fencing every one of
   * them then proves (`nyl hold`), and read again when it does not.
   */
  snapshot(options?: { once?: boolean; readOnly?: boolean; stateMayBeMissing?: boolean; cached?: boolean }): Promise<RefSnapshot>;
  /** The current refs under one prefix (signals, read by a live run between units). */
  snapshotPrefix(prefix: string): Promise<RefSnapshot>;
  /** A cheap look whether refs may exist under prefix; undefined when only a read can tell. */
  mayHaveRefsUnder(prefix: string): boolean | undefined;
  /** The transaction of the contract above; an empty one changes nothing and reaches nothing. */
  write(updates: RefUpdate[]): Promise<RefWriteResult>;
  writeCommits(commits: CommitSpec[]): Promise<string[]>;
  /**
   * Brings these commits, with everything they reach, from another store's work repository (or
   * another repository of this machine: the checkout holding a --worktree snapshot) into this
   * one's, moving no ref (a state move builds on the old location's commits). Nothing to do
   * when both stores share a work repository or the objects are here already.
   */
  importObjects(from: Pick<StateStore, 'localRepository'>, oids: string[]): Promise<void>;
  /** Is `ancestor` in the history of `tip` (a commit is in its own)? A commit not here is in none. */
  isAncestor(ancestor: string, tip: string): Promise<boolean>;
  close(): void;
}

/** The refs after a successful write of updates onto snapshot. */
export function applyUpdates(snapshot: RefSnapshot, updates: RefUpdate[]): RefSnapshot {
  const next = new Map(snapshot);
  for (const u of updates) {
    if (u.to === null) next.delete(u.ref);
    else next.set(u.ref, u.to);
  }
  return next;
}
