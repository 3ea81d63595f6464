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
 * For path and remote locations the checkout also keeps its known branches of the state refs:
 * the local state service (./local-state.ts) keeps them, through the port this store's layout
 * gives it (`repositories`, ./git-local-repositories.ts). The mirror refs need no repository
 * key: they live in the checkout only for its origin, else in the cache repository of the one
 * repository. Every git argv is built in src/git.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fail } from '../errors/diagnostic';
import { BatchReader } from '../git/batch-reader';
import { type RefCopy, fetchObjects, fetchRefs, initBareRepository, inHistory, objectFetchArgs, refFetchArgs } from '../git/fetch';
import type { Git } from '../git/git';
import { gitDirOf, isRepositoryDir, mayHaveRefsUnderDir } from '../git/ref-files';
import { type RefUpdate, type RefWriteResult, lsRemote, pushAtomic, readRefs } from '../git/refs';
import { type CommitSpec, FastImportSession } from '../git/object-writer';
import { RefTransactionSession } from '../git/ref-transactions';
import type { Checkout } from '../project/checkout';
import { cacheRoot } from '../util/cache-dir';
import type { JsonCache } from '../util/json-cache';
import { nylVersion } from '../util/version';
import { GitLocalRepositories } from './git-local-repositories';
import { repositoryKey } from './known-branches';
import { LocalState } from './local-state';
import {
  type StateLocation,
  cacheRepositoryOf,
  coordinationNamespace,
  isCheckoutOrigin,
  repositoryIdentity,
  stateRefsOf,
  stateUnavailable as unavailable,
} from './location';
import type { RefSnapshot, StateStore } from './store';

const MIRROR = 'refs/nyl-mirror/';

/**
 * Parsed documents are cached per Nyl version: a new version may validate or shape them
 * differently. Raise the tag for a change within a version (development). v2: source limits,
 * duration bounds and __proto__ keys are refused, and environments keep field locations, so a
 * project validated before must be validated again. v3: units have inputs and triggers, and a
 * project that reads source keeps the object ids of its tree. v4: and the local modules its
 * module directories call. v5: a project keeps its include patterns, and the object ids of its
 * tree also when a Command's action names a path.
 */
export const PARSE_FORMAT = `v5-${nylVersion()}`;

export class GitStateStore implements StateStore {
  /** Where objects are read and written. */
  readonly workDir: string;
  readonly reader: BatchReader;
  private readonly mirrored: boolean;
  /** The local state service's port over this store's layout (the checkout and the work repository). */
  readonly repositories: GitLocalRepositories;
  /** The git dir of a repository on this machine, once found (the cheap look for signals uses it per unit). */
  private localGitDir: string | undefined;
  /** The last fetch failed the way a network blip does (or timed out): the next ones try once. */
  private remoteDown = false;
  /** A state ref was missing at a read: later reads fetch the state refs by pattern at once (fetchExisting). */
  private stateRefMissing = false;
  private writer: FastImportSession | undefined;
  /** The work repository's ref transactions, through one `update-ref --stdin` for the store's life. */
  private refWriter: RefTransactionSession | undefined;

