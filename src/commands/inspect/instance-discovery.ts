/**
 * Which instances of the EnvironmentTemplates have state, for the web view's page of
 * environments: preview environments exist only in state, so they are found there.
 *
 * An instance's state location is the template's rendered for its name. Rendering it for a probe
 * name shows where the name (or its suffix, `${{ instance.suffix }}`) lands: in the desired ref
 * (the default `nyl/<name>/desired`), then every ref of the state repository between the same
 * prefix and suffix is an instance's; or in `state.path` under one shared ref, then every entry
 * of the directory before it is. A template whose instances each have their own repository (the
 * name in the URL) cannot be listed without knowing the names: it is skipped without opening
 * anything, and its instances are opened by name.
 *
 * The candidates are names the template's namePattern matches, in code-unit order. Nothing is
 * written: refs are listed as a status read lists them (a remote's are fetched into the cache
 * repository's mirror refs).
 */
import { NylError } from '../../errors/diagnostic';
import type { Diagnostic } from '../../errors/diagnostic';
import type { EnvironmentTemplateResource, Project } from '../../project/types';
import { patternSuffix } from '../../project/name-pattern';
import { byCodeUnits } from '../../util/compare';
import type { Runtime } from '../../util/runtime';
import { withEnvironmentRead } from './inspect-state';
import type { OpenedEnvironment } from '../shared/context';

/** A suffix no one names an instance with, which is still a valid name part. */
const PROBE = 'nyl-probe-0c1d';

interface DiscoveredInstances {
  names: string[];
  errors: Diagnostic[];
}

/** The parts of `text` around the probe, or undefined when the probe is not in it. */
function around(text: string, probe: string): { before: string; after: string } | undefined {
  const at = text.indexOf(probe);
  return at < 0 ? undefined : { before: text.slice(0, at), after: text.slice(at + probe.length) };
}

/** The text that stands where the probe stood, when `value` has the same frame (no '/' inside). */
function between(value: string, frame: { before: string; after: string }): string | undefined {
  if (!value.startsWith(frame.before) || !value.endsWith(frame.after) || value.length <= frame.before.length + frame.after.length) return undefined;
  const middle = value.slice(frame.before.length, value.length - frame.after.length);
  return middle.includes('/') ? undefined : middle;
}

/**
 * Which of the probe's name or suffix a location's text holds (the name first: it contains the
 * suffix), and how a text found in its place turns back into an instance's name.
 */
function tokenIn(text: string, probeName: string, probeSuffix: string): { token: string; nameOf: (found: string) => string } | undefined {
  if (text.includes(probeName)) return { token: probeName, nameOf: (found) => found };
  if (text.includes(probeSuffix)) return { token: probeSuffix, nameOf: (found) => probeName.replace(probeSuffix, found) };
  return undefined;
}

/** Instance names from refs: where the probe's name (or suffix) stands in its desired ref. */
async function namesFromRefs(opened: OpenedEnvironment, probeName: string, probeSuffix: string): Promise<string[] | undefined> {
  const token = tokenIn(opened.loc.desiredRef, probeName, probeSuffix);
  if (!token) return undefined;
  const frame = around(opened.loc.desiredRef, token.token)!;
  const refs = await opened.store.snapshotPrefix(frame.before);
  return [...refs.keys()]
    .map((ref) => between(ref, frame))
    .filter((n): n is string => n !== undefined)
    .map(token.nameOf);
}

/** Instance names from the directory of a shared desired ref that holds each instance's state.path. */
async function namesFromPaths(opened: OpenedEnvironment, probeName: string, probeSuffix: string): Promise<string[] | undefined> {
  const token = tokenIn(opened.loc.statePath, probeName, probeSuffix);
  const frame = token === undefined ? undefined : around(opened.loc.statePath, token.token);
  if (!token || !frame || frame.after !== '') return undefined;
  const dir = frame.before.replace(/\/[^/]*$|^[^/]*$/, '');
  const entryPrefix = frame.before.slice(dir.length).replace(/^\//, '');
  const tip = (await opened.store.snapshot({ readOnly: true })).get(opened.loc.desiredRef);
  const entries = tip ? await opened.store.reader.readTree(dir ? `${tip}:${dir}` : `${tip}^{tree}`) : undefined;
  const found = (entries ?? []).filter((e) => e.type === 'tree').map((e) => between(e.name, { before: entryPrefix, after: '' }));
  return found.filter((n): n is string => n !== undefined).map(token.nameOf);
}

async function templateInstances(rt: Runtime, path: string, template: EnvironmentTemplateResource, local: boolean): Promise<string[]> {
  const probeName = template.spec.namePattern.replace('*', PROBE);
  const names = await withEnvironmentRead(rt, { path, environment: probeName, ...(local ? { local: true } : {}) }, async (opened) => {
    // Each instance has a repository of its own: nothing to list, and the probe's would not exist.
    if (`${opened.loc.url ?? ''} ${opened.loc.localPath ?? ''}`.includes(PROBE)) return [];
    await opened.store.ensureOpen();
    return (await namesFromRefs(opened, probeName, PROBE)) ?? (await namesFromPaths(opened, probeName, PROBE)) ?? [];
  });
  return names.filter((n) => n !== probeName && patternSuffix(template.spec.namePattern, n) !== undefined);
}

/**
 * The instances of every template that have state, each name once, sorted; what could not be
 * listed, as errors. `guard` reads each template's location (named by its probe instance), as
 * the web view reads an environment: remembering a failure, cutting a slow read.
 */
export async function discoverInstances(
  rt: Runtime,
  path: string,
  project: Project,
  local = false,
  guard: <T>(environment: string, read: () => Promise<T>) => Promise<T> = (_environment, read) => read(),
): Promise<DiscoveredInstances> {
  const names = new Set<string>();
  const errors: Diagnostic[] = [];
  for (const template of [...(project.templates?.values() ?? [])].sort((a, b) => byCodeUnits(a.name, b.name))) {
    try {
      const probe = template.spec.namePattern.replace('*', PROBE);
      for (const n of await guard(probe, () => templateInstances(rt, path, template, local))) if (!project.environments.has(n)) names.add(n);
    } catch (error) {
      if (!(error instanceof NylError)) throw error;
      errors.push(...error.diagnostics);
    }
  }
  return { names: [...names].sort(byCodeUnits), errors };
}
