/**
 * Loads a project from one source tree: `nyl.yaml`, then the files its Project documents include
 * (level by level, one batched read per level), validated into a typed Project.
 *
 * Every problem of every file is collected and thrown together in one NylError, each naming
 * file, line, column and JSON pointer, so that a user fixes a project in one pass. Problems that
 * keep source from being read (YAML syntax, limits, includes that read nothing) come first: what
 * they hide declares nothing, so no name is reported unknown while one of them stands.
 */
import * as path from 'node:path';
import { type Diagnostic, type SourceLocation, NylError, diagnostic } from '../errors/diagnostic';
import { expandGlob, isGlob, normalizePattern } from './glob';
import { placeholderDocument, scanInstanceReferences } from './instances';
import { type ReferenceScan, scanReferences } from './references';
import { type Resource, type ProjectDocument, buildResource, isUnitKind } from './resources';
import { closest } from '../util/closest';
import { readsSource, sourceDirCalls } from './source-reads';
import { type SchemaProblem, validateSchema } from '../util/schema';
import { API_VERSION, RESOURCE_KINDS, type ResourceKind, isResourceKind, resourceSchema } from './schema';
import { type SourceDocument, parseSourceFile } from './source-file';
import type { EnvironmentTemplateResource, FieldLocations, Origin, Project, SourceTree } from './types';
import { type ProjectResources, nulBytes, prototypeKeys, sourceError, validateProject } from './validate';

export const PROJECT_FILE = 'nyl.yaml';

interface FileText {
  path: string;
  text: string;
}

/**
 * Names declared by documents that did not validate, so that others do not report them unknown.
 * `incomplete` once some source could not be read: it may declare any name.
 */
interface Declared {
  environments: Set<string>;
  repositories: Set<string>;
  units: Set<string>;
  incomplete: boolean;
}

/** What loading collects across files and include levels. */
interface Loading {
  /** Problems that keep source from being read: syntax, limits, includes that read nothing. */
  unread: Diagnostic[];
  /** Every other problem. */
  errors: Diagnostic[];
  resources: Resource[];
  documents: Map<string, SourceDocument>;
  declared: Declared;
  /** Files read or about to be, in load order. */
  loaded: Set<string>;
}

interface ProjectSource {
  doc: ProjectDocument;
  source: SourceDocument;
}

export async function loadProject(root: string, tree: SourceTree): Promise<Project> {
  const absoluteRoot = path.resolve(root);
  const top = await tree.read(PROJECT_FILE);
  if (top === undefined) {
    throw new NylError(diagnostic('NYL-PROJECT-MISSING', 'error', `no ${PROJECT_FILE} in ${absoluteRoot}`));
  }
  const loading: Loading = {
    unread: [],
    errors: [],
    resources: [],
    documents: new Map(),
    declared: { environments: new Set(), repositories: new Set(), units: new Set(), incomplete: false },
    loaded: new Set([PROJECT_FILE]),
  };
  let listing: string[] | undefined;
  let level: FileText[] = [{ path: PROJECT_FILE, text: top }];
  while (level.length > 0) {
    const projectDocs = readLevel(level, loading);
    if (projectDocs.every((p) => p.doc.include.length === 0)) break;
    listing ??= await tree.list();
    level = await readIncluded(tree, includedFiles(projectDocs, listing, loading), loading);
  }

  const grouped = groupResources(loading.resources);
  loading.declared.incomplete ||= loading.unread.length > 0;
  loading.errors.push(...validateProject(grouped, locatorOf(loading.documents), loading.declared));
  // Why first: what could not be read declares nothing, so later errors may be its consequences.
  const files = [...loading.loaded];
  const all = [...sortDiagnostics(loading.unread, files), ...sortDiagnostics(loading.errors, files)];
  if (all.length > 0) throw new NylError(all);
  const project = projectOf(absoluteRoot, grouped, loading.resources);
  const includes = [...new Set(loading.resources.flatMap((r) => (r.kind === 'Project' ? r.include : [])))];
  if (includes.length > 0) project.includes = includes;
  if (tree.objects && [...project.units.values()].some(readsSource)) {
    project.objects = await tree.objects();
    project.dirCalls = await sourceDirCalls(project, tree, project.objects);
  }
  return project;
}

