/**
 * Opens what every environment command needs: the checkout, the project rendered from its
 * source commit, the Environment, its state location and store, and (for writers) the author.
 *
 * The Environment's own declaration (its source ref and state location) is read at HEAD (a name
 * matching an EnvironmentTemplate's pattern names an instance: project/instances.ts); its
 * units are rendered at the source commit (spec.source.ref, or --source), so that pointing an
 * environment at a release branch does not need that branch to know where state lives.
 *
 * With --worktree, a snapshot commit of the working files takes HEAD's place for both: the user
 * tries what the files say now, an uncommitted Environment (or a change to it) included.
 *
 * It also derives, from an opened environment, the inputs every operation hands on (the plan
 * input, the lease options, the commit trailers), so that each is assembled one way.
 */
import { join, relative } from 'node:path';
import { BUILTIN_DRIVERS, type DriverSet } from '../../drivers/registry';
import { type Diagnostic, diagnostic, fail } from '../../errors/diagnostic';
import { BatchReader } from '../../git/batch-reader';
import { materializeCommit } from '../../git/materialize';
import { headCommitOf, snapshotWorktree } from '../../git/worktree-snapshot';
import { type WorkingChange, workingChanges } from '../../git/working-changes';
import type { Identity } from '../../git/object-writer';
import { formatIdentity } from '../../lease/lease';
import type { TransactionOptions } from '../../lease/transaction';
import type { PlanInput } from '../../plan/planner';
import { type Checkout, openCheckout } from '../../project/checkout';
import { knownEnvironments, resolveEnvironment } from '../../project/instances';
import { resolveCommit, resolveSource } from '../../project/source-revision';
import { loadProjectAt } from '../../project/project-cache';
import type { EnvironmentResource, Project } from '../../project/types';
import type { DocumentSets } from '../../run/transition-plan';
import { GitStateStore, PARSE_FORMAT } from '../../state/git-store';
import { LocalState } from '../../state/local-state';
import { cacheRoot } from '../../util/cache-dir';
import { type CheckoutFacts, type StateLocation, localLocation, resolveLocation } from '../../state/location';
import type { RefSnapshot, StateStore } from '../../state/store';
import type { Trailers } from '../../state/transition';
import { JsonCache } from '../../util/json-cache';
import type { Runtime } from '../../util/runtime';
import { uuidv7 } from '../../util/uuid';
import { resolveIdentity } from './identity';

export interface EnvironmentRequest {
  path: string;
  environment: string;
  /** --source: a revision that overrides the Environment's source for this run. */
  source?: string;
  author?: string;
  /** --local: operate on the local state repository (state/location.ts, localLocation), without contacting remote state. */
  local?: boolean;
  /** --worktree: render from a snapshot commit of the checkout's working files (git/worktree-snapshot.ts). */
  worktree?: boolean;
}

/** A --worktree run's snapshot: the source commit, and where its objects are. */
interface WorktreeSource {
  snapshot: string;
  /** The working files match HEAD's tree: the snapshot holds what HEAD holds. */
  matchesHead: boolean;
  head: string;
  /** The repository whose object database holds the snapshot (the checkout). */
  repository: string;
}

/**
 * Everything an operation works on, opened once per command. Operations take it as an interface,
 * so that the protocol is also tested in-process over an in-memory store and fake drivers.
 */
export interface OpenedEnvironment {
  /** The project at the source commit. */
  project: Project;
  env: EnvironmentResource;
  sourceCommit: string;
  sourceOverride: boolean;
  /** --worktree: the snapshot that is the source commit; the desired transition retains it. */
  worktree?: WorktreeSource;
  loc: StateLocation;
  store: StateStore;
  /** The checkout's known branches and a --local run's work (state/local-state.ts). */
  local: LocalState;
  drivers: DriverSet;
  /** Present when the command writes state. */
  author?: Identity;
  /**
   * Identifies everything the plan reads besides state (Nyl's version, the project at HEAD and at
   * the source commit, the source commit, the shipped drivers), for caches of pure results.
   * Absent when it cannot be known.
   */
  inputKey?: string;
  /** The checkout and a store of another location of this environment (a state move's old one); absent in-process. */
  checkout?: CheckoutFacts;
  openStoreAt?(loc: StateLocation): { store: StateStore; local: LocalState };
  /** Unpacks the source commit (or another commit of the checkout, a teardown's) into dest; returns the project directory inside it. */
  materialize(dest: string, commit?: string): Promise<string>;
  /**
   * The working files under these paths (relative to the project root, '' the root) that differ
   * from the source commit, by path relative to the project root. Present only when the source
   * commit is the checkout's HEAD: with --worktree the working files are the source, and a source
   * ref naming another commit is not what the working files were checked out from.
   */
  workingChanges?(paths: readonly string[]): Promise<WorkingChange[]>;
  close(): void;
}

