/**
 * What changed among the ingredients of a unit's execution key, as machine data: the planner
 * decides a unit executes because its key changed (`key-changed`), and this names why, from the
 * desired document its receipt was produced for and what the unit resolves to now. Its spec
 * fields, the source files it reads (`input migrations/003.sql added`; a directory it reads file
 * by file when both sides recorded its files, `module file infra/main.tf changed`), the units it
 * is triggered by, the sensitive values it consumes. ./reasons.ts renders the words. An empty
 * list: nothing recorded tells (state written before the desired document recorded its reads),
 * and the text says only that the execution key changed. Pure.
 */
import type { KeyReads } from '../project/execution-key';
import type { DesiredUnitDoc } from '../state/documents';
import { byCodeUnits } from '../util/compare';
import { canonicalJson } from '../util/canonical-json';

type How = 'added' | 'changed' | 'removed';

export type KeyChange =
  /** Top-level fields of its rendering that differ. */
  | { read: 'spec'; fields: string[] }
  /** A file it reads, or a directory whose files were not recorded (`path` then ends in `/`). */
  | { read: 'input' | 'module-file' | 'module'; path: string; how: How }
  /** A unit named in `triggers` executed since (or was added or removed from them). */
  | { read: 'trigger'; unit: string; how: How }
  /** A sensitive value it consumes changed. */
  | { read: 'secret'; unit: string; output: string };

/** What a unit resolves to now: the key's ingredients. */
interface KeyIngredients {
  rendering: Record<string, unknown>;
  reads?: KeyReads;
  readFiles?: Record<string, string>;
}

function how(before: unknown, after: unknown): How {
  return before === undefined ? 'added' : after === undefined ? 'removed' : 'changed';
}

/** Keys of two maps whose values differ, in code-unit order. */
function differing(a: Record<string, unknown>, b: Record<string, unknown>): string[] {
  const text = (v: unknown) => (v === undefined ? undefined : canonicalJson(v));
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => text(a[k]) !== text(b[k])).sort(byCodeUnits);
}

const isDir = (path: string) => path.endsWith('/') || path === '.';

/** The files under a directory read, on one side. */
function under(dir: string, files: Record<string, string>): Record<string, string> {
  const prefix = dir === '.' ? '' : dir;
  return Object.fromEntries(Object.entries(files).filter(([p]) => p.startsWith(prefix)));
}

/** A directory read whose tree changed: file by file when both sides recorded its files, else the directory. */
function dirChanges(dir: string, before: DesiredUnitDoc, now: KeyIngredients, module: boolean): KeyChange[] {
  const wasFiles = before.readFiles;
  const nowFiles = now.readFiles;
  const was = wasFiles ? under(dir, wasFiles) : {};
  const is = nowFiles ? under(dir, nowFiles) : {};
  const recorded = Object.keys(was).length > 0 && Object.keys(is).length > 0;
  if (!recorded) return [{ read: module ? 'module' : 'input', path: dir, how: how(before.reads?.sources?.[dir], now.reads?.sources?.[dir]) }];
  return differing(was, is).map((path) => ({ read: module ? 'module-file' : 'input', path, how: how(was[path], is[path]) }));
}

/** Changed source reads: files as they are, directories file by file. */
function sourceChanges(before: DesiredUnitDoc, now: KeyIngredients, modules: ReadonlySet<string>): KeyChange[] {
  const was = before.reads?.sources ?? {};
  const is = now.reads?.sources ?? {};
  const out: KeyChange[] = [];
  for (const path of differing(was, is)) {
    const module = modules.has(path);
    if (isDir(path) && was[path] !== undefined && is[path] !== undefined) out.push(...dirChanges(path, before, now, module));
    else out.push({ read: module ? 'module' : 'input', path, how: how(was[path], is[path]) });
  }
  return out;
}

/** Changed sensitive values, by the output each reference names. */
function secretChanges(before: KeyReads | undefined, now: KeyReads | undefined): KeyChange[] {
  const digests = (reads: KeyReads | undefined) => Object.fromEntries((reads?.secrets ?? []).map((s) => [`${s.unit}.${s.output}`, s.sha256]));
  const [was, is] = [digests(before), digests(now)];
  return differing(was, is)
    .filter((k) => was[k] !== undefined && is[k] !== undefined)
    .map((k) => {
      const cut = k.indexOf('.');
      return { read: 'secret' as const, unit: k.slice(0, cut), output: k.slice(cut + 1) };
    });
}

/**
 * Why the key of a unit changed since its receipt's desired document, read by read. `modules`: the
 * directory reads that are modules its kind runs (src/project/read-files.ts moduleReads).
 */
export function keyChanges(before: DesiredUnitDoc, now: KeyIngredients, modules: ReadonlySet<string>): KeyChange[] {
  const out: KeyChange[] = [];
  const fields = before.rendering ? differing(before.rendering, now.rendering) : [];
  if (fields.length > 0) out.push({ read: 'spec', fields });
  out.push(...sourceChanges(before, now, modules));
  const [wasTriggers, isTriggers] = [before.reads?.triggers ?? {}, now.reads?.triggers ?? {}];
  for (const unit of differing(wasTriggers, isTriggers)) out.push({ read: 'trigger', unit, how: how(wasTriggers[unit], isTriggers[unit]) });
  out.push(...secretChanges(before.reads, now.reads));
  return out;
}
