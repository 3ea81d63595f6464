/**
 * The backend a module's `init` configured, as Terraform recorded it in its data directory
 * (`TF_DATA_DIR/terraform.tfstate`: the backend block of the module merged with
 * `-backend-config`), and what Nyl makes of it:
 * - whether it keeps the state past the run: no backend, or a `local` one at a relative path (its
 *   default path, or the default workspace directory of a named workspace), writes the state into
 *   the scratch copy, which is deleted;
 * - where a `local` backend keeps the state file of a workspace, so that it can be read without a
 *   process;
 * - its identity, as a receipt records it: the type, the fields that say where the state is (a
 *   bucket and key, a path), and a fingerprint of the whole configuration with credentials left
 *   out, so that two receipts can be compared without storing a secret.
 */
import { withoutCredentials, withoutUserinfo } from '../../util/credentials';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import { canonicalJson } from '../../util/canonical-json';

export interface BackendRecord {
  type: string;
  config: Record<string, unknown>;
}

/** A backend as a receipt records it. */
export interface BackendIdentity {
  type: string;
  /** The fields that say where the state is, where Nyl knows them for the type. */
  location: Record<string, string>;
  /** `sha256:` of the configuration without its credentials. */
  fingerprint: string;
}

/** The workspace Terraform uses when none is selected. */
export const DEFAULT_WORKSPACE = 'default';

/**
 * The configuration fields that say where each well-known backend keeps state: what a person
 * recognizes in a message. Credentials are never among them.
 */
const LOCATION_FIELDS: Readonly<Record<string, readonly string[]>> = {
  local: ['path', 'workspace_dir'],
  s3: ['bucket', 'key', 'region', 'workspace_key_prefix'],
  gcs: ['bucket', 'prefix'],
  azurerm: ['storage_account_name', 'container_name', 'key'],
  http: ['address'],
  consul: ['address', 'path'],
  kubernetes: ['namespace', 'secret_suffix'],
  pg: ['schema_name'],
  cos: ['bucket', 'prefix', 'key'],
  oss: ['bucket', 'prefix', 'key'],
  remote: ['hostname', 'organization'],
  cloud: ['hostname', 'organization'],
};

/** The backend `init` recorded in the data directory; undefined when the module declares none. */
export function recordedBackend(dataDir: string): BackendRecord | undefined {
  const file = join(dataDir, 'terraform.tfstate');
  if (!existsSync(file)) return undefined;
  try {
    const backend = (JSON.parse(readFileSync(file, 'utf8')) as { backend?: { type?: unknown; config?: unknown } }).backend;
    if (!backend || typeof backend.type !== 'string') return undefined;
    const config = typeof backend.config === 'object' && backend.config !== null ? (backend.config as Record<string, unknown>) : {};
    return { type: backend.type, config };
  } catch {
    return undefined;
  }
}

const ADVICE = 'declare a backend in the module (terraform { backend "s3" {...} }, or backend "local" {} with backendConfig: {path: /an/absolute/path})';

/**
 * Why this backend cannot keep the module's state past the run, if it cannot: none declared, or
 * a local one whose state file for `workspace` is at a relative path (resolved in the scratch copy).
 */
export function backendProblem(backend: BackendRecord | undefined, module: string, workspace: string): string | undefined {
  if (!backend) return `module ${module} declares no backend, so its state would be written into Nyl's scratch copy and lost after the run; ${ADVICE}`;
  if (backend.type !== 'local') return undefined;
  const path = backend.config.path;
  if (workspace === DEFAULT_WORKSPACE) {
    if (typeof path === 'string' && isAbsolute(path)) return undefined;
    return `module ${module} keeps its state in a local backend at ${typeof path === 'string' ? `the relative path ${path}` : 'its default path'}, inside Nyl's scratch copy, where it would be lost after the run; give backendConfig.path an absolute path, or ${ADVICE}`;
  }
  const dir = backend.config.workspace_dir;
  if (typeof dir === 'string' && isAbsolute(dir)) return undefined;
  const where = typeof dir === 'string' ? `the relative directory ${dir}` : 'its default directory terraform.tfstate.d';
  return `module ${module} keeps the state of workspace ${workspace} in a local backend under ${where}, inside Nyl's scratch copy, where it would be lost after the run; give backendConfig.workspace_dir an absolute path, or ${ADVICE}`;
}

/** The state file of a local backend's workspace (absolute: backendProblem refused the rest). */
export function localStatePath(backend: BackendRecord, workspace: string): string | undefined {
  if (backend.type !== 'local') return undefined;
  if (workspace === DEFAULT_WORKSPACE) return typeof backend.config.path === 'string' ? backend.config.path : undefined;
  const dir = backend.config.workspace_dir;
  return typeof dir === 'string' ? join(dir, workspace, 'terraform.tfstate') : undefined;
}

/** The backend as a receipt records it: no credential, neither in a field of its own nor in a URL. */
export function backendIdentity(backend: BackendRecord): BackendIdentity {
  const location: Record<string, string> = {};
  for (const field of LOCATION_FIELDS[backend.type] ?? []) {
    const value = backend.config[field];
    if (value !== null && value !== undefined && value !== '') location[field] = String(withoutUserinfo(value));
  }
  // No credential in the fingerprint: a receipt goes to Git.
  const kept = withoutCredentials(backend.config);
  const fingerprint = `sha256:${createHash('sha256')
    .update(canonicalJson({ type: backend.type, config: kept }))
    .digest('hex')}`;
  return { type: backend.type, location, fingerprint };
}

/** Do two recorded backends name the same place? */
export function sameBackend(a: BackendIdentity, b: BackendIdentity): boolean {
  return a.type === b.type && a.fingerprint === b.fingerprint;
}

/** A backend for a message: `local /srv/tfstate/app.tfstate`, `s3 bucket=b key=k region=r`. */
export function describeBackend(b: BackendIdentity): string {
  const fields = Object.entries(b.location);
  if (b.type === 'local' && b.location.path && fields.length === 1) return `local ${b.location.path}`;
  return fields.length > 0 ? `${b.type} ${fields.map(([k, v]) => `${k}=${v}`).join(' ')}` : `${b.type} (${b.fingerprint.slice(0, 19)})`;
}
