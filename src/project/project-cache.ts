/**
 * Loads the project of a commit, reusing the validated result of an earlier load of the same
 * project tree: the key is the Git object id of the project's directory, which changes with any
 * file in it. Parsing and validating a large nyl.yaml is the most expensive part of a run that
 * finds nothing to do.
 */
import type { BatchReader } from '../git/batch-reader';
import type { JsonCache } from '../util/json-cache';
import { CommitSourceTree } from './commit-tree';
import type { Project, SourceObject } from './types';

interface ProjectJson {
  name?: string;
  environments: [string, unknown][];
  templates?: [string, unknown][];
  repositories: [string, unknown][];
  groups: [string, unknown][];
  units: [string, unknown][];
  objects?: [string, SourceObject][];
  dirCalls?: [string, readonly string[]][];
  includes?: string[];
}

function toJson(p: Project): ProjectJson {
  const out: ProjectJson = {
    environments: [...p.environments],
    repositories: [...p.repositories],
    groups: [...p.groups],
    units: [...p.units],
  };
  if (p.name !== undefined) out.name = p.name;
  if (p.templates && p.templates.size > 0) out.templates = [...p.templates];
  if (p.objects) out.objects = [...p.objects];
  if (p.dirCalls) out.dirCalls = [...p.dirCalls];
  if (p.includes) out.includes = p.includes;
  return out;
}

function fromJson(root: string, j: ProjectJson): Project {
  const p = {
    root,
    environments: new Map(j.environments),
    repositories: new Map(j.repositories),
    groups: new Map(j.groups),
    units: new Map(j.units),
  } as Project;
  if (j.name !== undefined) p.name = j.name;
  if (j.templates) p.templates = new Map(j.templates) as Project['templates'];
  if (j.objects) p.objects = new Map(j.objects);
  if (j.dirCalls) p.dirCalls = new Map(j.dirCalls);
  if (j.includes) p.includes = j.includes;
  return p;
}

/** A loaded project and the object id of its directory in the commit (what the cache keys it by). */
interface LoadedProject {
  project: Project;
  treeOid?: string;
}

export async function loadProjectAt(root: string, reader: BatchReader, commit: string, prefix: string, cache: JsonCache): Promise<LoadedProject> {
  const tree = await reader.read(`${commit}:${prefix}`);
  const key = tree?.type === 'tree' ? tree.oid : undefined;
  if (key) {
    const cached = cache.get<ProjectJson>('project', key);
    if (cached) return { project: fromJson(root, cached), treeOid: key };
  }
  // The loader (YAML parser, validation) is loaded only on a cache miss: a warm run never needs it.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { loadProject } = require('./load') as typeof import('./load');
  const project = await loadProject(root, new CommitSourceTree(reader, commit, prefix));
  if (key) cache.set('project', key, toJson(project));
  return key ? { project, treeOid: key } : { project };
}
