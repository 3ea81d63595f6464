/**
 * The typed project: what nyl.yaml and its includes declare, after validation.
 * Produced by load.ts from the files of one source commit; consumed by operations and plan/.
 * Unit kinds are the driver registry's (src/drivers/registry.ts).
 */
import type { UnitKind } from '../drivers/kinds';
import type { Infer } from '../util/schema';
import type { SOURCE_KINDS, stateSchema } from './schema';

export type { UnitKind };

/** Where a value came from in source, for errors that name file, line and JSON pointer. */
export interface Origin {
  /** Path relative to the project root, e.g. `nyl.yaml` or `deploy/units.yaml`. */
  file: string;
  /** 1-based line of the resource document's start (or of the field, when known). */
  line: number;
  /** JSON pointer of the resource inside its document, always '' for the document itself. */
  pointer: string;
  /** 0-based index of the document inside its file. */
  document: number;
}

/** An environment's or a group's `state`, as its schema declares it (./schema.ts). */
export type StateSpec = Infer<typeof stateSchema>;

/** Line and column of some fields of a resource, keyed by JSON pointer (absent when built in code). */
export type FieldLocations = Record<string, { line: number; column: number }>;

export interface EnvironmentResource {
  kind: 'Environment';
  name: string;
  labels: Record<string, string>;
  origin: Origin;
  /** Where the source ref and the state refs are written, for errors about them. */
  locations?: FieldLocations;
  /**
   * Set on an instance of an EnvironmentTemplate (src/project/instances.ts): built when `-e NAME`
   * matches the template's namePattern, never declared. Its origin is the template's. Instances
   * are not members of any EnvironmentGroup and are not selected by `-l` or `-g` (isInstance).
   */
  instance?: EnvironmentInstance;
  /** As its schema declares it, with defaults applied (values, driftRepair, dependsOn) and the lease's durations in milliseconds. */
  spec: Pick<EnvironmentSpec, 'source' | 'state' | 'unitSelector'> &
    Required<Pick<EnvironmentSpec, 'values' | 'driftRepair' | 'dependsOn'>> & {
      /** skewMarginMs: set only when the source sets lease.skewMargin (the default depends on the duration). */
      lease: { durationMs: number; skewMarginMs?: number };
    };
}

type EnvironmentSpec = Infer<typeof SOURCE_KINDS.Environment>;

/** What makes an Environment an instance: its template and the part of its name the `*` matched. */
interface EnvironmentInstance {
  template: string;
  namePattern: string;
  suffix: string;
}

/**
 * An EnvironmentTemplate: `spec.environment` is an Environment spec as written (its
 * `${{ instance.* }}` references unresolved, no defaults applied), validated at load with a
 * placeholder instance; `-e NAME` matching namePattern (one `*`) builds an instance of it.
 */
export interface EnvironmentTemplateResource {
  kind: 'EnvironmentTemplate';
  name: string;
  /** metadata.labels as written: the instance's labels, references resolved. */
  labels: Record<string, string>;
  origin: Origin;
  /** Source position of every string holding a reference, keyed by its pointer in the document (e.g. /spec/environment/state/path). */
  locations?: FieldLocations;
  spec: { namePattern: string; environment: Record<string, unknown> };
}

export interface GitRepositoryResource {
  kind: 'GitRepository';
  name: string;
  labels: Record<string, string>;
  origin: Origin;
  spec: Infer<typeof SOURCE_KINDS.GitRepository>;
}

export interface EnvironmentGroupResource {
  kind: 'EnvironmentGroup';
  name: string;
  labels: Record<string, string>;
  origin: Origin;
  /** Where the shared state refs are written, for errors about them. */
  locations?: FieldLocations;
  spec: Infer<typeof SOURCE_KINDS.EnvironmentGroup>;
}

export interface UnitResource {
  kind: UnitKind;
  name: string;
  labels: Record<string, string>;
  origin: Origin;
  /**
   * The validated spec exactly as written (references unresolved), with defaults NOT applied,
   * so that rendering and the execution key see what the user wrote.
   */
  spec: Record<string, unknown>;
  /** spec.dependsOn, spec.triggers and every unit named by a `${{ units.X.outputs.K }}` reference, deduplicated, in order of appearance. */
  dependsOn: string[];
  /** Explicit dependsOn entries only, with their index in spec.dependsOn. */
  declaredDependsOn: string[];
  /** Every units.* reference inside spec, with its JSON pointer relative to spec (e.g. /env/DB_URL), in order of appearance. */
  references: UnitReference[];
  /**
   * Source line and column of every spec string that holds a reference, keyed by its pointer
   * inside spec, so that rendering errors can name the line. Absent for units built in code.
   */
  locations?: Record<string, { line: number; column: number }>;
}

export interface UnitReference {
  unit: string;
  output: string;
  /** JSON pointer inside the unit's spec, e.g. `/env/DB_URL` (relative to spec). */
  pointer: string;
}

export interface Project {
  /** Absolute directory holding nyl.yaml. */
  root: string;
  /** Project name from a Project document, if any. */
  name?: string;
  environments: Map<string, EnvironmentResource>;
  /** EnvironmentTemplates by name (absent: none, as in projects built in code). */
  templates?: Map<string, EnvironmentTemplateResource>;
  repositories: Map<string, GitRepositoryResource>;
  groups: Map<string, EnvironmentGroupResource>;
  /** Every unit, keyed by name (unit names are unique across kinds). */
  units: Map<string, UnitResource>;
  /**
   * The include patterns of every Project document loaded, as written (relative to the project
   * root): which files are project source, for telling whether a working file is (absent: none).
   */
  includes?: string[];
  /**
   * Every blob and tree of the source commit under the project root ('' is the root itself), by
   * path: what units read from source enters their execution keys. Loaded only when a unit reads
   * source (a module kind, or `inputs`).
   */
  objects?: ReadonlyMap<string, SourceObject>;
  /**
   * Source directories a unit runs (a Terraform module) -> the further directories their files
   * name as source they read, transitively (its local module calls), by path as `objects` names
   * them. Loaded with `objects`, for the directories units name literally.
   */
  dirCalls?: ReadonlyMap<string, readonly string[]>;
}

/** A blob or tree of the source commit. */
export interface SourceObject {
  type: 'blob' | 'tree';
  oid: string;
}

/** Reads the files of one source commit, paths relative to the project root. */
export interface SourceTree {
  /** Every file path of the commit under the project root (for include globs). */
  list(): Promise<string[]>;
  /** The text of one file, or undefined when missing. */
  read(path: string): Promise<string | undefined>;
  /** Reads many files at once (batched). */
  readMany(paths: string[]): Promise<(string | undefined)[]>;
  /** Every blob and tree under the project root with its Git object id (absent: the tree has no object ids). */
  objects?(): Promise<Map<string, SourceObject>>;
}
