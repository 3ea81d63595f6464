/**
 * What changed in the source a unit reads, for `nyl plan`: instead of "execution key changed",
 * the files that changed between what the unit's receipt was produced from and what it reads now
 * (`module file infra/app/main.tf changed`, `input migrations/003.sql added`). The desired
 * document of the receipt records the object ids the key covered (`reads.sources`); a directory
 * whose tree id differs is read on both sides and compared file by file, from the checkout's
 * object database. Nothing is read for a unit whose reads did not change.
 */
import type { Plan, UnitPlan } from '../../plan/actions';
import { receiptOfIncarnation } from '../../plan/unit-view';
import type { ObjectReader } from '../../state/store';
import { byCodeUnits } from '../../util/compare';

/** How many changed files a detail names before it says how many more. */
const MAX_NAMED = 8;

/** A changed read: a file (`inDir`: found by comparing a directory read file by file) or a read path. */
type Change = { path: string; how: 'changed' | 'added' | 'removed'; inDir?: boolean };

/** Every blob under a tree, by path below `prefix`. */
async function blobsOf(reader: ObjectReader, tree: string, prefix: string, into: Map<string, string>): Promise<void> {
  const entries = await reader.readTree(tree);
  if (!entries) throw new Error(`tree ${tree} is not in the checkout`);
  await Promise.all(
    entries.map(async (e) => {
      if (e.type === 'tree') await blobsOf(reader, e.oid, `${prefix}${e.name}/`, into);
      else if (e.type === 'blob') into.set(`${prefix}${e.name}`, e.oid);
    }),
  );
}

function diffMaps(before: ReadonlyMap<string, string>, after: ReadonlyMap<string, string>): Change[] {
  const out: Change[] = [];
  for (const [path, oid] of after)
    if (!before.has(path)) out.push({ path, how: 'added' });
    else if (before.get(path) !== oid) out.push({ path, how: 'changed' });
  for (const path of before.keys()) if (!after.has(path)) out.push({ path, how: 'removed' });
  return out.sort((a, b) => byCodeUnits(a.path, b.path));
}

/** The files that changed under one directory read (`dir/`, or `.` for the root). */
async function treeChanges(reader: ObjectReader, dir: string, before: string, after: string): Promise<Change[]> {
  const prefix = dir === '.' ? '' : dir;
  const [a, b] = [new Map<string, string>(), new Map<string, string>()];
  await Promise.all([blobsOf(reader, before, prefix, a), blobsOf(reader, after, prefix, b)]);
  return diffMaps(a, b);
}

/** What changed among the reads of one unit: read paths as they are, directories file by file. */
async function readChanges(reader: ObjectReader, before: Record<string, string>, after: Record<string, string>): Promise<Change[]> {
  const out: Change[] = [];
  for (const [path, oid] of Object.entries(after)) {
    const was = before[path];
    if (was === oid) continue;
    const isDir = path.endsWith('/') || path === '.';
    if (was !== undefined && isDir) out.push(...(await treeChanges(reader, path, was, oid)).map((c) => ({ ...c, inDir: true })));
    else out.push({ path: isDir && path !== '.' ? path.slice(0, -1) : path, how: was === undefined ? 'added' : 'changed' });
  }
  for (const path of Object.keys(before)) if (!(path in after)) out.push({ path: path.endsWith('/') ? path.slice(0, -1) : path, how: 'removed' });
  return out;
}

/** The changes in words: `module file infra/app/main.tf changed; input migrations/003.sql added`. */
function describe(changes: readonly Change[], unit: UnitPlan): string {
  const inDir = typeof unit.rendering?.module === 'string' ? 'module file' : 'file';
  const named = changes.slice(0, MAX_NAMED).map((c) => `${c.inDir ? inDir : 'input'} ${c.path} ${c.how}`);
  const more = changes.length > MAX_NAMED ? [`and ${changes.length - MAX_NAMED} more files`] : [];
  return [...named, ...more].join('; ');
}

/** Does the unit execute because its execution key changed (now, or once approved)? */
function keyChanged(unit: UnitPlan): boolean {
  const a = unit.action as { type: string; reason?: string; executes?: string };
  return (a.type === 'execute' && a.reason === 'key-changed') || (a.type === 'awaiting-approval' && a.executes === 'key-changed');
}

/**
 * Unit -> what changed in the source it reads, for the units that execute because their key
 * changed. A unit whose recorded objects the checkout no longer has (a pruned snapshot) is left
 * out: its detail stays the general one.
 */
export async function changedReads(reader: ObjectReader | undefined, plan: Plan): Promise<Map<string, string>> {
  const found = new Map<string, string>();
  if (!reader) return found;
  for (const unit of plan.units.values()) {
    if (!keyChanged(unit)) continue;
    const before = receiptOfIncarnation(unit)?.desired.reads?.sources ?? {};
    const after = unit.reads?.sources ?? {};
    try {
      const changes = await readChanges(reader, before, after);
      if (changes.length > 0) found.set(unit.name, describe(changes, unit));
    } catch {
      // An object the checkout lacks: nothing more specific to say.
    }
  }
  return found;
}
