/**
 * The Git implementation of the state store port (./store.ts): opens an environment's state
 * location and moves its refs.
 *
 * A GitStateStore knows one work repository where Nyl reads and writes objects:
 * - clone: the checkout itself; ref writes are local `update-ref` transactions;
 * - path: the local state repository itself; ref writes are atomic pushes to it (hooks apply);
 * - remote: the checkout when the location is its origin, else a bare cache repository;
 *   remote refs are mirrored under refs/nyl-mirror/ there, writes are atomic pushes.
 * In every case a write is all-or-nothing with a compare-and-swap per ref.
 *
 * For path and remote locations the checkout also keeps its known branches of the state refs,
 * and records under refs/nyl-known/<repository key>/ which repository each one copies
 * (./known-branches.ts): a branch of another repository is never synced, judged or reset here.
 * The mirror refs need no such key: they live in the checkout only for its origin, else in the
 * cache repository of the one repository.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { NylError, fail } from '../errors/diagnostic';
import { localWorkDiagnostic } from './local-work';
import { BatchReader } from '../git/batch-reader';
import type { Git } from '../git/git';
import { type RefUpdate, type RefWriteResult, lsRemote, pushAtomic, readRefs, updateRefsLocally } from '../git/refs';
import { type CommitSpec, FastImportSession } from '../git/object-writer';
import type { Checkout } from '../project/checkout';
import { cacheRoot } from '../util/cache-dir';
import type { JsonCache } from '../util/json-cache';
import { nylVersion } from '../util/version';
import { type KnownBranch, knownBranchesOf, recordedOwner, recordPattern, recordUpdates, repositoryKey } from './known-branches';
import { type StateLocation, cacheRepositoryOf, coordinationNamespace, isCheckoutOrigin, repositoryIdentity, stateRefsOf } from './location';
import { readStateFile } from './read';
import type { LocalBranch, LocalWork, RefSnapshot, StateStore } from './store';

const MIRROR = 'refs/nyl-mirror/';

/**
 * Parsed documents are cached per Nyl version: a new version may validate or shape them
 * differently. Raise the tag for a change within a version (development). v2: source limits,
 * duration bounds and __proto__ keys are refused, and environments keep field locations, so a
 * project validated before must be validated again. v3: units have inputs and triggers, and a
 * project that reads source keeps the object ids of its tree. v4: and the local modules its
 * module directories call.
 */
export const PARSE_FORMAT = `v4-${nylVersion()}`;

function isGitDir(path: string): boolean {
  return existsSync(join(path, 'HEAD')) && existsSync(join(path, 'objects')) && existsSync(join(path, 'refs'));
}

/** The git dir of a repository path: a bare repository or a work tree with .git. */
export function gitDirOf(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  if (!statSync(path).isDirectory()) return undefined;
  if (isGitDir(path)) return path;
  const dotGit = join(path, '.git');
  if (existsSync(dotGit) && statSync(dotGit).isDirectory() && isGitDir(dotGit)) return dotGit;
  return undefined;
}

function unavailable(loc: StateLocation, detail: string, fix?: string): never {
  fail('NYL-STATE-UNAVAILABLE', `the state repository ${loc.url ?? 'of the clone'} of ${loc.environment} cannot be read: ${detail}`, {
    env: loc.environment,
    ...(fix ? { fix } : {}),
  });
}

export class GitStateStore implements StateStore {
  /** Where objects are read and written. */
  readonly workDir: string;
  readonly reader: BatchReader;
  private readonly mirrored: boolean;
  /** The repository's key in the clone's records of known branches; none for a clone location, whose branches are the state. */
  private readonly key: string | undefined;
  /** The git dir of a repository on this machine, once found (the cheap look for signals uses it per unit). */
  private localGitDir: string | undefined;
  /** The last fetch failed the way a network blip does (or timed out): the next ones try once. */
  private remoteDown = false;
  private writer: FastImportSession | undefined;

