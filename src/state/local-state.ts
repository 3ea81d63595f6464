/**
 * The local state service: what this machine keeps of a location besides the store's refs, and
 * the checks that keep online writers from overwriting it.
 * - The checkout's known branches of the state refs (./known-branches.ts): fast-forwarded after
 *   every write, judged before one, adopted by `state init` when the repository was re-created.
 * - A --local run's work: the run refs it left in the local state repository, the local
 *   branches it moved past the state (./local-work.ts judges them), and `state reset --local`,
 *   which moves those branches back.
 * It works through its own port (./local-repositories.ts), implemented over Git by the Git store's
 * layout (./git-local-repositories.ts) and in memory by test/fakes; both pass one conformance
 * suite. Nothing here pushes: the state repository is the store's.
 */
import { NylError, fail } from '../errors/diagnostic';
import { type KnownBranch, knownBranchesOf, recordedOwner, recordPattern, recordUpdates } from './known-branches';
import type { LocalRepositories } from './local-repositories';
import { cacheDivergedDiagnostic, localWorkDiagnostic } from './local-work';
import { coordinationNamespace, stateRefsOf, stateUnavailable } from './location';
import { readStateFile } from './read';
import type { RefWriteResult } from '../git/refs';
import type { RefSnapshot } from './store';

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

/** The own branches of a remote's cache repository that hold a --local run's receipts. */
interface CacheWork {
  cache: string;
  refs: string[];
}

/** What a --local run left locally that the state repository lacks (or that lags behind it). */
interface LocalWork {
  refs: RefSnapshot;
  branches: LocalBranch[];
}

export class LocalState {
  constructor(readonly repos: LocalRepositories) {}

  private get loc() {
    return this.repos.loc;
  }

  /** The clone's known branches of the state refs the state holds (each once), with their records. */
  private async knownBranches(state: RefSnapshot): Promise<KnownBranch[]> {
    if (this.repos.key === undefined) return [];
    const targets = stateRefsOf(this.loc).filter((r) => state.has(r));
    if (targets.length === 0) return [];
    const listing = await this.repos.readRefs(this.repos.checkout, [...targets, ...targets.map(recordPattern)]);
    return knownBranchesOf(listing, targets, this.repos.key);
  }

  /** The known branches whose tip, or whose record, is not the state's. */
  private async staleKnownBranches(state: RefSnapshot): Promise<KnownBranch[]> {
    const all = await this.knownBranches(state);
    return all.filter((b) => b.tip !== state.get(b.ref) || recordUpdates(b, this.repos.key!, state.get(b.ref)!).length > 0);
  }

  /**
   * Fast-forwards the clone's known branches to the state refs: creates them when missing, never
   * rewrites one that diverged, sets no upstream, and records which repository they copy
   * (./known-branches.ts). Returns the refs that hold work of this location the state lacks; a
   * branch of another repository is left alone and not reported.
   */
  async syncKnownBranches(state: RefSnapshot): Promise<string[]> {
    const stale = await this.staleKnownBranches(state);
    if (stale.length === 0) return [];
    const now = await this.fastForwardKnown(stale, state);
    await this.recordKnown(
      stale.filter((b) => now.get(b.ref) === state.get(b.ref)),
      state,
    );
    const left = stale.filter((b) => now.get(b.ref) !== state.get(b.ref));
    const held = await Promise.all(left.map((b) => this.holdsOwnWork(b)));
    return left.filter((_, i) => held[i]).map((b) => b.ref);
  }

  /** Moves the branches that are not at the state's tips there, fast-forward only; returns every branch's tip after. */
  private async fastForwardKnown(stale: KnownBranch[], state: RefSnapshot): Promise<Map<string, string | undefined>> {
    const now = new Map(stale.map((b) => [b.ref, b.tip]));
    const moving = stale.filter((b) => b.tip !== state.get(b.ref)).map((b) => b.ref);
    if (moving.length === 0) return now;
    const moved = await this.repos.fastForwardKnown(new Map(moving.map((r) => [r, state.get(r)!])));
    // A rejected non-fast-forward leaves the branch as it was.
    const after = moved ? state : await this.repos.readRefs(this.repos.checkout, moving);
    for (const ref of moving) now.set(ref, after.get(ref));
    return now;
  }