/** Parses and validates the files of one include level; returns its Project documents. */
function readLevel(level: FileText[], loading: Loading): ProjectSource[] {
  const projectDocs: ProjectSource[] = [];
  for (const file of level) {
    const parsed = parseSourceFile(file.path, file.text);
    loading.unread.push(...parsed.errors);
    for (const doc of parsed.documents) {
      loading.documents.set(documentKey(doc.file, doc.index), doc);
      const resource = readDocument(doc, loading.errors, loading.declared);
      if (!resource) continue;
      loading.resources.push(resource);
      if (resource.kind === 'Project') projectDocs.push({ doc: resource, source: doc });
    }
  }
  return projectDocs;
}

/** The files the includes of these Project documents add, each with the include that names it. */
function includedFiles(projectDocs: ProjectSource[], files: string[], loading: Loading): Map<string, SourceLocation> {
  // Which include produced a path, to blame it when the file cannot be read.
  const wanted = new Map<string, SourceLocation>();
  for (const { doc, source } of projectDocs) {
    doc.include.forEach((pattern, i) => {
      const location = at(source, `/spec/include/${i}`);
      const matches = isGlob(pattern) ? expandGlob(pattern, files) : files.filter((p) => p === normalizePattern(pattern));
      if (matches.length === 0) {
        loading.unread.push(sourceError(location, `include "${pattern}" matches no file`, 'correct the pattern (relative to the project root), or remove it'));
      }
      for (const m of matches) {
        if (loading.loaded.has(m)) continue;
        loading.loaded.add(m);
        wanted.set(m, location);
      }
    });
  }
  return wanted;
}

/** Reads the wanted files in one batch; a file that cannot be read is an error at its include. */
async function readIncluded(tree: SourceTree, wanted: Map<string, SourceLocation>, loading: Loading): Promise<FileText[]> {
  const paths = [...wanted.keys()];
  const texts = paths.length > 0 ? await tree.readMany(paths) : [];
  const level: FileText[] = [];
  paths.forEach((p, i) => {
    const text = texts[i];
    if (text === undefined) loading.unread.push(sourceError(wanted.get(p)!, `included file ${p} cannot be read`, 'check that the file is committed'));
    else level.push({ path: p, text });
  });
  return level;
}

function locatorOf(documents: Map<string, SourceDocument>): (origin: Origin, pointer: string) => SourceLocation {
  return (origin, pointer) => {
    const doc = documents.get(documentKey(origin.file, origin.document));
    return doc ? at(doc, pointer) : { file: origin.file, line: origin.line, pointer };
  };
}

function projectOf(root: string, grouped: ReturnType<typeof groupResources>, resources: Resource[]): Project {
  const project: Project = {
    root,
    environments: new Map(grouped.environments.map((r) => [r.name, r])),
    templates: new Map(grouped.templates.map((r) => [r.name, r])),
    repositories: new Map(grouped.repositories.map((r) => [r.name, r])),
    groups: new Map(grouped.groups.map((r) => [r.name, r])),
    units: new Map(grouped.units.map((r) => [r.name, r])),
  };
  const first = resources.find((r): r is ProjectDocument => r.kind === 'Project');
  if (first) project.name = first.name;
  return project;
}

function documentKey(file: string, index: number): string {
  return `${file}#${index}`;
}