  constructor(
    readonly git: Git,
    readonly loc: StateLocation,
    readonly checkout: Checkout,
    env: NodeJS.ProcessEnv,
    private readonly checkoutReader: BatchReader,
    readonly cache: JsonCache,
  ) {
    if (loc.kind === 'clone') {
      this.workDir = loc.localPath ?? checkout.workTree;
      this.mirrored = false;
    } else if (loc.kind === 'path') {
      this.workDir = loc.localPath!;
      this.mirrored = false;
    } else {
      this.workDir = isCheckoutOrigin(loc, checkout) ? checkout.workTree : cacheRepositoryOf(loc.url!, cacheRoot(env));
      this.mirrored = true;
    }
    this.reader = this.workDir === checkout.workTree ? checkoutReader : new BatchReader(git, this.workDir);
    this.key = loc.kind === 'clone' ? undefined : repositoryKey(repositoryIdentity(loc.url!, checkout.workTree));
  }

  /** The refs this environment's state consists of, as remote names. */
  get watchedRefs(): { exact: string[]; prefixes: string[] } {
    const exact = stateRefsOf(this.loc);
    return { exact, prefixes: [coordinationNamespace(this.loc)] };
  }

  private mirror(ref: string): string {
    return this.mirrored ? `${MIRROR}${ref.slice('refs/'.length)}` : ref;
  }

  private unmirror(ref: string): string {
    return this.mirrored ? `refs/${ref.slice(MIRROR.length)}` : ref;
  }

  /** The port's name for the repository objects go to. */
  get localRepository(): string {
    return this.workDir;
  }

  writeCommits(commits: CommitSpec[]): Promise<string[]> {
    this.writer ??= new FastImportSession(this.git, this.workDir);
    return this.writer.write(commits);
  }

  /** Checks that the location can be opened; creates nothing (state init creates repositories). */
  async ensureOpen(): Promise<void> {
    if (this.loc.kind === 'clone' && this.loc.localPath) return this.openLocalCache();
    if (this.loc.kind === 'path') {
      if (!existsSync(this.workDir)) {
        const fromLocal = (await this.knownStateBeyond(new Map())).size > 0;
        fail('NYL-STATE-MISSING', `the state repository ${this.workDir} of ${this.loc.environment} does not exist`, {
          env: this.loc.environment,
          ...(fromLocal ? { fromLocal: true } : {}),
        });
      }
      if (!gitDirOf(this.workDir)) unavailable(this.loc, `${this.workDir} is not a Git repository`);
    } else if (this.loc.kind === 'remote' && this.workDir !== this.checkout.workTree && !isGitDir(this.workDir)) {
      mkdirSync(this.workDir, { recursive: true });
      await this.git.text(this.workDir, ['init', '--bare', '--quiet']);
    }
  }

  /**
   * A --local command on a remote's cache repository (location.ts, localLocation): the cache must
   * exist (an online command creates it), and its own state branches start from, and fast-forward
   * to, the remote state it last fetched (its mirror refs), without `+`: a branch holding local
   * work is never rewritten.
   */
  private async openLocalCache(): Promise<void> {
    if (!isGitDir(this.workDir)) {
      fail('NYL-STATE-UNAVAILABLE', `--local works on the cache repository ${this.workDir} of the state repository of ${this.loc.environment}, and it does not exist`, {
        env: this.loc.environment,
        fix: `create it with an online command, e.g. \`nyl status -e ${this.loc.environment}\`, which fetches the state; then run the --local command again`,
      });
    }
    const refs = stateRefsOf(this.loc);
    const mirrors = await readRefs(this.git, this.workDir, refs.map((r) => `${MIRROR}${r.slice('refs/'.length)}`));
    const specs = refs.filter((r) => mirrors.has(`${MIRROR}${r.slice('refs/'.length)}`)).map((r) => `${MIRROR}${r.slice('refs/'.length)}:${r}`);
    // A rejected (diverged) branch keeps its local work; the run goes on from it.
    if (specs.length > 0) await this.git.run(this.workDir, [...FETCH, '--update-head-ok', '.', ...specs]);
  }