  /** These branches are at the state's tips: they copy this repository now, and no other. */
  private async recordKnown(synced: KnownBranch[], state: RefSnapshot): Promise<void> {
    const updates = synced.flatMap((b) => recordUpdates(b, this.repos.key!, state.get(b.ref)!));
    // A record that could not be written (a lock) leaves the branch unrecorded, as in an older clone.
    if (updates.length > 0) await this.repos.updateRefs(this.repos.checkout, updates);
  }

  /**
   * Does a known branch that is not at the state's tip hold work of this location? Yes when its
   * record is this repository's; no when it is another's. An unrecorded branch (an older clone)
   * is this location's unless its state.yaml is another environment's.
   */
  private async holdsOwnWork(branch: KnownBranch): Promise<boolean> {
    const owner = recordedOwner(branch);
    if (branch.tip === undefined || owner !== 'unrecorded') return branch.tip !== undefined && owner === 'mine';
    const read = await readStateFile(this.repos.checkoutReader, this.loc, branch.ref, branch.tip);
    return read.doc === undefined || read.doc.environment === this.loc.environment;
  }

  /**
   * Online writers refuse when the local state repository holds work the state repository lacks
   * (a --local run's run refs, checkpoints or lease first: they must be recovered locally; then
   * receipts on the local branches): they never overwrite or merge it silently. Refuses with
   * NYL-STATE-LOCAL-WORK when localRunRefs has any, then with NYL-STATE-DIVERGED. It
   * fast-forwards the known branches on the way (syncKnownBranches); `readOnly` judges the
   * branches without moving them, and leaves the run refs to the caller (nyl plan warns of them).
   */
  async requireNoUnpublishedWork(state: RefSnapshot, options: { readOnly?: boolean } = {}): Promise<void> {
    const refs = options.readOnly ? new Map() : await this.localRunRefs(state);
    if (refs.size > 0) throw new NylError(localWorkDiagnostic(this.loc.environment, coordinationNamespace(this.loc), refs.keys(), 'error'));
    const known = options.readOnly ? await this.divergedKnownBranches(state) : await this.syncKnownBranches(state);
    if (known.length > 0) {
      fail(
        'NYL-STATE-DIVERGED',
        `the clone's ${known.join(' and ')} hold${known.length === 1 ? 's' : ''} state the repository ${this.loc.url} does not have (a --local run?); nothing was changed`,
        {
          env: this.loc.environment,
          ref: known[0],
        },
      );
    }
    await this.refuseCacheWork(state);
  }

  /**
   * A remote that is not the checkout's origin keeps --local work in its cache repository's own
   * branches: online writers refuse it as they refuse the clone's (the fix names `state move
   * --from local`, which publishes from there, and the reset that discards it).
   */
  private async refuseCacheWork(state: RefSnapshot): Promise<void> {
    const work = await this.cacheWork(state);
    if (work) throw new NylError(cacheDivergedDiagnostic(this.loc, work, 'error'));
  }

  /**
   * The cache repository's own branches (a --local run's, for a remote that is not origin) that
   * are not in the history of the state's: receipts the state repository lacks. `status` warns of
   * them, online writers refuse them; undefined when there are none.
   */
  async cacheWork(state: RefSnapshot): Promise<CacheWork | undefined> {
    const cached = (await this.cacheBranches(state)).filter((b) => !b.behind);
    return cached.length === 0 ? undefined : { cache: this.repos.cacheRepository!, refs: cached.map((b) => b.ref) };
  }

