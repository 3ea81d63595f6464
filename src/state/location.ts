/**
 * Where an environment's state lives, decided without I/O.
 *
 * Order: the Environment's state.repositoryRef / state.repository, else that of the
 * EnvironmentGroup with shared fields that selects it, else the checkout's origin, else the
 * clone itself. A GitRepository's publishURL is used for pushes.
 *
 * Resolving refuses state refs that would mix: a source branch (the branch source.ref renders, or
 * the one checked out), and a ref name another environment uses in another repository, or in the
 * same repository and directory (./crossed-refs.ts).
 */
import { createHash } from 'node:crypto';
import { byCodeUnits } from '../util/compare';
import { isAbsolute, join, resolve as resolvePath } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { type SourceLocation, fail } from '../errors/diagnostic';
import type { EnvironmentGroupResource, EnvironmentResource, Project, StateSpec } from '../project/types';
import { groupSelects } from '../project/selectors';
import { probeInstance } from '../project/instances';
import { type PlacedRefs, refuseCrossedRefs } from './crossed-refs';

type LocationKind =
  /**
   * A repository's own branches are the state and its refs the lease: the clone's, or under
   * --local the cache repository of a remote (`localPath`). Ref writes are local transactions.
   */
  | 'clone'
  /** A repository on this machine (absolute path or file:// URL), opened directly. */
  | 'path'
  /** Any other URL, read through a bare cache repository (or the checkout when it is origin). */
  | 'remote';

export interface StateLocation {
  environment: string;
  kind: LocationKind;
  /** Where reads come from: a URL, or for 'path' the file:// URL. Undefined for 'clone'. */
  url?: string;
  /** Where pushes go (publishURL, else url). */
  pushURL?: string;
  /**
   * For 'path': the absolute filesystem path of the repository. For 'clone' under --local: the
   * cache repository whose own branches are the state (absent: the checkout).
   */
  localPath?: string;
  /** Full ref names. */
  desiredRef: string;
  observedRef: string;
  /** Directory of this environment's files on the state refs ('' for the root). */
  statePath: string;
  /** e.g. refs/nyl/ ; the lease is `${prefix}${env}/lease`. */
  coordinationPrefix: string;
  /** Which rule of the resolution order chose the repository, e.g. `Environment dev`. */
  chosenBy: string;
}

export interface CheckoutFacts {
  /** Absolute path of the checkout's work tree. */
  workTree: string;
  /** remote.origin.url, when the checkout has one. */
  originURL?: string;
  /** The branch checked out (a full ref name), unless HEAD is detached. */
  currentBranch?: string;
}

export const DEFAULT_PREFIX = 'refs/nyl/';

function branchRef(name: string): string {
  return name.startsWith('refs/') ? name : `refs/heads/${name}`;
}

/** Picks the state spec that names a repository, in the order above. */
function pickRepositorySpec(
  project: Project,
  env: EnvironmentResource,
): { spec?: StateSpec; chosenBy: string; shared?: StateSpec; group?: EnvironmentGroupResource } {
  const group = sharingGroup(project, env);
  const shared = group ? { shared: group.spec.shared!.state!, group } : {};
  const own = env.spec.state;
  // The repository is taken whole (never a URL from one and a publishURL from another); the
  // group still lends every field the member leaves unset.
  if (own?.repository || own?.repositoryRef) return { spec: own, chosenBy: `Environment ${env.name}`, ...shared };
  if (group) return { spec: group.spec.shared!.state!, chosenBy: `EnvironmentGroup ${group.name}`, ...shared };
  return { chosenBy: '' };
}

/** The group whose shared state applies to an Environment: of those selecting it, the first by name. */
function sharingGroup(project: Project, env: EnvironmentResource): EnvironmentGroupResource | undefined {
  return [...project.groups.values()].filter((g) => g.spec.shared?.state && groupSelects(g, env)).sort((a, b) => byCodeUnits(a.name, b.name))[0];
}