  /**
   * Fetches into the work repository. Two nyl processes of one machine share a cache repository;
   * their fetches may race for a ref lock there, which is retried, never reported as unavailable.
   * Network failures are retried as readRemote says.
   */
  private fetch(args: string[], once = false) {
    return this.readRemote([...FETCH, ...args], once);
  }

  /**
   * Runs a git command that reads the remote (fetch, ls-remote). A network failure that may pass
   * (an HTTP 5xx, a reset or refused connection) is retried after 0.5, 1 and 2 s; a command that
   * hung until its timeout is not (the remote does not answer). Once a read failed so, the next
   * ones are tried once each until one succeeds: a remote that stayed down is not waited for again
   * at every read.
   */
  private async readRemote(args: string[], once = false): Promise<GitResult> {
    let network = once || this.remoteDown ? FETCH_RETRY_DELAYS_MS.length : 0;
    for (let attempt = 0; ; attempt++) {
      const result = await this.git.run(this.workDir, args);
      const stderr = result.stderr.toString();
      if (result.code === 0) {
        this.remoteDown = false;
        return result;
      }
      if (attempt < 8 && LOCK_RACE.test(stderr)) {
        await sleep(30 + Math.random() * 60 * (attempt + 1));
      } else if (network < FETCH_RETRY_DELAYS_MS.length && !result.timedOut && TRANSIENT_NETWORK.test(stderr)) {
        await sleep(FETCH_RETRY_DELAYS_MS[network++]!);
      } else {
        // Tried in full (not once) and still down: the next reads do not wait for it again.
        if (!once && (result.timedOut || TRANSIENT_NETWORK.test(stderr))) this.remoteDown = true;
        return result;
      }
    }
  }

  /** Refs of a repository on this machine; one that vanished is unavailable, not an internal error. */
  private async readLocalRefs(patterns: string[]): Promise<RefSnapshot> {
    if (this.loc.kind === 'path' && !gitDirOf(this.workDir)) unavailable(this.loc, `${this.workDir} is not a Git repository (any more)`);
    return readRefs(this.git, this.workDir, patterns);
  }

