/**
 * What a unit reads from source besides its spec, as Git object ids for its execution key: the
 * tree of a directory its kind runs (a Terraform root module: any changed file there plans
 * again, an unchanged one does not), and the files its `inputs` globs match (a migrations
 * directory a Command applies), and the program file a Command's action runs (`run:
 * [./bin/deploy.sh]`: ./script-paths.ts). Object ids rather than contents: the key changes exactly
 * when Git says the files did, and nothing is read but the listing of the commit.
 *
 * A directory a unit runs may name further directories it reads (a module's `source =
 * "../modules/net"`): the kind says which (KindDescriptor.sourceDirCalls), the project load follows
 * them transitively (`dirCalls`), and their trees enter the key as well. A path that names
 * nothing in the commit reads nothing; the driver then fails.
 */
import type { KindDescriptor } from '../drivers/contract';
import { BUILTIN_KINDS, type KindSet } from '../drivers/kinds';
import { expandGlob, isGlob, normalizePattern } from './glob';
import { type ActionFields, actionDir, actionWords, resolveWord } from './script-paths';
import type { Project, SourceObject, SourceTree, UnitResource } from './types';

/** The `inputs` globs of a unit's spec. */
function inputsOf(unit: UnitResource): string[] {
  const inputs = unit.spec.inputs;
  return Array.isArray(inputs) ? inputs.filter((p): p is string => typeof p === 'string') : [];
}

/**
 * Does loading the project need the listing of object ids for this unit? Also when its action
 * names a path: its program may be a file of the source, and `plan` checks what `inputs` cover.
 */
export function readsSource(unit: UnitResource): boolean {
  const kind = BUILTIN_KINDS.descriptor(unit.kind);
  if (inputsOf(unit).length > 0 || (kind?.sourceDirFields ?? []).some((f) => typeof unit.spec[f] === 'string')) return true;
  return kind?.actionFields !== undefined && actionWords(unit.spec, kind.actionFields).length > 0;
}

/** A directory as the listing names it: `./infra/` and `infra` are `infra`; the root is ''. */
function listingPath(path: string): string {
  const p = normalizePattern(path).replace(/\/+$/, '');
  return p === '.' ? '' : p;
}

/** A directory's tree in the reads, as `dir/` (`.` for the root), if the commit has it. */
function addTree(path: string, objects: ReadonlyMap<string, SourceObject>, reads: Record<string, string>): void {
  const found = objects.get(path);
  if (found?.type === 'tree') reads[path === '' ? '.' : `${path}/`] = found.oid;
}

/**
 * Path -> object id of everything the unit reads, from its rendering (a module path may be
 * rendered): its source directories, the directories they call (`calls`), its inputs.
 */
export function sourceReads(
  unit: UnitResource,
  rendering: Record<string, unknown>,
  objects: ReadonlyMap<string, SourceObject> | undefined,
  kinds: KindSet,
  calls?: ReadonlyMap<string, readonly string[]>,
): Record<string, string> {
  const reads: Record<string, string> = {};
  if (!objects) return reads;
  for (const field of kinds.descriptor(unit.kind)?.sourceDirFields ?? []) {
    const dir = rendering[field];
    if (typeof dir !== 'string') continue;
    const path = listingPath(dir);
    addTree(path, objects, reads);
    for (const called of calls?.get(path) ?? []) addTree(called, objects, reads);
  }
  for (const pattern of inputsOf(unit)) addMatches(pattern, objects, reads);
  // Only when the unit's own spec names a path (readsSource): whether the listing is loaded at
  // all depends on every unit of the project, and a program that only a reference renders would
  // enter the key once an unrelated unit gained `inputs`, and run this one again.
  const fields = kinds.descriptor(unit.kind)?.actionFields;
  if (fields && actionWords(unit.spec, fields).length > 0) for (const [path, oid] of programFiles(fields, rendering, objects)) reads[path] = oid;
  return reads;
}

/**
 * The program files the action runs (./script-paths.ts) that are files of the source: each enters
 * the key as if `inputs` named it, by the same path, so that naming it in `inputs` as well changes
 * nothing.
 */
function programFiles(fields: ActionFields | undefined, rendering: Record<string, unknown>, objects: ReadonlyMap<string, SourceObject>): Map<string, string> {
  const found = new Map<string, string>();
  const dir = fields ? actionDir(rendering, fields) : undefined;
  if (!fields || dir === undefined) return found;
  for (const { word, program } of actionWords(rendering, fields)) {
    const named = program ? resolveWord(dir, word) : undefined;
    const object = named && 'path' in named ? objects.get(named.path) : undefined;
    if (object?.type === 'blob') found.set((named as { path: string }).path, object.oid);
  }
  return found;
}

type DirCalls = NonNullable<KindDescriptor['sourceDirCalls']>;