  /**
   * Does the cache repository have its own branch `ref`? A --local command on a remote that is not
   * origin creates it there (from the last fetch), and only then: it is where `state move --from
   * local` finds that location's local state. False for every other location.
   */
  async cacheHasBranch(ref: string): Promise<boolean> {
    const cache = this.repos.cacheRepository;
    if (cache === undefined || this.repos.mayHaveRefs(cache, [ref]) === false) return false;
    return (await this.repos.readRefs(cache, [ref])).has(ref);
  }

  /**
   * The known branches syncKnownBranches would leave alone, judged without moving them: a branch
   * whose tip is not in the history of the state ref's (a tip the work repository does not even
   * have holds work it never got).
   */
  private async divergedKnownBranches(state: RefSnapshot): Promise<string[]> {
    const diverged: string[] = [];
    for (const b of await this.staleKnownBranches(state)) {
      const target = state.get(b.ref)!;
      if (b.tip === undefined || b.tip === target || (await this.repos.isAncestor(b.tip, target))) continue;
      if (await this.holdsOwnWork(b)) diverged.push(b.ref);
    }
    return diverged;
  }

  /**
   * Refs a --local run left in the local state repository of a remote location (its lease, run,
   * signal and evidence refs; not the damaged/ ones set aside for inspection): work the state
   * repository lacks, which the fix of NYL-STATE-LOCAL-WORK imports. A ref `state` holds too,
   * under the same name and id, is a published copy, not work (the run refs a `state move --from
   * local` carried, when it was killed before deleting them). Empty for 'clone' and 'path'
   * locations, which --local opens as online commands do. A cheap look first, so that the common
   * case starts no git process and reads nothing of the remote.
   */
  async localRunRefs(state: RefSnapshot): Promise<RefSnapshot> {
    const repo = this.repos.localState;
    if (repo === undefined) return new Map();
    const ns = coordinationNamespace(this.loc);
    if (this.repos.mayHaveRefs(repo, [ns]) === false) return new Map();
    const refs = await this.repos.readRefs(repo, [ns]);
    for (const [ref, oid] of [...refs]) if (ref.startsWith(`${ns}damaged/`) || state.get(ref) === oid) refs.delete(ref);
    return refs;
  }

  /**
   * The own state branches of a remote's cache repository (a --local run's) whose tips differ from
   * the state's; `behind` when a fast-forward brings one there. Empty when the checkout is the
   * local state repository (its branches are the known branches).
   */
  private async cacheBranches(state: RefSnapshot): Promise<LocalBranch[]> {
    const cache = this.repos.cacheRepository;
    if (cache === undefined) return [];
    const names = stateRefsOf(this.loc).filter((r) => state.has(r));
    if (names.length === 0 || this.repos.mayHaveRefs(cache, names) === false) return [];
    return this.compareBranches(cache, await this.repos.readRefs(cache, names), state);
  }

  /** Local tips that differ from the state's, each judged behind (in its history) or not. */
  private async compareBranches(repository: string, tips: RefSnapshot, state: RefSnapshot): Promise<LocalBranch[]> {
    const out: LocalBranch[] = [];
    for (const [ref, tip] of tips) {
      const target = state.get(ref);
      if (target === undefined || target === tip) continue;
      out.push({ repository, ref, tip, state: target, behind: await this.repos.isAncestor(tip, target) });
    }
    return out;
  }

  /**
   * The local branches of the state refs (the clone's known branches; a remote's cache
   * repository's own branches) whose tips differ from `state`'s, and localRunRefs. Their commits
   * become readable through the store's reader. Nothing moves.
   */
  async localWork(state: RefSnapshot): Promise<LocalWork> {
    const stale = (await this.staleKnownBranches(state)).filter((b) => b.tip !== undefined && b.tip !== state.get(b.ref));
    const own = await Promise.all(stale.map((b) => this.holdsOwnWork(b)));
    // The checkout's tips of this location become readable (and parents) in the work repository;
    // another repository's commits never go there.
    await this.adoptKnownBranches(new Map(stale.filter((_, i) => own[i]).map((b) => [b.ref, b.tip!])));
    const compared = await this.compareBranches(this.repos.checkout, new Map(stale.map((b) => [b.ref, b.tip!])), state);
    // Another repository's branch holds no work of this one: a reset only moves it forward (a
    // branch in the state's history is in the work repository already).
    const kept = compared.filter((c) => c.behind || own[stale.findIndex((b) => b.ref === c.ref)]);
    return { refs: await this.localRunRefs(state), branches: [...kept, ...(await this.cacheBranches(state))] };
  }