  /** Reads the current values of the environment's refs from the state repository. */
  async snapshot(options: { once?: boolean; readOnly?: boolean } = {}): Promise<RefSnapshot> {
    const { exact, prefixes } = this.watchedRefs;
    if (this.loc.kind !== 'remote') return this.readLocalRefs([...exact, ...prefixes]);
    if (options.readOnly) return this.snapshotReadOnly();
    const specs = [
      ...exact.map((r) => `+${r}:${this.mirror(r)}`),
      ...prefixes.map((p) => `+${p}*:${this.mirror(p)}*`),
    ];
    const result = await this.fetch(['--prune', this.loc.url!, ...specs], options.once);
    if (result.code !== 0) {
      const stderr = result.stderr.toString();
      if (!/couldn't find remote ref/i.test(stderr)) unavailable(this.loc, this.git.failureOf(result));
      await this.fetchExisting();
    }
    return this.readMirrored([...exact, ...prefixes]);
  }

  /**
   * A remote's refs without moving a ref anywhere (`nyl plan`): the mirror refs live in the work
   * repository, which is the clone itself when the state repository is its origin, so they are
   * listed (`ls-remote`) instead, and only the objects their tips lack are fetched, by id and into
   * no ref. Objects are immutable and unreferenced ones harm nothing: the repository's next gc
   * may drop them.
   */
  private async snapshotReadOnly(): Promise<RefSnapshot> {
    const { exact, prefixes } = this.watchedRefs;
    const listed = await lsRemote(this.git, this.loc.url!, [...exact, ...prefixes], (args) => this.readRemote(args));
    if (!listed.ok) unavailable(this.loc, listed.message);
    await this.fetchObjects(listed.refs);
    return listed.refs;
  }

  /**
   * Brings in the objects of these tips that the work repository lacks. By id first (protocol v2
   * serves any object); a server that refuses that gets the refs' names, without a destination:
   * state refs move fast-forward, so their newer tips carry the listed ones along.
   */
  private async fetchObjects(refs: RefSnapshot): Promise<void> {
    const missing = await this.missingObjects([...new Set(refs.values())]);
    if (missing.length === 0) return;
    const byId = await this.fetch([this.loc.url!, ...missing]);
    if (byId.code === 0) return;
    const byName = await this.fetch([this.loc.url!, ...refs.keys()]);
    if (byName.code !== 0) unavailable(this.loc, this.git.failureOf(byName));
    if ((await this.missingObjects(missing)).length > 0) unavailable(this.loc, 'its refs moved while they were read; run the command again');
  }

  /** The objects of these ids that the work repository does not have. */
  private async missingObjects(oids: string[]): Promise<string[]> {
    const found = await this.reader.readMany(oids);
    return oids.filter((_, i) => found[i] === undefined);
  }

  /** The mirrored copies of remote refs (exact names or prefixes), under their remote names. */
  private async readMirrored(patterns: string[]): Promise<RefSnapshot> {
    const mirrored = await readRefs(this.git, this.workDir, patterns.map((p) => this.mirror(p)));
    const refs: RefSnapshot = new Map();
    for (const [ref, oid] of mirrored) refs.set(this.unmirror(ref), oid);
    return refs;
  }

  /**
   * A cheap look for refs under a prefix of a repository on this machine, without starting git:
   * loose refs are files under the git dir, packed ones lines of packed-refs. Returns undefined
   * for network remotes, where only a fetch can tell, and for a repository whose refs are not
   * files (reftable).
   */
  mayHaveRefsUnder(prefix: string): boolean | undefined {
    if (this.loc.kind === 'remote') return undefined;
    this.localGitDir ??= gitDirOf(this.workDir);
    const gitDir = this.localGitDir;
    if (!gitDir || existsSync(join(gitDir, 'reftable'))) return undefined;
    const dir = join(gitDir, ...prefix.replace(/\/$/, '').split('/'));
    try {
      if (readdirSync(dir).length > 0) return true;
    } catch {
      /* no loose refs there */
    }
    try {
      return readFileSync(join(gitDir, 'packed-refs'), 'utf8').includes(` ${prefix}`);
    } catch {
      return false;
    }
  }

  /** Reads the current refs under one prefix of the state repository (signals, for a live run). */
  async snapshotPrefix(prefix: string): Promise<RefSnapshot> {
    if (this.loc.kind !== 'remote') return this.readLocalRefs([prefix]);
    const result = await this.fetch(['--prune', this.loc.url!, `+${prefix}*:${this.mirror(prefix)}*`]);
    if (result.code !== 0) unavailable(this.loc, this.git.failureOf(result));
    return this.readMirrored([prefix]);
  }

  /** Slow path when a state ref does not exist yet: list, fetch what exists, drop stale mirrors. */
  private async fetchExisting(): Promise<void> {
    const { exact, prefixes } = this.watchedRefs;
    // The listing is a read like a fetch: a 503 on it is retried too (it used to fail the read).
    const listed = await lsRemote(this.git, this.loc.url!, [...exact, ...prefixes], (args) => this.readRemote(args));
    if (!listed.ok) unavailable(this.loc, listed.message);
    const specs = [
      ...exact.filter((r) => listed.refs.has(r)).map((r) => `+${r}:${this.mirror(r)}`),
      ...prefixes.map((p) => `+${p}*:${this.mirror(p)}*`),
    ];
    const result = await this.fetch(['--prune', this.loc.url!, ...specs]);
    if (result.code !== 0) unavailable(this.loc, this.git.failureOf(result));
    const stale = exact.filter((r) => !listed.refs.has(r));
    if (stale.length > 0) {
      const have = await readRefs(this.git, this.workDir, stale.map((r) => this.mirror(r)));
      await updateRefsLocally(
        this.git,
        this.workDir,
        [...have].map(([ref, oid]) => ({ ref, expect: oid, to: null })),
      );
    }
  }

  /**
   * Moves refs all-or-nothing; every update carries the value it expects.
   *
   * A repository of this machine (`path`) takes writes of coordination refs only (lease, run,
   * signal and evidence refs: started markers, checkpoints, renewals) as a local ref transaction
   * on the repository itself, one process instead of a push's seven; the objects are already
   * there. Every write that moves a state ref is a push, so that the repository's hooks (branch
   * protection) judge it.
   */
  async write(updates: RefUpdate[]): Promise<RefWriteResult> {
    if (this.loc.kind === 'clone') return updateRefsLocally(this.git, this.workDir, updates);
    const coordination = coordinationNamespace(this.loc);
    if (this.loc.kind === 'path' && updates.every((u) => u.ref.startsWith(coordination))) {
      if (!gitDirOf(this.workDir)) return { ok: false, kind: 'unreachable', message: `${this.workDir} is not a Git repository (any more)` };
      return updateRefsLocally(this.git, this.workDir, updates);
    }
    const result = await pushAtomic(this.git, this.workDir, this.loc.pushURL!, updates);
    if (result.ok && this.mirrored) {
      // Keep the mirror in step so the next read in this process sees what we wrote.
      await updateRefsLocally(
        this.git,
        this.workDir,
        updates.map((u) => ({ ref: this.mirror(u.ref), expect: undefined, to: u.to })),
      );
    }
    return result;
  }

  /** The clone's known branches of the state refs the state holds (each once), with their records. */
  private async knownBranches(state: RefSnapshot): Promise<KnownBranch[]> {
    if (this.key === undefined) return [];
    const targets = stateRefsOf(this.loc).filter((r) => state.has(r));
    if (targets.length === 0) return [];
    const listing = await readRefs(this.git, this.checkout.workTree, [...targets, ...targets.map(recordPattern)]);
    return knownBranchesOf(listing, targets, this.key);
  }

  /** The known branches whose tip, or whose record, is not the state's. */
  private async staleKnownBranches(state: RefSnapshot): Promise<KnownBranch[]> {
    const all = await this.knownBranches(state);
    return all.filter((b) => b.tip !== state.get(b.ref) || recordUpdates(b, this.key!, state.get(b.ref)!).length > 0);
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
    await this.recordKnown(stale.filter((b) => now.get(b.ref) === state.get(b.ref)), state);
    const left = stale.filter((b) => now.get(b.ref) !== state.get(b.ref));
    const held = await Promise.all(left.map((b) => this.holdsOwnWork(b)));
    return left.filter((_, i) => held[i]).map((b) => b.ref);
  }

  /** Moves the branches that are not at the state's tips there, without `+`; returns every branch's tip after. */
  private async fastForwardKnown(stale: KnownBranch[], state: RefSnapshot): Promise<Map<string, string | undefined>> {
    const now = new Map(stale.map((b) => [b.ref, b.tip]));
    const moving = stale.filter((b) => b.tip !== state.get(b.ref)).map((b) => b.ref);
    if (moving.length === 0) return now;
    const source = this.workDir === this.checkout.workTree ? '.' : this.workDir;
    const result = await this.git.run(this.checkout.workTree, [...FETCH, source, ...moving.map((r) => `${this.mirror(r)}:${r}`)]);
    // A rejected non-fast-forward leaves the branch as it was.
    const after = result.code === 0 ? state : await readRefs(this.git, this.checkout.workTree, moving);
    for (const ref of moving) now.set(ref, after.get(ref));
    return now;
  }

  /** These branches are at the state's tips: they copy this repository now, and no other. */
  private async recordKnown(synced: KnownBranch[], state: RefSnapshot): Promise<void> {
    const updates = synced.flatMap((b) => recordUpdates(b, this.key!, state.get(b.ref)!));
    // A record that could not be written (a lock) leaves the branch unrecorded, as in an older clone.
    if (updates.length > 0) await updateRefsLocally(this.git, this.checkout.workTree, updates);
  }

  /**
   * Does a known branch that is not at the state's tip hold work of this location? Yes when its
   * record is this repository's; no when it is another's. An unrecorded branch (an older clone)
   * is this location's unless its state.yaml is another environment's.
   */
  private async holdsOwnWork(branch: KnownBranch): Promise<boolean> {
    const owner = recordedOwner(branch);
    if (branch.tip === undefined || owner !== 'unrecorded') return branch.tip !== undefined && owner === 'mine';
    const read = await readStateFile(this.checkoutReader, this.loc, branch.ref, branch.tip);
    return read.doc === undefined || read.doc.environment === this.loc.environment;
  }

  /**
   * Online writers refuse when the local state repository holds work the state repository lacks
   * (a --local run's run refs, checkpoints or lease first: they must be recovered locally; then
   * receipts on the local branches): they never overwrite or merge it silently.
   */
  async requireNoUnpublishedWork(state: RefSnapshot, options: { readOnly?: boolean } = {}): Promise<void> {
    // A read-only judge (nyl plan) leaves the run refs to its caller, which warns of them.
    const refs = options.readOnly ? new Map() : await this.localRunRefs(state);
    if (refs.size > 0) throw new NylError(localWorkDiagnostic(this.loc.environment, coordinationNamespace(this.loc), refs.keys(), 'error'));
    const known = options.readOnly ? await this.divergedKnownBranches(state) : await this.syncKnownBranches(state);
    if (known.length > 0) {
      fail('NYL-STATE-DIVERGED', `the clone's ${known.join(' and ')} hold${known.length === 1 ? 's' : ''} state the repository ${this.loc.url} does not have (a --local run?); nothing was changed`, {
        env: this.loc.environment,
        ref: known[0],
      });
    }
    const cached = (await this.cacheBranches(state)).filter((b) => !b.behind);
    if (cached.length === 0) return;
    // A remote that is not the checkout's origin keeps --local work in its cache repository: the
    // clone's branches (what `state move --from local` publishes) do not hold it, so the fix
    // names only the reset that discards it, and a log that looks where it is.
    fail('NYL-STATE-DIVERGED', `the cache repository ${this.workDir}'s ${cached.map((b) => b.ref).join(' and ')} hold${cached.length === 1 ? 's' : ''} state of a --local run the repository ${this.loc.url} does not have; nothing was changed`, {
      env: this.loc.environment,
      ref: cached[0]!.ref,
      cache: this.workDir,
    });
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
      if (b.tip === undefined || b.tip === target || (await this.isAncestor(b.tip, target))) continue;
      if (await this.holdsOwnWork(b)) diverged.push(b.ref);
    }
    return diverged;
  }