/** Unpacks the source commit of a checkout, as tools must see it (never the working tree). */
function materializerOf(rt: Runtime, checkout: Checkout, sourceCommit: string): (dest: string, commit?: string) => Promise<string> {
  return async (dest, commit = sourceCommit) => {
    const root = await materializeCommit(rt.git, checkout.workTree, commit, dest);
    return checkout.projectPrefix ? `${root}/${checkout.projectPrefix}` : root;
  };
}

/** The working files' changes to HEAD under paths of the project, by path relative to the project root. */
function workingChangesOf(rt: Runtime, checkout: Checkout): (paths: readonly string[]) => Promise<WorkingChange[]> {
  const prefix = checkout.projectPrefix ? `${checkout.projectPrefix}/` : '';
  return async (paths) => {
    const specs = paths.map((p) => (p === '' ? prefix.replace(/\/$/, '') || '.' : `${prefix}${p}`));
    const changes = await workingChanges(rt.git, checkout.workTree, specs);
    return changes.filter((c) => c.path.startsWith(prefix)).map((c) => ({ ...c, path: c.path.slice(prefix.length) }));
  };
}

/**
 * `renders: false` is for operations that never render units (state init, hold, resume, lease
 * break): they read the project at HEAD only and do not need the Environment's source ref.
 */
export async function openEnvironment(rt: Runtime, req: EnvironmentRequest, options: { writes: boolean; renders?: boolean }): Promise<OpenedEnvironment> {
  if (req.worktree && req.source !== undefined) worktreeConflict('--source');
  const checkout = await openCheckout(rt.git, req.path);
  const author = options.writes ? resolveIdentity(req.author, checkout) : undefined;
  const reader = new BatchReader(rt.git, checkout.workTree);
  let store: StateStore | undefined;
  try {
    const head = await resolveCommit(reader, 'HEAD', headAsker(checkout));
    const worktree = req.worktree ? await worktreeSource(rt, checkout, reader, head) : undefined;
    const cache = new JsonCache(join(cacheRoot(rt.env), 'parsed'), PARSE_FORMAT);
    // The declaration commit: HEAD, or with --worktree the snapshot (also the source commit).
    const declared = worktree?.snapshot ?? head;
    const headLoad = await loadProjectAt(checkout.projectRoot, reader, declared, checkout.projectPrefix, cache);
    const atHead = headLoad.project;
    const env = resolveEnvironment(atHead, req.environment);
    if (!env) {
      fail(
        'NYL-ENVIRONMENT-UNKNOWN',
        `the project declares no Environment ${req.environment}${atHead.templates?.size ? ", and no EnvironmentTemplate's namePattern matches it" : ''}`,
        {
          env: req.environment,
          ...knownEnvironments(atHead, req.environment),
        },
      );
    }
    const rev = options.renders === false ? 'HEAD' : (req.source ?? env.spec.source?.ref ?? 'HEAD');
    const asker = req.source !== undefined ? { what: '--source', env: env.name, override: true } : { what: `spec.source.ref of ${env.name}`, env: env.name };
    const sourceCommit = worktree ? declared : await resolveSource(rt.git, checkout, reader, rev, head, asker);
    const sourceLoad = sourceCommit === declared ? headLoad : await loadProjectAt(checkout.projectRoot, reader, sourceCommit, checkout.projectPrefix, cache);
    const project = sourceLoad.project;
    const configured = resolveLocation(atHead, env, checkout);
    const loc: StateLocation = req.local ? localLocation(configured, checkout, cacheRoot(rt.env)) : configured;
    const gitStore = new GitStateStore(rt.git, loc, checkout, rt.env, reader, cache);
    store = gitStore;
    const opened: OpenedEnvironment = {
      project,
      env,
      sourceCommit,
      sourceOverride: req.source !== undefined,
      ...(worktree ? { worktree } : {}),
      loc,
      store,
      local: new LocalState(gitStore.repositories),
      drivers: BUILTIN_DRIVERS,
      ...(headLoad.treeOid && sourceLoad.treeOid ? { inputKey: `${PARSE_FORMAT}:${headLoad.treeOid}:${sourceLoad.treeOid}:${sourceCommit}` } : {}),
      materialize: materializerOf(rt, checkout, sourceCommit),
      ...(!worktree && sourceCommit === head ? { workingChanges: workingChangesOf(rt, checkout) } : {}),
      checkout,
      openStoreAt: (at) => {
        const other = new GitStateStore(rt.git, at, checkout, rt.env, reader, cache);
        return { store: other, local: new LocalState(other.repositories) };
      },
      close: () => {
        store!.close();
        reader.close();
      },
    };
    if (author) opened.author = author;
    return opened;
  } catch (error) {
    store?.close();
    reader.close();
    throw error;
  }
}

