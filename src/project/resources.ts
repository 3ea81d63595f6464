/**
 * Turns one schema-valid source document into its typed resource, applying the defaults
 * of its fields (driftRepair converge, lease 5m, empty values/labels/dependsOn). Unit specs stay as
 * written: their defaults belong to drivers, and rendering must see what the user wrote.
 */
import { UNIT_KINDS } from '../drivers/kinds';
import { parseDuration } from '../util/duration';
import { type ReferenceScan } from './references';
import type { ResourceKind } from './schema';
import type {
  EnvironmentGroupResource,
  EnvironmentResource,
  EnvironmentTemplateResource,
  GitRepositoryResource,
  Origin,
  StateSpec,
  UnitKind,
  UnitResource,
} from './types';

const DEFAULT_LEASE_MS = 5 * 60 * 1000;

export interface ProjectDocument {
  kind: 'Project';
  name: string;
  origin: Origin;
  include: string[];
}

export type Resource = ProjectDocument | EnvironmentResource | EnvironmentTemplateResource | GitRepositoryResource | EnvironmentGroupResource | UnitResource;

export function isUnitKind(kind: string): kind is UnitKind {
  return (UNIT_KINDS as readonly string[]).includes(kind);
}

type Json = Record<string, unknown>;

function record(value: unknown): Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : {};
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

function stringRecord(value: unknown): Record<string, string> {
  return Object.fromEntries(Object.entries(record(value)).filter((e): e is [string, string] => typeof e[1] === 'string'));
}

function optionalString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** Copies only the fields that are set, so absent fields stay absent (not `undefined` keys). */
function defined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function state(value: unknown): StateSpec | undefined {
  if (value === undefined) return undefined;
  const s = record(value);
  const repository = s.repository === undefined ? undefined : record(s.repository);
  return defined<StateSpec>({
    repository: repository ? defined({ repoURL: String(repository.repoURL), publishURL: optionalString(repository.publishURL) }) : undefined,
    repositoryRef: optionalString(s.repositoryRef),
    desiredRef: optionalString(s.desiredRef),
    observedRef: optionalString(s.observedRef),
    path: optionalString(s.path),
    coordinationRefPrefix: optionalString(s.coordinationRefPrefix),
  });
}

function matchLabels(value: unknown): { matchLabels: Record<string, string> } | undefined {
  return value === undefined ? undefined : { matchLabels: stringRecord(record(value).matchLabels) };
}

/**
 * Builds the typed resource of a document the schema accepted. `scan` carries the references of
 * a unit spec and `locations` their source positions (for an Environment or a group: those of its
 * source and state ref fields).
 */
export function buildResource(
  kind: ResourceKind,
  document: Json,
  origin: Origin,
  scan?: ReferenceScan,
  locations?: Record<string, { line: number; column: number }>,
): Resource {
  const metadata = record(document.metadata);
  const name = String(metadata.name);
  const labels = stringRecord(metadata.labels);
  const spec = record(document.spec);
  switch (kind) {
    case 'Project':
      return { kind, name, origin, include: strings(spec.include) };
    case 'GitRepository':
      return { kind, name, labels, origin, spec: defined({ url: String(spec.url), publishURL: optionalString(spec.publishURL) }) };
    case 'EnvironmentGroup':
      return {
        kind,
        name,
        labels,
        origin,
        ...(locations ? { locations } : {}),
        spec: defined({
          selector: matchLabels(spec.selector),
          environments: spec.environments === undefined ? undefined : strings(spec.environments),
          shared: spec.shared === undefined ? undefined : defined({ state: state(record(spec.shared).state) }),
        }),
      };
    case 'EnvironmentTemplate':
      // Why raw: the environment spec is built per instance, after its references are resolved.
      return {
        kind,
        name,
        labels,
        origin,
        ...(locations ? { locations } : {}),
        spec: { namePattern: String(spec.namePattern), environment: record(spec.environment) },
      };
    case 'Environment':
      return { kind, name, labels, origin, ...(locations ? { locations } : {}), spec: environmentSpec(spec) };
    default:
      return unitResource(kind, { name, labels, origin }, spec, scan, locations);
  }
}

/** An Environment's spec: the lease's durations parsed, the defaults applied. */
function environmentSpec(spec: Json): EnvironmentResource['spec'] {
  const source = spec.source === undefined ? undefined : defined({ ref: optionalString(record(spec.source).ref) });
  const lease = optionalString(record(spec.lease).duration);
  const skewMargin = optionalString(record(spec.lease).skewMargin);
  return defined({
    source,
    state: state(spec.state),
    unitSelector: matchLabels(spec.unitSelector),
    values: record(spec.values),
    driftRepair: spec.driftRepair === 'manual' ? 'manual' : 'converge',
    dependsOn: strings(spec.dependsOn),
    lease: defined({
      durationMs: (lease === undefined ? undefined : parseDuration(lease)) ?? DEFAULT_LEASE_MS,
      skewMarginMs: skewMargin === undefined ? undefined : parseDuration(skewMargin),
    }),
  });
}

/** A unit: its dependencies are the declared ones, its triggers and the units its references name. */
function unitResource(
  kind: UnitKind,
  named: Pick<UnitResource, 'name' | 'labels' | 'origin'>,
  spec: Json,
  scan?: ReferenceScan,
  locations?: Record<string, { line: number; column: number }>,
): UnitResource {
  const declared = strings(spec.dependsOn);
  const triggers = strings(spec.triggers);
  const references = scan?.unitReferences ?? [];
  const unit: UnitResource = {
    kind,
    ...named,
    spec,
    dependsOn: [...new Set([...declared, ...triggers, ...references.map((r) => r.unit)])],
    declaredDependsOn: declared,
    references,
  };
  if (locations && Object.keys(locations).length > 0) unit.locations = locations;
  return unit;
}
