/**
 * The names of a project that shell completion offers (`nyl __complete`): its environments,
 * groups or units at HEAD, as every command reads its declarations; the units narrowed to the
 * ownership sets of the environments named (a name that does not resolve narrows nothing).
 */
import { resolveEnvironment } from '../../project/instances';
import { ownershipSet } from '../../project/selectors';
import type { Runtime } from '../../util/runtime';
import { readDeclarations } from './context';

export type NameKind = 'environments' | 'units' | 'groups';

export async function projectNames(rt: Runtime, path: string, what: NameKind, environments: string[]): Promise<string[]> {
  const project = await readDeclarations(rt, path);
  let list = [...(what === 'environments' ? project.environments : what === 'groups' ? project.groups : project.units).keys()];
  const resolved = what === 'units' ? environments.map((name) => resolveEnvironment(project, name)).filter((env) => env !== undefined) : [];
  if (resolved.length > 0) list = resolved.flatMap((env) => ownershipSet(project, env).map((u) => u.name));
  return [...new Set(list)].sort();
}

/** Whether `name` names an environment of the project at `path`: a declared one or a template instance. */
export async function namesEnvironment(rt: Runtime, path: string, name: string): Promise<boolean> {
  try {
    return resolveEnvironment(await readDeclarations(rt, path), name) !== undefined;
  } catch {
    // No project here, or a name a template's pattern matches that is no valid name: no environment.
    return false;
  }
}