/** The directories of the source dir fields units name literally (a reference is rendered later), with how their kind finds calls. */
function literalSourceDirs(project: Project, kinds: KindSet): Map<string, DirCalls> {
  const dirs = new Map<string, DirCalls>();
  for (const unit of project.units.values()) {
    const kind = kinds.descriptor(unit.kind);
    if (!kind?.sourceDirCalls) continue;
    for (const field of kind.sourceDirFields ?? []) {
      const dir = unit.spec[field];
      if (typeof dir === 'string' && !dir.includes('${{')) dirs.set(listingPath(dir), kind.sourceDirCalls);
    }
  }
  return dirs;
}

/** `dir` joined with a relative path, `.` and `..` resolved; undefined when it leaves the project or is its root. */
function joinedPath(dir: string, relative: string): string | undefined {
  const parts: string[] = dir === '' ? [] : dir.split('/');
  for (const part of relative.split('/')) {
    if (part === '' || part === '.') continue;
    if (part !== '..') parts.push(part);
    else if (parts.pop() === undefined) return undefined;
  }
  return parts.length === 0 ? undefined : parts.join('/');
}

/** The blobs of a listing by directory (`''` for the root): a directory's own files, found once per listing. */
function blobsByDir(objects: ReadonlyMap<string, SourceObject>): Map<string, string[]> {
  const byDir = new Map<string, string[]>();
  for (const path of blobsOf(objects)) {
    const cut = path.lastIndexOf('/');
    const dir = cut < 0 ? '' : path.slice(0, cut);
    const names = byDir.get(dir);
    if (names) names.push(path.slice(cut + 1));
    else byDir.set(dir, [path.slice(cut + 1)]);
  }
  return byDir;
}

/** What finding calls needs: the tree to read files from, the listing, and its files by directory. */
interface CallScan {
  tree: SourceTree;
  objects: ReadonlyMap<string, SourceObject>;
  files: ReadonlyMap<string, readonly string[]>;
}

/** The directories one directory's own files name, resolved against it; only those the commit has as trees. */
async function directCalls(dir: string, calls: DirCalls, scan: CallScan): Promise<string[]> {
  const names = (scan.files.get(dir) ?? []).filter((name) => calls.reads(name));
  const texts = await scan.tree.readMany(names.map((name) => (dir === '' ? name : `${dir}/${name}`)));
  const found = calls.calls(names.map((name, i) => ({ name, text: texts[i] ?? '' })));
  return found.map((source) => joinedPath(dir, source)).filter((path): path is string => path !== undefined && scan.objects.get(path)?.type === 'tree');
}

/**
 * For each source directory units name, the directories its files call, transitively (a module
 * calling a module that calls another). Read once per project tree: the project cache keeps it.
 */
export async function sourceDirCalls(
  project: Project,
  tree: SourceTree,
  objects: ReadonlyMap<string, SourceObject>,
  kinds: KindSet = BUILTIN_KINDS,
): Promise<Map<string, string[]>> {
  const result = new Map<string, string[]>();
  const roots = literalSourceDirs(project, kinds);
  if (roots.size === 0) return result;
  const scan: CallScan = { tree, objects, files: blobsByDir(objects) };
  const direct = new Map<string, Promise<string[]>>();
  const callsOf = (dir: string, calls: DirCalls) => {
    if (!direct.has(dir)) direct.set(dir, directCalls(dir, calls, scan));
    return direct.get(dir)!;
  };
  for (const [root, calls] of roots) {
    const seen = new Set<string>([root]);
    for (let queue = [root]; queue.length > 0; ) {
      const next = (await Promise.all(queue.map((dir) => callsOf(dir, calls)))).flat().filter((d) => !seen.has(d));
      next.forEach((d) => seen.add(d));
      queue = [...new Set(next)];
    }
    seen.delete(root);
    if (seen.size > 0) result.set(root, [...seen].sort());
  }
  return result;
}

/** A glob reads the files it matches; a plain path reads its file, or its directory's tree. */
function addMatches(pattern: string, objects: ReadonlyMap<string, SourceObject>, reads: Record<string, string>): void {
  if (!isGlob(pattern)) {
    const path = listingPath(pattern);
    const found = objects.get(path);
    if (found) reads[found.type === 'tree' ? `${path === '' ? '.' : path}/` : path] = found.oid;
    return;
  }
  for (const path of expandGlob(pattern, blobsOf(objects))) reads[path] = objects.get(path)!.oid;
}

/** The blob paths of a listing, once per listing: the planner resolves every unit after each wave. */
const blobPaths = new WeakMap<ReadonlyMap<string, SourceObject>, string[]>();

export function blobsOf(objects: ReadonlyMap<string, SourceObject>): string[] {
  let paths = blobPaths.get(objects);
  if (!paths) {
    paths = [...objects].filter(([, o]) => o.type === 'blob').map(([p]) => p);
    blobPaths.set(objects, paths);
  }
  return paths;
}
