/**
 * The files under the directories a unit reads, for review rather than for its key: a directory
 * enters the execution key as one tree id (./source-reads.ts), and its files by path let the next
 * plan name what changed in it (`module file infra/main.tf changed`) from state alone. Also which
 * directory reads are modules the unit's kind runs, so that a change reads `module file`, not
 * `input`. Pure.
 */
import type { KindSet } from '../drivers/kinds';
import { normalizePattern } from './glob';
import type { SourceObject, UnitResource } from './types';

/**
 * A directory holding more files than this is recorded as its tree alone: its changes are named by
 * directory, and the desired document stays small.
 */
const MAX_FILES = 500;

/** The blobs under one directory read (`dir/`, or `.` for the root), once per listing. */
const underCache = new WeakMap<ReadonlyMap<string, SourceObject>, Map<string, [string, string][]>>();

function filesUnder(dir: string, objects: ReadonlyMap<string, SourceObject>): [string, string][] {
  let byDir = underCache.get(objects);
  if (!byDir) underCache.set(objects, (byDir = new Map()));
  let files = byDir.get(dir);
  if (!files) {
    const prefix = dir === '.' ? '' : dir;
    files = [...objects].filter(([path, o]) => o.type === 'blob' && path.startsWith(prefix)).map(([path, o]) => [path, o.oid]);
    byDir.set(dir, files);
  }
  return files;
}

/** Path -> blob id of every file under the directory reads of `sources`; undefined when they name no directory. */
export function readFiles(
  sources: Record<string, string> | undefined,
  objects: ReadonlyMap<string, SourceObject> | undefined,
): Record<string, string> | undefined {
  if (!sources || !objects) return undefined;
  const out: Record<string, string> = {};
  let any = false;
  for (const path of Object.keys(sources)) {
    if (!path.endsWith('/') && path !== '.') continue;
    const files = filesUnder(path, objects);
    if (files.length > MAX_FILES) continue;
    any = true;
    for (const [file, oid] of files) out[file] = oid;
  }
  return any ? out : undefined;
}

/** A directory as a read names it: `./infra` is `infra/`, the root `.`. */
function readPath(dir: string): string {
  const p = normalizePattern(dir).replace(/\/+$/, '');
  return p === '.' || p === '' ? '.' : `${p}/`;
}

/** The directory reads that are modules the unit's kind runs (its source dir fields) or that they call. */
export function moduleReads(
  unit: UnitResource,
  rendering: Record<string, unknown>,
  kinds: KindSet,
  calls?: ReadonlyMap<string, readonly string[]>,
): Set<string> {
  const out = new Set<string>();
  for (const field of kinds.descriptor(unit.kind)?.sourceDirFields ?? []) {
    const dir = rendering[field];
    if (typeof dir !== 'string') continue;
    const path = readPath(dir);
    out.add(path);
    for (const called of calls?.get(path === '.' ? '' : path.slice(0, -1)) ?? []) out.add(readPath(called));
  }
  return out;
}