function at(doc: SourceDocument, pointer: string): SourceLocation {
  return { file: doc.file, ...doc.locate(pointer), pointer };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates one document; returns its resource, or undefined after recording its problems. */
function readDocument(doc: SourceDocument, errors: Diagnostic[], declared: Declared): Resource | undefined {
  const value = doc.value;
  if (!isRecord(value)) {
    errors.push(sourceError(at(doc, ''), 'a resource must be a mapping', `write a mapping with apiVersion: ${API_VERSION}, kind, metadata and spec`));
    return undefined;
  }
  // A NUL byte or a __proto__ key anywhere is reported at its own pointer, instead of what else is wrong there.
  const nul = [...nulBytes(value), ...prototypeKeys(value)];
  const nulAt = new Set(nul.map((p) => p.pointer));
  const refuse = (pointer: string, message: string, fix: string): undefined => {
    for (const p of nul) errors.push(sourceError(at(doc, p.pointer), p.message, p.fix));
    if (!nulAt.has(pointer)) errors.push(sourceError(at(doc, pointer), message, fix));
    declareAnyKind(declared, value);
    return undefined;
  };
  if (value.apiVersion !== API_VERSION) {
    const found = value.apiVersion === undefined ? 'no apiVersion' : `apiVersion ${JSON.stringify(value.apiVersion)}`;
    return refuse('/apiVersion', `unsupported ${found}`, `set apiVersion: ${API_VERSION}`);
  }
  const kind = value.kind;
  if (!isResourceKind(kind)) {
    const guess = typeof kind === 'string' ? closest(kind, RESOURCE_KINDS) : undefined;
    return refuse(
      '/kind',
      kind === undefined ? 'the resource has no kind' : `unknown kind ${JSON.stringify(kind)}`,
      `${guess ? `did you mean ${guess}? ` : ''}kind is one of: ${RESOURCE_KINDS.join(', ')}`,
    );
  }

  const { problems, scan, instancePointers } = checkDocument(kind, value);
  const all = [...nul, ...problems.filter((p) => !nulAt.has(p.pointer))];
  const written = isRecord(value.metadata) ? value.metadata.name : undefined;
  const name = typeof written === 'string' && !written.includes('\0') ? written : undefined;
  if (all.length > 0) {
    for (const p of all)
      errors.push(sourceError(at(doc, p.pointer), `${kind}${name ? ` ${name}` : ''}: ${p.message}`, p.fix, isUnitKind(kind) && name ? [name] : undefined));
    declare(declared, kind, name, value);
    return undefined;
  }

  const origin: Origin = { file: doc.file, line: doc.start.line, pointer: '', document: doc.index };
  const locations = scan
    ? Object.fromEntries(scan.pointers.map((p) => [p, doc.locate(`/spec${p}`)]))
    : withLocations(fieldLocations(doc, kind), doc, instancePointers);
  return buildResource(kind, value, origin, scan, locations);
}

/**
 * The schema's and the references' problems of a document (pointers from its root). A unit's
 * references are scanned by the unit grammar; an EnvironmentTemplate's by the instance grammar,
 * and the schema sees it rendered for a placeholder instance (its field rules apply to what an
 * instance writes), except where a reference is itself refused.
 */
function checkDocument(kind: ResourceKind, value: Record<string, unknown>): { problems: SchemaProblem[]; scan?: ReferenceScan; instancePointers?: string[] } {
  if (kind === 'EnvironmentTemplate') {
    const instance = scanInstanceReferences(value);
    const refused = new Set(instance.problems.map((p) => p.pointer));
    const schema = validateSchema(resourceSchema(kind), placeholderDocument(value)).filter((p) => !refused.has(p.pointer));
    return { problems: [...schema, ...instance.problems], instancePointers: instance.pointers };
  }
  const problems = validateSchema(resourceSchema(kind), value);
  if (!isUnitKind(kind) || !isRecord(value.spec)) return { problems };
  const scan = scanReferences(value.spec, kind);
  return { problems: [...problems, ...scan.problems.map((p) => ({ ...p, pointer: `/spec${p.pointer}` }))], scan };
}

function withLocations(fields: FieldLocations | undefined, doc: SourceDocument, pointers: string[] = []): FieldLocations | undefined {
  if (pointers.length === 0) return fields;
  return { ...fields, ...Object.fromEntries(pointers.map((p) => [p, doc.locate(p)])) };
}

/** Records what a document that did not validate declares, so that its name is not reported unknown. */
function declare(declared: Declared, kind: string, name: string | undefined, value: Record<string, unknown>): void {
  // Why: an invalid Project document's includes are not followed, so what they declare is unknown.
  if (kind === 'Project' && isRecord(value.spec) && value.spec.include !== undefined) declared.incomplete = true;
  if (name === undefined) return;
  if (isUnitKind(kind)) declared.units.add(name);
  else if (kind === 'Environment') declared.environments.add(name);
  else if (kind === 'GitRepository') declared.repositories.add(name);
}

/**
 * Records the name of a document whose apiVersion or kind did not parse under every kind: it may
 * declare a unit, an environment or a repository, and a reference to it is no finding of its own
 * (`kind: Comand` named `a` made `dependsOn: [a]` an unknown unit).
 */
function declareAnyKind(declared: Declared, value: Record<string, unknown>): void {
  const name = isRecord(value.metadata) ? value.metadata.name : undefined;
  if (typeof name !== 'string') return;
  for (const names of [declared.units, declared.environments, declared.repositories]) names.add(name);
}

/** Fields whose line an error after loading may name (a state ref that is a source branch). */
const LOCATED_FIELDS: Partial<Record<string, string[]>> = {
  Environment: ['/spec/source/ref', '/spec/state/desiredRef', '/spec/state/observedRef'],
  EnvironmentGroup: ['/spec/shared/state/desiredRef', '/spec/shared/state/observedRef'],
  EnvironmentTemplate: ['/spec/environment/source/ref', '/spec/environment/state/desiredRef', '/spec/environment/state/observedRef'],
};

function fieldLocations(doc: SourceDocument, kind: string): Record<string, { line: number; column: number }> | undefined {
  const pointers = (LOCATED_FIELDS[kind] ?? []).filter((p) => valueAt(doc.value, p) !== undefined);
  return pointers.length > 0 ? Object.fromEntries(pointers.map((p) => [p, doc.locate(p)])) : undefined;
}

function valueAt(value: unknown, pointer: string): unknown {
  let node = value;
  for (const segment of pointer.slice(1).split('/')) node = isRecord(node) ? node[segment] : undefined;
  return node;
}

function groupResources(resources: Resource[]): ProjectResources & { templates: EnvironmentTemplateResource[] } {
  const out: ProjectResources & { templates: EnvironmentTemplateResource[] } = { environments: [], templates: [], repositories: [], groups: [], units: [] };
  for (const r of resources) {
    if (r.kind === 'Environment') out.environments.push(r);
    else if (r.kind === 'EnvironmentTemplate') out.templates.push(r);
    else if (r.kind === 'GitRepository') out.repositories.push(r);
    else if (r.kind === 'EnvironmentGroup') out.groups.push(r);
    else if (r.kind !== 'Project') out.units.push(r);
  }
  return out;
}

/** Source order: files in load order, then line and column; stable for equal positions. */
function sortDiagnostics(list: Diagnostic[], files: string[]): Diagnostic[] {
  const rank = new Map(files.map((f, i) => [f, i]));
  const key = (d: Diagnostic): [number, number, number] => [rank.get(d.location?.file ?? '') ?? files.length, d.location?.line ?? 0, d.location?.column ?? 0];
  return list
    .map((d, i) => ({ d, i, k: key(d) }))
    .sort((a, b) => a.k[0] - b.k[0] || a.k[1] - b.k[1] || a.k[2] - b.k[2] || a.i - b.i)
    .map((x) => x.d);
}
