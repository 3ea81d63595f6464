/**
 * Label selection: which units an environment owns, and which environments a group selects.
 * Pure functions over a loaded Project; results are sorted by name unless a list fixes the order.
 */
import type { EnvironmentGroupResource, EnvironmentResource, Project, UnitResource } from './types';

/** True when every label of matchLabels is present with the same value (an empty selector matches all). */
export function matchesLabels(labels: Readonly<Record<string, string>>, matchLabels: Readonly<Record<string, string>>): boolean {
  return Object.entries(matchLabels).every(([key, value]) => Object.prototype.hasOwnProperty.call(labels, key) && labels[key] === value);
}

function byName<T extends { name: string }>(a: T, b: T): number {
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The units the environment owns: those its unitSelector matches, or every unit without one. */
export function ownershipSet(project: Project, env: EnvironmentResource): UnitResource[] {
  const selector = env.spec.unitSelector?.matchLabels;
  return [...project.units.values()].filter((u) => !selector || matchesLabels(u.labels, selector)).sort(byName);
}

/**
 * True when the group selects the environment: its environments list names it, or its
 * selector's matchLabels match the environment's labels (the schema allows exactly one of the two).
 */
export function groupSelects(group: EnvironmentGroupResource, env: EnvironmentResource): boolean {
  // A template instance is a member of no group (project/instances.ts): no group selects it or lends it state.
  if (env.instance) return false;
  if (group.spec.environments) return group.spec.environments.includes(env.name);
  return matchesLabels(env.labels, group.spec.selector?.matchLabels ?? {});
}

/**
 * The environments a group selects: by label selector (sorted by name), or its environments list
 * in the order written. Names the project does not declare are skipped (validation refuses them).
 */
export function groupMembers(project: Project, group: EnvironmentGroupResource): EnvironmentResource[] {
  if (!group.spec.environments) return [...project.environments.values()].filter((e) => groupSelects(group, e)).sort(byName);
  const members: EnvironmentResource[] = [];
  for (const name of new Set(group.spec.environments)) {
    const env = project.environments.get(name);
    if (env) members.push(env);
  }
  return members;
}

/** The groups that select an environment, sorted by name. */
export function groupsSelecting(project: Project, envName: string): EnvironmentGroupResource[] {
  return [...project.groups.values()].filter((g) => groupMembers(project, g).some((e) => e.name === envName)).sort(byName);
}