  /** Is `ancestor` in the history of `tip`, in the work repository? An object it lacks is not. */
  async isAncestor(ancestor: string, tip: string): Promise<boolean> {
    const result = await this.git.run(this.workDir, ['merge-base', '--is-ancestor', ancestor, tip]);
    return result.code === 0;
  }

  async importObjects(from: Pick<StateStore, 'localRepository'>, oids: string[]): Promise<void> {
    if (from.localRepository === this.workDir) return;
    const missing = await this.missingObjects([...new Set(oids)]);
    if (missing.length === 0) return;
    // Both work repositories are on this machine: a fetch by id from a path, into no ref.
    const result = await this.git.run(this.workDir, [...FETCH, from.localRepository, ...missing]);
    if (result.code !== 0) unavailable(this.loc, `cannot copy the commits of ${from.localRepository}: ${this.git.failureOf(result)}`);
  }

  /**
   * The local state repository of a remote location: where a --local command writes (the checkout
   * when the remote is its origin, else the cache repository); undefined for 'clone' and 'path',
   * which --local opens as online commands do.
   */
  private get localStateRepository(): string | undefined {
    return this.loc.kind === 'remote' ? this.workDir : undefined;
  }

  /**
   * Refs a --local run left in the local state repository: its lease, run, signal and evidence
   * refs under the coordination namespace (not the damaged/ ones set aside for inspection). A
   * look at the ref files first, so that the common case starts no git process.
   */
  async localRunRefs(state: RefSnapshot): Promise<RefSnapshot> {
    const repo = this.localStateRepository;
    if (repo === undefined) return new Map();
    const ns = coordinationNamespace(this.loc);
    if (mayHaveLocalRefs(repo, [ns]) === false) return new Map();
    const refs = await readRefs(this.git, repo, [ns]);
    for (const [ref, oid] of [...refs]) if (ref.startsWith(`${ns}damaged/`) || state.get(ref) === oid) refs.delete(ref);
    return refs;
  }

