/**
 * What of the working files an environment's rendering reads, as patterns over paths relative to
 * the project root: nyl.yaml and the files its includes match, and for each unit of the
 * ownership set its source directories (and the modules they call), its `inputs`, the program
 * its action runs and the source paths that action names (./script-paths.ts). A command that
 * renders HEAD asks Git which working files differ from it, limited to these paths
 * (`pathspecsOf`), and warns about those that match (`readsPath`): an edit there is not what it
 * renders until committed.
 *
 * Read from the spec as written: a path a reference completes is read up to the reference (a
 * module `stacks/${{ env.name }}` reads `stacks/`). Pure.
 */
import type { KindSet } from '../drivers/kinds';
import { isGlob, matchGlob, normalizePattern } from './glob';
import { actionDir, actionWords, resolveWord } from './script-paths';
import type { Project, UnitResource } from './types';

/** Everything at or below a path ('' the project root), or what a glob matches. */
type ReadPattern = { prefix: string } | { glob: string };

/** More pathspecs than this are one: the project directory (a command line has a limit). */
const MAX_PATHSPECS = 200;

/** A path as the listing names it: no `./`, no trailing slash, '' for the root. */
function plainPath(path: string): string {
  const p = normalizePattern(path).replace(/\/+$/, '');
  return p === '.' ? '' : p;
}

/** An include or input pattern: a glob, or a path (a file, or a directory and what is below it). */
function patternOf(written: string): ReadPattern {
  return isGlob(written) ? { glob: normalizePattern(written) } : { prefix: plainPath(written) };
}

/** A source directory field as written: up to a reference it holds, the directory before it. */
function dirPattern(value: string): ReadPattern {
  const at = value.indexOf('${{');
  if (at < 0) return { prefix: plainPath(value) };
  const before = value.slice(0, at);
  return { prefix: plainPath(before.slice(0, before.lastIndexOf('/') + 1)) };
}

/** What one unit reads of the source, as written in its spec. */
function unitPatterns(project: Project, unit: UnitResource, kinds: KindSet): ReadPattern[] {
  const kind = kinds.descriptor(unit.kind);
  const out: ReadPattern[] = [];
  for (const field of kind?.sourceDirFields ?? []) {
    const value = unit.spec[field];
    if (typeof value !== 'string') continue;
    const dir = dirPattern(value);
    out.push(dir);
    if ('prefix' in dir) for (const called of project.dirCalls?.get(dir.prefix) ?? []) out.push({ prefix: called });
  }
  const inputs = unit.spec.inputs;
  if (Array.isArray(inputs)) for (const p of inputs) if (typeof p === 'string') out.push(patternOf(p));
  const fields = kind?.actionFields;
  const dir = fields ? actionDir(unit.spec, fields) : undefined;
  if (!fields || dir === undefined) return out;
  for (const { word, program } of actionWords(unit.spec, fields)) {
    const named = resolveWord(dir, word);
    // A path the script merely names counts when the commit has it; the program file always (a new one, uncommitted, would not run).
    if (named && 'path' in named && (program || project.objects?.has(named.path))) out.push({ prefix: named.path });
    else if (named && 'glob' in named) out.push(named);
  }
  return out;
}

/** The paths the environment's rendering reads: the project files, and what its units read. */
export function projectReadPatterns(project: Project, units: readonly UnitResource[], kinds: KindSet): ReadPattern[] {
  const out: ReadPattern[] = [{ prefix: 'nyl.yaml' }, ...(project.includes ?? []).map(patternOf)];
  for (const unit of units) out.push(...unitPatterns(project, unit, kinds));
  return out;
}

/** Does a path (relative to the project root) match one of the patterns? */
export function readsPath(patterns: readonly ReadPattern[], path: string): boolean {
  return patterns.some((p) => ('glob' in p ? matchGlob(p.glob, path) : p.prefix === '' || path === p.prefix || path.startsWith(`${p.prefix}/`)));
}

/**
 * Directories and files that hold every path the patterns match ('' the project root), for Git to
 * limit its look at the working files to: a glob by the directory before its first wildcard.
 */
export function pathspecsOf(patterns: readonly ReadPattern[]): string[] {
  const specs = new Set<string>();
  for (const p of patterns) {
    if ('prefix' in p) specs.add(p.prefix);
    else {
      const segments = p.glob.split('/');
      specs.add(
        segments
          .slice(
            0,
            segments.findIndex((s) => isGlob(s)),
          )
          .join('/'),
      );
    }
  }
  return specs.has('') || specs.size > MAX_PATHSPECS ? [''] : [...specs].sort();
}