type StateRefField = 'desiredRef' | 'observedRef';

/** The full ref names source.ref renders from as a branch, here or on its remote (origin/main: main). */
function sourceBranchRefs(sourceRef: string | undefined): string[] {
  if (sourceRef === undefined || sourceRef === 'HEAD') return [];
  const remote = /^refs\/remotes\/[^/]+\/(.+)$/.exec(sourceRef) ?? /^origin\/(.+)$/.exec(sourceRef);
  return [branchRef(sourceRef), ...(remote ? [`refs/heads/${remote[1]!}`] : [])];
}

/** Where a state ref is set: the Environment's field, the group's shared one, or nowhere (the default). */
function stateRefLocation(
  env: EnvironmentResource,
  group: EnvironmentGroupResource | undefined,
  field: StateRefField,
  clash: 'source' | 'checkout',
): SourceLocation & { pointer: string } {
  const at = (r: EnvironmentResource | EnvironmentGroupResource, pointer: string): SourceLocation & { pointer: string } => {
    const l = r.locations?.[pointer];
    return { file: r.origin.file, line: l?.line ?? r.origin.line, ...(l ? { column: l.column } : {}), pointer };
  };
  if (env.spec.state?.[field] !== undefined) return at(env, `/spec/state/${field}`);
  if (group?.spec.shared?.state?.[field] !== undefined) return at(group, `/spec/shared/state/${field}`);
  return clash === 'source' ? at(env, '/spec/source/ref') : at(env, `/spec/state/${field}`);
}

/**
 * Refuses a state ref that is a source branch: the branch the Environment's source.ref renders,
 * or the branch checked out. Nyl commits state onto its state refs and fast-forwards the clone's
 * branches of them; `desiredRef: main` once committed state onto the checked-out main (and
 * origin's main).
 */
function refuseSourceBranchRefs(
  env: EnvironmentResource,
  group: EnvironmentGroupResource | undefined,
  refs: Record<StateRefField, string>,
  checkout: CheckoutFacts,
): void {
  const source = sourceBranchRefs(env.spec.source?.ref);
  for (const field of ['desiredRef', 'observedRef'] as const) {
    const ref = refs[field];
    const what = `the ${field === 'desiredRef' ? 'desired' : 'observed'} state ref ${ref} of environment ${env.name}`;
    if (source.includes(ref)) {
      const location = stateRefLocation(env, group, field, 'source');
      fail('NYL-SOURCE-INVALID', `${what} is the branch its source.ref ${env.spec.source!.ref!} renders: state commits would land on the source`, {
        location,
        fix:
          location.pointer === '/spec/source/ref'
            ? `point spec.source.ref at the branch to render, not at ${ref}, which holds the state of ${env.name}`
            : `give the state a branch of its own: change ${location.pointer.slice(1).replace(/\//g, '.')} (the default is nyl/${env.name}/${field === 'desiredRef' ? 'desired' : 'observed'})`,
      });
    }
    if (checkout.currentBranch === ref) {
      fail('NYL-SOURCE-INVALID', `${what} is the branch checked out in ${checkout.workTree}: state commits would land on it`, {
        location: stateRefLocation(env, group, field, 'checkout'),
        fix: `check out a source branch (git switch <branch>) before running nyl, or give the state a branch of its own in spec.state.${field}`,
      });
    }
  }
}

/** Absolute local path named by a URL or path, or undefined for a network URL. */
export function localPathOf(url: string, base: string): string | undefined {
  if (url.startsWith('file://')) {
    try {
      return fileURLToPath(url);
    } catch {
      fail('NYL-SOURCE-INVALID', `${url} is not a local file:// URL (a file URL names no host: file:///absolute/path)`, {
        fix: `write it as file:///${url.slice('file://'.length)} or as an absolute path`,
      });
    }
  }
  if (isAbsolute(url)) return url;
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url) || /^[^/]+@[^/]+:/.test(url)) return undefined;
  if (url.startsWith('./') || url.startsWith('../')) return resolvePath(base, url);
  return undefined;
}