/**
 * --worktree takes its source from the working files: --source would name another, and -l/-g
 * (several environments) would share one snapshot across environments the user did not name.
 */
export function worktreeConflict(option: string): never {
  fail('NYL-USAGE', `--worktree conflicts with ${option}: it reconciles exactly one named environment from the working files`, {
    fix: 'pass --worktree with a single -e <environment>, and no --source, -l or -g',
  });
}

/** Snapshots the checkout's working files (the user's index, HEAD and refs stay untouched). */
async function worktreeSource(rt: Runtime, checkout: Checkout, reader: BatchReader, head: string): Promise<WorktreeSource> {
  const obj = await reader.read(head);
  const snap = await snapshotWorktree(rt.git, checkout.workTree, headCommitOf(head, obj!.content));
  return { snapshot: snap.commit, matchesHead: snap.tree === snap.headTree, head, repository: checkout.workTree };
}

/**
 * NYL-SOURCE-WORKTREE for a --worktree report, naming the snapshot and whether state history
 * retains it: a run that wrote a transition did; a run with nothing to write, or a plan, did not.
 */
export function worktreeWarning(opened: OpenedEnvironment, retained: 'retained' | 'unwritten' | 'plan'): Diagnostic[] {
  const w = opened.worktree;
  if (!w) return [];
  const kept = {
    retained: 'state history retains it',
    unwritten: 'the run wrote no state, so nothing retains it',
    plan: 'a reconcile --worktree that writes state retains it',
  }[retained];
  const same = w.matchesHead ? `; the working files match HEAD ${w.head}, so a run without --worktree renders the same files from a commit of a branch` : '';
  return [
    diagnostic(
      'NYL-SOURCE-WORKTREE',
      'warning',
      `${opened.env.name} renders from the working-file snapshot ${w.snapshot}, not from a commit of a branch; ${kept}${same}`,
      {
        env: opened.env.name,
        data: { snapshot: w.snapshot, head: w.head, matchesHead: w.matchesHead, retained: retained === 'retained' },
      },
    ),
  ];
}

/** What the planner reads for these documents; an import adds its runs and the time. */
export function planInputOf(opened: OpenedEnvironment, generation: number, docs: DocumentSets): PlanInput & DocumentSets {
  return {
    project: opened.project,
    env: opened.env,
    generation,
    desired: docs.desired,
    observed: docs.observed,
    sourceCommit: opened.sourceCommit,
    drivers: opened.drivers,
  };
}

/** The lease an operation (not a run) takes: a fresh run id, the author, the Environment's duration. */
export function leaseOptionsOf(
  rt: Runtime,
  opened: OpenedEnvironment,
  operation: string,
  more: { initial?: RefSnapshot; waitMs?: number | undefined; keepBroken?: boolean } = {},
): TransactionOptions {
  const { waitMs, ...rest } = more;
  return { operation, run: uuidv7(rt.clock.now()), author: opened.author!, ...opened.env.spec.lease, ...rest, ...(waitMs !== undefined ? { waitMs } : {}) };
}

/** A transition's trailers: who asked (the author, unless a hold names its senders) and why. */
export function trailersOf(opened: OpenedEnvironment, reason: string | undefined, requestedBy = formatIdentity(opened.author!)): Trailers {
  return { requestedBy, ...(reason ? { reason } : {}) };
}

/**
 * The project at the checkout's HEAD, where Environments are declared: what a multi-environment
 * command selects from (-e names, -l labels, -g groups) before it opens each environment.
 */
/** HEAD's asker: the fix for a checkout without a commit names its directory when nyl runs elsewhere. */
function headAsker(checkout: Checkout): { what: string; projectDir?: string } {
  const projectDir = relative(process.cwd(), checkout.projectRoot).split('\\').join('/');
  return { what: "the checkout's HEAD", ...(projectDir ? { projectDir } : {}) };
}

export async function readDeclarations(rt: Runtime, path: string): Promise<Project> {
  const checkout = await openCheckout(rt.git, path);
  const reader = new BatchReader(rt.git, checkout.workTree);
  try {
    const head = await resolveCommit(reader, 'HEAD', headAsker(checkout));
    const cache = new JsonCache(join(cacheRoot(rt.env), 'parsed'), PARSE_FORMAT);
    return (await loadProjectAt(checkout.projectRoot, reader, head, checkout.projectPrefix, cache)).project;
  } finally {
    reader.close();
  }
}