  /**
   * The own state branches of a remote's cache repository (a --local run's) whose tips differ from
   * the state's; `behind` when a fast-forward brings one there. Empty when the checkout is the
   * local state repository (its branches are the known branches).
   */
  private async cacheBranches(state: RefSnapshot): Promise<LocalBranch[]> {
    if (this.loc.kind !== 'remote' || this.workDir === this.checkout.workTree) return [];
    const names = stateRefsOf(this.loc).filter((r) => state.has(r));
    if (names.length === 0 || mayHaveLocalRefs(this.workDir, names) === false) return [];
    return this.compareBranches(this.workDir, await readRefs(this.git, this.workDir, names), state);
  }

  /** Local tips that differ from the state's, each judged behind (in its history) or not. */
  private async compareBranches(repository: string, tips: RefSnapshot, state: RefSnapshot): Promise<LocalBranch[]> {
    const out: LocalBranch[] = [];
    for (const [ref, tip] of tips) {
      const target = state.get(ref);
      if (target === undefined || target === tip) continue;
      out.push({ repository, ref, tip, state: target, behind: await this.isAncestor(tip, target) });
    }
    return out;
  }

  async localWork(state: RefSnapshot): Promise<LocalWork> {
    const stale = (await this.staleKnownBranches(state)).filter((b) => b.tip !== undefined && b.tip !== state.get(b.ref));
    const own = await Promise.all(stale.map((b) => this.holdsOwnWork(b)));
    // The checkout's tips of this location become readable (and parents) in the work repository;
    // another repository's commits never go there.
    await this.adoptKnownBranches(new Map(stale.filter((_, i) => own[i]).map((b) => [b.ref, b.tip!])));
    const compared = await this.compareBranches(this.checkout.workTree, new Map(stale.map((b) => [b.ref, b.tip!])), state);
    // Another repository's branch holds no work of this one: a reset only moves it forward (a
    // branch in the state's history is in the work repository already).
    const kept = compared.filter((c) => c.behind || own[stale.findIndex((b) => b.ref === c.ref)]);
    return { refs: await this.localRunRefs(state), branches: [...kept, ...(await this.cacheBranches(state))] };
  }

