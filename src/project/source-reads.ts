/**
 * What a unit reads from source besides its spec, as Git object ids for its execution key: the
 * tree of a directory its kind runs (a Terraform root module: any changed file there plans
 * again, an unchanged one does not), and the files its `inputs` globs match (a migrations
 * directory a Command applies). Object ids rather than contents: the key changes exactly when
 * Git says the files did, and nothing is read but the listing of the commit.
 *
 * A module outside the listed directory (a `../modules/x` source) is not covered: name it in
 * `inputs` too. A path that names nothing in the commit reads nothing; the driver then fails.
 */
import { BUILTIN_KINDS, type KindSet } from '../drivers/kinds';
import { expandGlob, isGlob, normalizePattern } from './glob';
import type { SourceObject, UnitResource } from './types';

/** The `inputs` globs of a unit's spec. */
function inputsOf(unit: UnitResource): string[] {
  const inputs = unit.spec.inputs;
  return Array.isArray(inputs) ? inputs.filter((p): p is string => typeof p === 'string') : [];
}

/** Does loading the project need the listing of object ids for this unit? */
export function readsSource(unit: UnitResource): boolean {
  return inputsOf(unit).length > 0 || (BUILTIN_KINDS.descriptor(unit.kind)?.sourceDirFields ?? []).some((f) => typeof unit.spec[f] === 'string');
}

/** A directory as the listing names it: `./infra/` and `infra` are `infra`; the root is ''. */
function listingPath(path: string): string {
  const p = normalizePattern(path).replace(/\/+$/, '');
  return p === '.' ? '' : p;
}

/** Path -> object id of everything the unit reads, from its rendering (a module path may be rendered). */
export function sourceReads(unit: UnitResource, rendering: Record<string, unknown>, objects: ReadonlyMap<string, SourceObject> | undefined, kinds: KindSet): Record<string, string> {
  const reads: Record<string, string> = {};
  if (!objects) return reads;
  for (const field of kinds.descriptor(unit.kind)?.sourceDirFields ?? []) {
    const dir = rendering[field];
    if (typeof dir !== 'string') continue;
    const path = listingPath(dir);
    const found = objects.get(path);
    if (found?.type === 'tree') reads[path === '' ? '.' : `${path}/`] = found.oid;
  }
  for (const pattern of inputsOf(unit)) addMatches(pattern, objects, reads);
  return reads;
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

function blobsOf(objects: ReadonlyMap<string, SourceObject>): string[] {
  let paths = blobPaths.get(objects);
  if (!paths) {
    paths = [...objects].filter(([, o]) => o.type === 'blob').map(([p]) => p);
    blobPaths.set(objects, paths);
  }
  return paths;
}