/** A comparable identity for a repository URL: lower-case host, no trailing `/` or `.git`. */
export function repositoryIdentity(url: string, base: string): string {
  let local: string | undefined;
  try {
    local = localPathOf(url, base);
  } catch {
    local = undefined; // not a valid local URL: compare it as written
  }
  if (local)
    return pathToFileURL(resolvePath(local))
      .href.replace(/\/$/, '')
      .replace(/\.git$/, '');
  let s = url
    .trim()
    .replace(/\/+$/, '')
    .replace(/\.git$/, '');
  const m = /^([a-z][a-z0-9+.-]*:\/\/)([^/]*)(.*)$/i.exec(s);
  if (m) s = `${m[1]!.toLowerCase()}${m[2]!.toLowerCase().replace(/^[^@]*@/, '')}${m[3]}`;
  // scp-like `user@host:path` is ssh://host/path for identity purposes.
  const scp = /^(?:[^@/]+@)?([^:/]+):(?!\/\/)(.*)$/.exec(s);
  if (!m && scp) s = `ssh://${scp[1]!.toLowerCase()}/${scp[2]!.replace(/^\/+/, '')}`;
  return s;
}

export function resolveLocation(project: Project, env: EnvironmentResource, checkout: CheckoutFacts): StateLocation {
  const configured = configuredLocation(project, env, checkout);
  const { loc, group } = configured;
  refuseSourceBranchRefs(env, group, { desiredRef: loc.desiredRef, observedRef: loc.observedRef }, checkout);
  refuseCrossedRefs(placed(configured, checkout), otherEnvironments(project, env, checkout));
  return loc;
}

/** A configured location, with the group whose shared fields it took (for errors about them). */
interface Configured {
  env: EnvironmentResource;
  loc: StateLocation;
  group: EnvironmentGroupResource | undefined;
}

/** The location the resolution order gives an environment, refusing nothing but a malformed URL. */
function configuredLocation(project: Project, env: EnvironmentResource, checkout: CheckoutFacts): Configured {
  const picked = pickRepositorySpec(project, env);
  const own = env.spec.state ?? {};
  // Ref names and the path come from the Environment, else the group's shared fields.
  const shared = picked.shared ?? {};
  const desiredRef = branchRef(own.desiredRef ?? shared.desiredRef ?? `nyl/${env.name}/desired`);
  const observedRef = branchRef(own.observedRef ?? shared.observedRef ?? `nyl/${env.name}/observed`);
  const statePath = (own.path ?? shared.path ?? '').replace(/^\/+|\/+$/g, '');
  const coordinationPrefix = own.coordinationRefPrefix ?? shared.coordinationRefPrefix ?? DEFAULT_PREFIX;
  const common = { environment: env.name, desiredRef, observedRef, statePath, coordinationPrefix };
  const { repository, chosenBy } = repositoryOf(project, picked, checkout);
  return { env, loc: locationAt(common, repository, chosenBy, checkout), group: picked.shared ? picked.group : undefined };
}

/** The repository the picked spec names (a GitRepository, a URL), else the checkout's origin, else none. */
function repositoryOf(
  project: Project,
  picked: ReturnType<typeof pickRepositorySpec>,
  checkout: CheckoutFacts,
): { repository?: { url: string; pushURL: string }; chosenBy: string } {
  if (picked.spec?.repositoryRef) {
    const repo = project.repositories.get(picked.spec.repositoryRef);
    if (!repo) throw new Error(`unknown GitRepository ${picked.spec.repositoryRef}`); // validated at load
    return { repository: { url: repo.spec.url, pushURL: repo.spec.publishURL ?? repo.spec.url }, chosenBy: `${picked.chosenBy} (GitRepository ${repo.name})` };
  }
  if (picked.spec?.repository) {
    const { repoURL, publishURL } = picked.spec.repository;
    return { repository: { url: repoURL, pushURL: publishURL ?? repoURL }, chosenBy: picked.chosenBy };
  }
  if (checkout.originURL) return { repository: { url: checkout.originURL, pushURL: checkout.originURL }, chosenBy: "the checkout's origin" };
  return { chosenBy: picked.chosenBy };
}

