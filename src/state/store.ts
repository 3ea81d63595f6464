/**
 * The state store port: where an environment's state refs and their objects live.
 *
 * Contract (every implementation, Git-backed or in memory, passes test/conformance/state-store):
 * - `snapshot()` returns the current values of the environment's watched refs (desired, observed
 *   and everything under its coordination prefix); absent refs are missing from the map.
 *   `snapshot({readOnly: true})` returns the same and moves no ref anywhere, not even a mirror
 *   of the remote's refs in the work repository: it only brings the objects in (`nyl plan`).
 * - `write(updates)` moves refs all or nothing: every update states the value its ref must have
 *   now (`expect`, null = absent) and one stale expectation rejects the whole write
 *   (`{ok: false, kind: 'rejected'}`), leaving every ref as it was. `unreachable` means nothing
 *   is known about the outcome's cause beyond "the repository could not be reached".
 *   As with `git push --atomic --force-with-lease`, an update whose ref already holds its target
 *   value is up to date and passes whatever it expected. Nyl relies on that only where it is
 *   safe: a fence (`expect` = `to` = the lease it holds) passes exactly while the lease is
 *   unchanged, and every other target is a new commit that only its writer can produce.
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
   */
  snapshot(options?: { once?: boolean; readOnly?: boolean }): Promise<RefSnapshot>;
  /** The current refs under one prefix (signals, read by a live run between units). */
  snapshotPrefix(prefix: string): Promise<RefSnapshot>;
  /** A cheap look whether refs may exist under prefix; undefined when only a read can tell. */
  mayHaveRefsUnder(prefix: string): boolean | undefined;
  write(updates: RefUpdate[]): Promise<RefWriteResult>;
  writeCommits(commits: CommitSpec[]): Promise<string[]>;
  /**
   * Fast-forwards the clone's local known branches to the state refs;
   * returns the refs that diverged and were left alone.
   */
  syncKnownBranches(state: RefSnapshot): Promise<string[]>;
  /**
   * Refuses with NYL-STATE-LOCAL-WORK when localRunRefs has any, then with NYL-STATE-DIVERGED
   * when the local branches (the clone's known branches, a remote's cache repository's own
   * branches) hold unpublished work. It fast-forwards the known branches on the way
   * (syncKnownBranches); `readOnly` judges the branches without moving them, and leaves the run
   * refs to the caller (nyl plan warns of them).
   */
  requireNoUnpublishedWork(state: RefSnapshot, options?: { readOnly?: boolean }): Promise<void>;
  /**
   * The clone's known branches of the state refs that `state` lacks, where they hold the
   * environment's state.yaml (a state repository re-created empty): their tips, read in the
   * clone; nothing is written anywhere. Empty when the clone's branches are the state itself.
   */
  knownStateBeyond(state: RefSnapshot): Promise<RefSnapshot>;
  /** Makes the commits of these known branches readable through `reader` and usable as parents. */
  adoptKnownBranches(known: RefSnapshot): Promise<void>;
  /**
   * Brings these commits, with everything they reach, from another store's work repository (or
   * another repository of this machine: the checkout holding a --worktree snapshot) into this
   * one's, moving no ref (a state move builds on the old location's commits). Nothing to do
   * when both stores share a work repository or the objects are here already.
   */
  importObjects(from: Pick<StateStore, 'localRepository'>, oids: string[]): Promise<void>;
  /** Is `ancestor` in the history of `tip` (a commit is in its own)? A commit not here is in none. */
  isAncestor(ancestor: string, tip: string): Promise<boolean>;
  /**
   * Refs a --local run left in the local state repository of a remote location (its lease, run,
   * signal and evidence refs; not the damaged/ ones): work the state repository lacks, which the
   * fix of NYL-STATE-LOCAL-WORK imports. A ref `state` holds too, under the same name and id, is a
   * published copy, not work (the run refs a `state move --from local` carried, when it was killed
   * before deleting them). Empty for 'clone' and 'path' locations, which --local opens as online
   * commands do. Cheap when there are none (no read of the remote).
   */
  localRunRefs(state: RefSnapshot): Promise<RefSnapshot>;
  /**
   * The local branches of the state refs (the clone's known branches; a remote's cache
   * repository's own branches) whose tips differ from `state`'s, and localRunRefs. Their commits
   * become readable through `reader`. Nothing moves.
   */
  localWork(state: RefSnapshot): Promise<LocalWork>;
  /**
   * Moves each local branch from its `tip` to its `state` (compare-and-swap on the tip), all or
   * nothing per local repository; a branch not `behind` is first kept under `keepUnder`
   * (`${keepUnder}heads/...`) in its repository when given. Nothing is pushed.
   */
  moveLocalBranches(branches: LocalBranch[], keepUnder?: string): Promise<RefWriteResult>;
  close(): void;
}

/** A local branch of a state ref whose tip differs from the state repository's. */
export interface LocalBranch {
  /** The repository holding it: the checkout, or a remote's cache repository. */
  repository: string;
  ref: string;
  tip: string;
  /** The state ref's tip in the state repository. */
  state: string;
  /** `tip` is in the history of `state`: a fast-forward, no local work lost. */
  behind: boolean;
}

/** What a --local run left locally that the state repository lacks (or that lags behind it). */
export interface LocalWork {
  refs: RefSnapshot;
  branches: LocalBranch[];
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
