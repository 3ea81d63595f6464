/**
 * The source paths a unit's action names that its execution key does not cover: a script that
 * reads `migrations/*.sql` while no `inputs` glob names them runs again on no new migration.
 * `plan` warns about each (NYL-SOURCE-UNDECLARED-READ), with the glob to add.
 *
 * A heuristic, kept to few false positives: only the words ./script-paths.ts finds path-like in
 * the unit's own `run:` or `script:`, and only those naming something the source commit has (a
 * file, a directory, or a glob matching files; resolved against workingDir). A file or a glob is
 * uncovered when one file it names is not read; a directory when no file under it is (an
 * `inputs` glob that reaches into it says the unit's author chose what matters there). Pure.
 */
import type { KindDescriptor } from '../drivers/contract';
import { expandGlob } from './glob';
import { type NamedSource, actionDir, actionWords, resolveWord } from './script-paths';
import { blobsOf } from './source-reads';
import type { SourceObject } from './types';

/** A path an action names that the key does not cover, and the `inputs` entry that would. */
interface UndeclaredRead {
  /** The word as the action writes it. */
  word: string;
  /** The `inputs` entry that covers it (relative to the project root). */
  input: string;
}

/** The files a resolved word names, and whether it names a directory; undefined when it names nothing of the source. */
function filesOf(named: NamedSource, objects: ReadonlyMap<string, SourceObject>): { files: string[]; dir: boolean; input: string } | undefined {
  if ('glob' in named) {
    const files = expandGlob(named.glob, blobsOf(objects));
    return files.length > 0 ? { files, dir: false, input: named.glob } : undefined;
  }
  const object = objects.get(named.path);
  if (object?.type === 'blob') return { files: [named.path], dir: false, input: named.path };
  if (object?.type !== 'tree') return undefined;
  const files = blobsOf(objects).filter((p) => p.startsWith(`${named.path}/`));
  return files.length > 0 ? { files, dir: true, input: `${named.path}/**` } : undefined;
}

/** Is the file among the reads: by its own path, or under a directory read (`dir/`, `.` the root)? */
function covered(file: string, reads: Readonly<Record<string, string>>): boolean {
  if (file in reads || '.' in reads) return true;
  for (let cut = file.lastIndexOf('/'); cut > 0; cut = file.lastIndexOf('/', cut - 1)) if (`${file.slice(0, cut)}/` in reads) return true;
  return false;
}

/**
 * The paths the unit's action (its rendering, where a reference is resolved) names that its reads
 * do not cover, once each by the `inputs` entry suggested.
 */
export function undeclaredReads(
  kind: KindDescriptor | undefined,
  rendering: Record<string, unknown>,
  objects: ReadonlyMap<string, SourceObject> | undefined,
  reads: Readonly<Record<string, string>>,
): UndeclaredRead[] {
  const fields = kind?.actionFields;
  const dir = fields ? actionDir(rendering, fields) : undefined;
  if (!fields || dir === undefined || !objects) return [];
  const out = new Map<string, UndeclaredRead>();
  for (const { word } of actionWords(rendering, fields)) {
    const named = resolveWord(dir, word);
    const found = named ? filesOf(named, objects) : undefined;
    if (!found || out.has(found.input)) continue;
    const missing = found.dir ? !found.files.some((f) => covered(f, reads)) : found.files.some((f) => !covered(f, reads));
    if (missing) out.set(found.input, { word, input: found.input });
  }
  return [...out.values()];
}