  /**
   * Moves each local branch from its `tip` to its `state` (compare-and-swap on the tip), all or
   * nothing per local repository; a branch not `behind` is first kept under `keepUnder`
   * (`${keepUnder}heads/...`) in its repository when given. Nothing is pushed.
   */
  async moveLocalBranches(branches: LocalBranch[], keepUnder?: string): Promise<RefWriteResult> {
    for (const repository of new Set(branches.map((b) => b.repository))) {
      const result = await this.moveBranchesOf(
        repository,
        branches.filter((b) => b.repository === repository),
        keepUnder,
      );
      if (!result.ok) return result;
    }
    return { ok: true };
  }

  private async moveBranchesOf(repository: string, mine: LocalBranch[], keepUnder: string | undefined): Promise<RefWriteResult> {
    if (repository !== this.repos.work) {
      // The checkout's known branches: bring the state's commits in first (objects only).
      const failed = await this.repos.copyCommits(repository, this.repos.work, [...new Set(mine.map((b) => b.state))]);
      if (failed !== undefined) stateUnavailable(this.loc, `cannot copy the state's commits into ${repository}: ${failed}`);
    }
    const keep =
      keepUnder === undefined ? [] : mine.filter((b) => !b.behind).map((b) => ({ ref: `${keepUnder}${b.ref.slice('refs/'.length)}`, expect: null, to: b.tip }));
    const result = await this.repos.updateRefs(repository, [...mine.map((b) => ({ ref: b.ref, expect: b.tip, to: b.state })), ...keep]);
    if (result.ok && repository === this.repos.checkout) {
      // The clone's known branches are at the state's tips: they copy this repository now.
      const state = new Map(mine.map((b) => [b.ref, b.state]));
      await this.recordKnown(await this.knownBranches(state), state);
    }
    return result;
  }

  /**
   * The clone's known branches of the state refs that `state` lacks, where they hold the
   * environment's state.yaml (a state repository re-created empty): their tips, read in the
   * clone; nothing is written anywhere. Empty when the clone's branches are the state itself.
   */
  async knownStateBeyond(state: RefSnapshot): Promise<RefSnapshot> {
    if (this.repos.key === undefined) return new Map();
    const missing = [this.loc.desiredRef, this.loc.observedRef].filter((r, i, a) => a.indexOf(r) === i && !state.has(r));
    if (missing.length === 0) return new Map();
    const known = await this.repos.readRefs(this.repos.checkout, missing);
    const holding = new Map<string, string>();
    for (const [ref, tip] of known) {
      // A damaged state.yaml is state too: a fresh one must not silently replace it.
      const read = await readStateFile(this.repos.checkoutReader, this.loc, ref, tip);
      // Another environment's state.yaml (the same ref name in another repository) is not this one's.
      if (read.damage || (read.doc && read.doc.environment === this.loc.environment)) holding.set(ref, tip);
    }
    return holding;
  }

  /** Makes the commits of these known branches readable through the store's reader and usable as parents. */
  async adoptKnownBranches(known: RefSnapshot): Promise<void> {
    if (known.size === 0 || this.repos.work === this.repos.checkout) return;
    // Objects only: no ref is created in the work repository.
    const failed = await this.repos.copyCommits(this.repos.work, this.repos.checkout, [...known.keys()]);
    if (failed !== undefined) stateUnavailable(this.loc, `cannot copy the clone's known branches: ${failed}`);
  }
}