  constructor(
    readonly git: Git,
    readonly loc: StateLocation,
    readonly checkout: Checkout,
    env: NodeJS.ProcessEnv,
    checkoutReader: BatchReader,
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
    // The repository's key in the clone's records of known branches; none for a clone location, whose branches are the state.
    const key = loc.kind === 'clone' ? undefined : repositoryKey(repositoryIdentity(loc.url!, checkout.workTree));
    const mirror = (ref: string) => this.mirror(ref);
    this.repositories = new GitLocalRepositories(git, { loc, checkout: checkout.workTree, work: this.workDir, key, checkoutReader, mirror });
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
        const fromLocal = (await new LocalState(this.repositories).knownStateBeyond(new Map())).size > 0;
        fail('NYL-STATE-MISSING', `the state repository ${this.workDir} of ${this.loc.environment} does not exist`, {
          env: this.loc.environment,
          ...(fromLocal ? { fromLocal: true } : {}),
        });
      }
      if (!gitDirOf(this.workDir)) unavailable(this.loc, `${this.workDir} is not a Git repository`);
    } else if (this.loc.kind === 'remote' && this.workDir !== this.checkout.workTree && !isRepositoryDir(this.workDir)) {
      mkdirSync(this.workDir, { recursive: true });
      await initBareRepository(this.git, this.workDir);
    }
  }

  /**
   * A --local command on a remote's cache repository (location.ts, localLocation): the cache must
   * exist (an online command creates it), and its own state branches start from, and fast-forward
   * to, the remote state it last fetched (its mirror refs), without `+`: a branch holding local
   * work is never rewritten.
   */
  private async openLocalCache(): Promise<void> {
    if (!isRepositoryDir(this.workDir)) {
      fail(
        'NYL-STATE-UNAVAILABLE',
        `--local works on the cache repository ${this.workDir} of the state repository of ${this.loc.environment}, and it does not exist`,
        {
          env: this.loc.environment,
          fix: `create it with an online command, e.g. \`nyl status -e ${this.loc.environment}\`, which fetches the state; then run the --local command again`,
        },
      );
    }
    const refs = stateRefsOf(this.loc);
    const mirrorOf = (r: string) => `${MIRROR}${r.slice('refs/'.length)}`;
    const mirrors = await readRefs(this.git, this.workDir, refs.map(mirrorOf));
    const copies = refs.filter((r) => mirrors.has(mirrorOf(r))).map((r) => ({ from: mirrorOf(r), to: r }));
    // A rejected (diverged) branch keeps its local work; the run goes on from it.
    if (copies.length > 0) await fetchRefs(this.git, this.workDir, '.', copies, { updateHeadOk: true });
  }

  /**
   * Fetches into the work repository. Two nyl processes of one machine share a cache repository;
   * their fetches may race for a ref lock there, which is retried, never reported as unavailable.
   * Network failures are retried as readRemote says.
   */
  private fetch(args: string[], once = false) {
    return this.readRemote(args, once);
  }

  /**
   * Mirrors these refs (or prefixes) of the remote, forced and pruned (see fetch). With
   * mayBeMissing, an exact ref the remote lacks is no failure, and its stale mirror is pruned.
   */
  private fetchMirrors(refs: string[], once = false, mayBeMissing = false) {
    const copies: RefCopy[] = refs.map((r) => ({ from: r, to: this.mirror(r), ...(mayBeMissing ? { mayBeMissing } : {}) }));
    return this.fetch(refFetchArgs(this.loc.url!, copies, { force: true, prune: true }), once);
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
  async snapshot(options: { once?: boolean; readOnly?: boolean; stateMayBeMissing?: boolean; cached?: boolean } = {}): Promise<RefSnapshot> {
    const { exact, prefixes } = this.watchedRefs;
    if (this.loc.kind !== 'remote') return this.readLocalRefs([...exact, ...prefixes]);
    if (options.readOnly) return this.snapshotReadOnly();
    // The mirrors as the last fetch or push of this machine left them (a push updates them too).
    if (options.cached) return this.readMirrored([...exact, ...prefixes]);
    // A state ref found missing once (state init, the first run) is fetched by pattern from then on.
    if (options.stateMayBeMissing) this.stateRefMissing = true;
    const result = await this.fetchMirrors([...exact, ...prefixes], options.once, this.stateRefMissing);
    if (result.code !== 0) {
      const stderr = result.stderr.toString();
      if (!/couldn't find remote ref/i.test(stderr)) unavailable(this.loc, this.git.failureOf(result));
      await this.fetchExisting(options.once);
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
    const byId = await this.fetch(objectFetchArgs(this.loc.url!, missing));
    if (byId.code === 0) return;
    const byName = await this.fetch(objectFetchArgs(this.loc.url!, [...refs.keys()]));
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
    const mirrored = await readRefs(
      this.git,
      this.workDir,
      patterns.map((p) => this.mirror(p)),
    );
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
    return mayHaveRefsUnderDir(this.localGitDir, prefix);
  }

  /** Reads the current refs under one prefix of the state repository (signals, for a live run). */
  async snapshotPrefix(prefix: string): Promise<RefSnapshot> {
    if (this.loc.kind !== 'remote') return this.readLocalRefs([prefix]);
    const result = await this.fetchMirrors([prefix]);
    if (result.code !== 0) unavailable(this.loc, this.git.failureOf(result));
    return this.readMirrored([prefix]);
  }

  /**
   * When a state ref does not exist (yet): one more fetch, whose exact refs are patterns that
   * match nothing without failing (git/fetch.ts, mayBeMissing), and prune the mirrors of refs
   * that are gone. It used to list the remote first and fetch what it listed: two round trips
   * more than this one, at every command before the first transition (issue 33). A pattern may
   * copy more refs whose names continue a state ref's; only the exact names are read.
   */
  private async fetchExisting(once = false): Promise<void> {
    const { exact, prefixes } = this.watchedRefs;
    this.stateRefMissing = true;
    const result = await this.fetchMirrors([...exact, ...prefixes], once, true);
    if (result.code !== 0) unavailable(this.loc, this.git.failureOf(result));
  }

  /**
   * Moves refs all-or-nothing; every update carries the value it expects (./store.ts).
   *
   * A repository of this machine (`path`) takes writes of coordination refs only (lease, run,
   * signal and evidence refs: started markers, checkpoints, renewals) as a local ref transaction
   * on the repository itself, one process instead of a push's seven; the objects are already
   * there. Every write that moves a state ref is a push, so that the repository's hooks (branch
   * protection) judge it.
   */
  async write(updates: RefUpdate[]): Promise<RefWriteResult> {
    if (this.loc.kind === 'clone') return this.updateLocally(updates);
    const coordination = coordinationNamespace(this.loc);
    if (this.loc.kind === 'path' && updates.every((u) => u.ref.startsWith(coordination))) {
      if (!gitDirOf(this.workDir)) return { ok: false, kind: 'unreachable', message: `${this.workDir} is not a Git repository (any more)` };
      return this.updateLocally(updates);
    }
    const result = await pushAtomic(this.git, this.workDir, this.loc.pushURL!, updates);
    if (result.ok && this.mirrored) {
      // Keep the mirror in step so the next read in this process sees what we wrote.
      await this.updateLocally(updates.map((u) => ({ ref: this.mirror(u.ref), expect: undefined, to: u.to })));
    }
    return result;
  }

  /**
   * A transaction on the work repository, through the store's long-lived writer: a run writes
   * its coordination refs once per checkpoint push, and a process per write cost more than the
   * write (./ref-transactions.ts).
   */
  private updateLocally(updates: RefUpdate[]): Promise<RefWriteResult> {
    this.refWriter ??= new RefTransactionSession(this.git, this.workDir);
    return this.refWriter.apply(updates);
  }

  /** Is `ancestor` in the history of `tip`, in the work repository? An object it lacks is not. */
  async isAncestor(ancestor: string, tip: string): Promise<boolean> {
    return inHistory(this.git, this.workDir, ancestor, tip);
  }

  async importObjects(from: Pick<StateStore, 'localRepository'>, oids: string[]): Promise<void> {
    if (from.localRepository === this.workDir) return;
    const missing = await this.missingObjects([...new Set(oids)]);
    if (missing.length === 0) return;
    // Both work repositories are on this machine: a fetch by id from a path, into no ref.
    const result = await fetchObjects(this.git, this.workDir, from.localRepository, missing);
    if (result.code !== 0) unavailable(this.loc, `cannot copy the commits of ${from.localRepository}: ${this.git.failureOf(result)}`);
  }

  close(): void {
    this.writer?.close();
    this.refWriter?.close();
    this.reader.close();
  }
}

/** What a git command gave (src/state/ reaches processes only through Git). */
type GitResult = Awaited<ReturnType<Git['run']>>;

const LOCK_RACE = /cannot lock ref|Unable to create '.*\.lock'|unable to update local ref/i;
/** Failures of the network or of a server under load, which the next try may not meet. */
const TRANSIENT_NETWORK =
  /\b50[0234]\b|RPC failed|early EOF|unexpected disconnect|remote end hung up|Connection (refused|reset|timed out)|Could not resolve host|Empty reply|Operation timed out|transfer closed/i;
const FETCH_RETRY_DELAYS_MS = [500, 1000, 2000];

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