/**
 * The refs of every other environment: the declared ones, and a probe instance of each template
 * (a ref without the instance's name in it is every instance's). One whose location cannot be
 * resolved (a malformed URL, an instance its template cannot make) is refused when it is opened.
 */
function otherEnvironments(project: Project, env: EnvironmentResource, checkout: CheckoutFacts): PlacedRefs[] {
  const others: EnvironmentResource[] = [...project.environments.values()].filter((o) => o.name !== env.name);
  for (const template of project.templates?.values() ?? []) {
    const instance = probeInstance(template, env.name);
    if (instance) others.push(instance);
  }
  const out: PlacedRefs[] = [];
  for (const other of others) {
    try {
      out.push(placed(configuredLocation(project, other, checkout), checkout));
    } catch {
      // Its own command reports it.
    }
  }
  return out;
}

/** A configured location as the crossed-refs rule compares it: refs, directory and repository identity. */
function placed({ env, loc, group }: Configured, checkout: CheckoutFacts): PlacedRefs {
  const repository =
    loc.kind === 'clone' ? { identity: '', name: 'the clone itself' } : { identity: repositoryIdentity(loc.url!, checkout.workTree), name: loc.url! };
  return { env, desiredRef: loc.desiredRef, observedRef: loc.observedRef, statePath: loc.statePath, repository, group };
}

/** A location's ref names, state path and prefix: everything but the repository. */
type LocationRefs = Pick<StateLocation, 'environment' | 'desiredRef' | 'observedRef' | 'statePath' | 'coordinationPrefix'>;

/**
 * The location of these refs in a repository: the clone itself without one (or when it names the
 * checkout), a repository of this machine opened directly, or a remote.
 */
function locationAt(common: LocationRefs, repository: { url: string; pushURL: string } | undefined, chosenBy: string, checkout: CheckoutFacts): StateLocation {
  if (repository === undefined) return { ...common, kind: 'clone', chosenBy: chosenBy || 'the clone itself (no remote)' };
  const { url, pushURL } = repository;
  const local = localPathOf(url, checkout.workTree);
  const localPush = localPathOf(pushURL, checkout.workTree);
  if (local && localPush && resolvePath(local) === resolvePath(localPush)) {
    const abs = resolvePath(local);
    if (abs === resolvePath(checkout.workTree) || abs === resolvePath(checkout.workTree, '.git')) {
      return { ...common, kind: 'clone', chosenBy: `${chosenBy}: the checkout itself` };
    }
    const fileURL = pathToFileURL(abs).href;
    return { ...common, kind: 'path', url: fileURL, pushURL: fileURL, localPath: abs, chosenBy };
  }
  return { ...common, kind: 'remote', url, pushURL, chosenBy };
}

/** The name `state move` and a moved state.yaml give a location's repository: `local` for the clone's own branches. */
function repositoryName(loc: StateLocation): string {
  return loc.kind === 'clone' ? 'local' : loc.url!;
}

/** One line naming a location, as a moved state.yaml's movedTo and NYL-STATE-MOVED print it. */
export function describeEnd(loc: StateLocation): string {
  const path = loc.statePath ? `, path ${loc.statePath}` : '';
  return `${repositoryName(loc)} (desired ${loc.desiredRef}, observed ${loc.observedRef}${path}, coordination ${loc.coordinationPrefix})`;
}