  async moveLocalBranches(branches: LocalBranch[], keepUnder?: string): Promise<RefWriteResult> {
    for (const repository of new Set(branches.map((b) => b.repository))) {
      const mine = branches.filter((b) => b.repository === repository);
      if (repository !== this.workDir) {
        // The checkout's known branches: bring the state's commits in first (objects only).
        const result = await this.git.run(repository, [...FETCH, this.workDir, ...new Set(mine.map((b) => b.state))]);
        if (result.code !== 0) unavailable(this.loc, `cannot copy the state's commits into ${repository}: ${this.git.failureOf(result)}`);
      }
      const keep = keepUnder === undefined ? [] : mine.filter((b) => !b.behind).map((b) => ({ ref: `${keepUnder}${b.ref.slice('refs/'.length)}`, expect: null, to: b.tip }));
      const result = await updateRefsLocally(this.git, repository, [...mine.map((b) => ({ ref: b.ref, expect: b.tip, to: b.state })), ...keep]);
      if (!result.ok) return result;
      if (repository === this.checkout.workTree) {
        // The clone's known branches are at the state's tips: they copy this repository now.
        const state = new Map(mine.map((b) => [b.ref, b.state]));
        await this.recordKnown(await this.knownBranches(state), state);
      }
    }
    return { ok: true };
  }