/** Do two locations name the same repository, refs, path and prefix? */
export function sameLocation(a: StateLocation, b: StateLocation, base: string): boolean {
  const repo = (l: StateLocation) => (l.kind === 'clone' ? 'local' : repositoryIdentity(l.url!, base));
  return (
    repo(a) === repo(b) &&
    a.desiredRef === b.desiredRef &&
    a.observedRef === b.observedRef &&
    a.statePath === b.statePath &&
    a.coordinationPrefix === b.coordinationPrefix
  );
}

/**
 * The bare cache repository of a remote URL under the cache root: one per repository identity,
 * shared by every environment and checkout of this machine.
 */
export function cacheRepositoryOf(url: string, cacheRoot: string): string {
  const id = repositoryIdentity(url, '/');
  const hash = createHash('sha256').update(id).digest('hex').slice(0, 12);
  const readable = id
    .replace(/^[a-z]+:\/\//, '')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .slice(-40);
  return join(cacheRoot, 'repos', `${readable}-${hash}.git`);
}

/** Does this remote location read through the checkout (its identity is the checkout's origin)? */
export function isCheckoutOrigin(loc: StateLocation, checkout: Pick<CheckoutFacts, 'originURL' | 'workTree'>): boolean {
  return (
    loc.kind === 'remote' &&
    checkout.originURL !== undefined &&
    repositoryIdentity(checkout.originURL, checkout.workTree) === repositoryIdentity(loc.url!, checkout.workTree)
  );
}

/**
 * What a --local command operates on, given the configured location (spec 01, "Local runs"):
 * - the clone, or a repository of this machine (`path`): that repository itself, as online;
 * - a remote that is the checkout's origin: the checkout's own branches and refs;
 * - any other remote: the own (not mirrored) branches and refs of its bare cache repository,
 *   which an online command created; nothing is fetched or pushed.
 */
export function localLocation(configured: StateLocation, checkout: Pick<CheckoutFacts, 'originURL' | 'workTree'>, cacheRoot: string): StateLocation {
  if (configured.kind === 'clone') return { ...configured, chosenBy: `--local: ${configured.chosenBy}` };
  if (configured.kind === 'path') return { ...configured, chosenBy: `--local: the state repository ${configured.localPath!} itself (${configured.chosenBy})` };
  const { url, pushURL, localPath, ...rest } = configured;
  void pushURL;
  void localPath;
  if (isCheckoutOrigin(configured, checkout)) return { ...rest, kind: 'clone', chosenBy: `--local: the clone's own branches (configured: ${url!})` };
  const cache = cacheRepositoryOf(url!, cacheRoot);
  return { ...rest, kind: 'clone', localPath: cache, chosenBy: `--local: the cache repository of ${url!} (configured by ${configured.chosenBy})` };
}

/** The environment's state refs, each once (the desired and observed refs may be one ref). */
export function stateRefsOf(loc: Pick<StateLocation, 'desiredRef' | 'observedRef'>): string[] {
  return loc.observedRef === loc.desiredRef ? [loc.desiredRef] : [loc.desiredRef, loc.observedRef];
}

export function leaseRef(loc: StateLocation): string {
  return `${loc.coordinationPrefix}${loc.environment}/lease`;
}

export function runsPrefix(loc: StateLocation): string {
  return `${loc.coordinationPrefix}${loc.environment}/runs/`;
}

/** The runs whose refs wait for an import, oldest first (run ids are UUIDv7). */
export function unimportedRuns(loc: StateLocation, refs: ReadonlyMap<string, string>): string[] {
  const prefix = runsPrefix(loc);
  return [...refs.keys()]
    .filter((ref) => ref.startsWith(prefix))
    .map((ref) => ref.slice(prefix.length))
    .sort(byCodeUnits);
}

export function signalsPrefix(loc: StateLocation): string {
  return `${loc.coordinationPrefix}${loc.environment}/signals/`;
}

export function evidencePrefix(loc: StateLocation): string {
  return `${loc.coordinationPrefix}${loc.environment}/evidence/`;
}

/**
 * Where `lease break` and `recover` set damaged coordination refs aside (`damaged/lease/OID`,
 * `damaged/runs/RUN`, `damaged/signals/RUN/ID`): kept for inspection, read by no command.
 */
export function damagedPrefix(loc: StateLocation): string {
  return `${loc.coordinationPrefix}${loc.environment}/damaged/`;
}

/** The environment's coordination namespace: lease, runs, signals, evidence, damaged refs. */
export function coordinationNamespace(loc: StateLocation): string {
  return `${loc.coordinationPrefix}${loc.environment}/`;
}

/** Path of a file of this environment on the state refs. */
export function statePathOf(loc: StateLocation, file: string): string {
  return loc.statePath ? `${loc.statePath}/${file}` : file;
}

/** Human description of the location, as state init and status report it. */
export function describeLocation(loc: StateLocation, localRepository: string): Record<string, string> {
  const out: Record<string, string> = {
    repository: loc.kind === 'clone' ? localRepository : loc.url!,
    desiredRef: loc.desiredRef,
    observedRef: loc.observedRef,
    coordinationRefPrefix: loc.coordinationPrefix,
    localPath: localRepository,
    chosenBy: loc.chosenBy,
  };
  if (loc.pushURL && loc.pushURL !== loc.url) out.publishURL = loc.pushURL;
  if (loc.statePath) out.path = loc.statePath;
  return out;
}

/** Where `nyl state move` moves from: each option defaults to the configured location's value. */
export interface MoveFrom {
  /** A URL, a GitRepository name, or `local` (the clone's own branches; state-move.ts may take a remote's cache repository instead). */
  from?: string;
  desiredRef?: string;
  observedRef?: string;
  statePath?: string;
  coordinationRefs?: string;
}

/** The repository `--from` names, as a location takes it: undefined for the clone's own branches. */
function repositoryFrom(project: Project, configured: StateLocation, from: string | undefined): { url: string; pushURL: string } | undefined {
  if (from === 'local') return undefined;
  if (from !== undefined) {
    const repo = project.repositories.get(from);
    if (repo) return { url: repo.spec.url, pushURL: repo.spec.publishURL ?? repo.spec.url };
    return { url: from, pushURL: from };
  }
  return configured.kind === 'clone' ? undefined : { url: configured.url!, pushURL: configured.pushURL ?? configured.url! };
}

/** The old location of a state move: the configured one with the options' values in place. */
export function locationMovedFrom(project: Project, configured: StateLocation, options: MoveFrom, checkout: CheckoutFacts): StateLocation {
  const prefix = options.coordinationRefs ?? configured.coordinationPrefix;
  if (!/^refs\/(.+\/)?$/.test(prefix) || prefix.includes('//')) {
    fail('NYL-USAGE', `--coordination-refs ${prefix} is not a ref prefix: it starts with refs/ and ends with /`, {
      fix: 'name the old prefix as configured before, such as `--coordination-refs refs/nyl/`',
    });
  }
  const common: LocationRefs = {
    environment: configured.environment,
    desiredRef: branchRef(options.desiredRef ?? configured.desiredRef),
    observedRef: branchRef(options.observedRef ?? configured.observedRef),
    statePath: (options.statePath ?? configured.statePath).replace(/^\/+|\/+$/g, ''),
    coordinationPrefix: prefix,
  };
  const chosenBy = options.from !== undefined ? `--from ${options.from}` : 'the configured repository';
  return locationAt(common, repositoryFrom(project, configured, options.from), chosenBy, checkout);
}

/** NYL-STATE-UNAVAILABLE: the state repository of this location cannot be read, and why. */
export function stateUnavailable(loc: StateLocation, detail: string, fix?: string): never {
  fail('NYL-STATE-UNAVAILABLE', `the state repository ${loc.url ?? 'of the clone'} of ${loc.environment} cannot be read: ${detail}`, {
    env: loc.environment,
    ...(fix ? { fix } : {}),
  });
}