  async knownStateBeyond(state: RefSnapshot): Promise<RefSnapshot> {
    if (this.loc.kind === 'clone') return new Map();
    const missing = [this.loc.desiredRef, this.loc.observedRef].filter((r, i, a) => a.indexOf(r) === i && !state.has(r));
    if (missing.length === 0) return new Map();
    const known = await readRefs(this.git, this.checkout.workTree, missing);
    const holding = new Map<string, string>();
    for (const [ref, tip] of known) {
      // A damaged state.yaml is state too: a fresh one must not silently replace it.
      const read = await readStateFile(this.checkoutReader, this.loc, ref, tip);
      // Another environment's state.yaml (the same ref name in another repository) is not this one's.
      if (read.damage || (read.doc && read.doc.environment === this.loc.environment)) holding.set(ref, tip);
    }
    return holding;
  }

  async adoptKnownBranches(known: RefSnapshot): Promise<void> {
    if (known.size === 0 || this.workDir === this.checkout.workTree) return;
    // Objects only: no ref is created in the work repository.
    const result = await this.git.run(this.workDir, [...FETCH, this.checkout.workTree, ...known.keys()]);
    if (result.code !== 0) unavailable(this.loc, `cannot copy the clone's known branches: ${this.git.failureOf(result)}`);
  }

  close(): void {
    this.writer?.close();
    this.reader.close();
  }
}

/** What a git command gave (src/state/ reaches processes only through Git). */
type GitResult = Awaited<ReturnType<Git['run']>>;

/** Every fetch of Nyl: no tags, no FETCH_HEAD, quiet, no automatic gc in the middle of a run. */
const FETCH = ['fetch', '--no-tags', '--no-write-fetch-head', '--quiet', '--no-auto-gc'];

const LOCK_RACE = /cannot lock ref|Unable to create '.*\.lock'|unable to update local ref/i;
/** Failures of the network or of a server under load, which the next try may not meet. */
const TRANSIENT_NETWORK = /\b50[0234]\b|RPC failed|early EOF|unexpected disconnect|remote end hung up|Connection (refused|reset|timed out)|Could not resolve host|Empty reply|Operation timed out|transfer closed/i;
const FETCH_RETRY_DELAYS_MS = [500, 1000, 2000];

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * A look at a local repository's ref files, without a git process: false when none of these refs
 * (or refs under these prefixes) can exist; undefined when only git can tell (a linked worktree,
 * reftable).
 */
function mayHaveLocalRefs(repository: string, refs: string[]): boolean | undefined {
  const gitDir = gitDirOf(repository);
  if (!gitDir || existsSync(join(gitDir, 'reftable'))) return undefined;
  let packed = '';
  try {
    packed = readFileSync(join(gitDir, 'packed-refs'), 'utf8');
  } catch {
    /* no packed refs */
  }
  return refs.some((ref) => existsSync(join(gitDir, ...ref.replace(/\/$/, '').split('/'))) || packed.includes(` ${ref}`));
}
