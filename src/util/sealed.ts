/**
 * Sensitive values sealed for Git, and their keyed digests. AES-256-GCM with Node's crypto, one
 * random 96-bit nonce per value, and the id of the key that sealed it, so that a ring of several
 * keys rotates. What a seal is bound to is its additional data: the environment, the unit and the
 * output (`aes256gcm:v2`), so that a seal copied to another output, or to another environment
 * that shares the key, does not open there. Seals of the first format (`aes256gcm:v1`, bound to
 * `unit.output` alone) still open; `nyl state reseal` seals them again in the current one.
 *
 * Keys come from the environment of the process, never from Git:
 * - `NYL_SECRETS_KEY`: one or more keys, each 32 bytes in base64, separated by commas or spaces;
 * - `NYL_SECRETS_KEY_FILE`: a file holding one key per line (blank lines and `#` comments skipped).
 * The first key seals; every key opens. To rotate, put the new key first and keep the old one
 * after it until every sealed value was sealed again (`nyl state reseal`).
 *
 * The sealed form is one line: `aes256gcm:v2:<key id>:<nonce>:<tag>:<ciphertext>` (base64 parts;
 * the key id is the first 16 hex digits of the key's sha256, which tells nothing of the key).
 *
 * A digest of a sensitive value (what a consumer's execution key covers, and what state records
 * beside the seal) is keyed: `hmac-sha256:<key id>:<hex>`, an HMAC-SHA256 of the binding and the
 * value's canonical JSON under a key derived from the sealing key (HKDF-SHA256, its own `info`,
 * so the digest key is never the sealing key). A plain hash of a value lets anyone who can read
 * state test guesses (a password from a word list); an HMAC cannot be computed without the key.
 */
import { createCipheriv, createDecipheriv, createHash, createHmac, hkdfSync, randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { canonicalJson } from './canonical-json';

const V1 = 'aes256gcm:v1';
const V2 = 'aes256gcm:v2';
const DIGEST = 'hmac-sha256';

/** The variables that configure the key ring: Nyl's alone, never passed to a tool or to Git. */
const KEY_VARIABLES = ['NYL_SECRETS_KEY', 'NYL_SECRETS_KEY_FILE'] as const;

/** The environment every process Nyl starts gets: Nyl's own without the key ring's variables. */
export function withoutKeyVariables(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (!KEY_VARIABLES.some((name) => name in env)) return env;
  // Made once per environment object: every unit's context asks for it.
  let stripped = strippedEnvs.get(env);
  if (!stripped) {
    stripped = { ...env };
    for (const name of KEY_VARIABLES) delete stripped[name];
    strippedEnvs.set(env, stripped);
  }
  return stripped;
}

const strippedEnvs = new WeakMap<NodeJS.ProcessEnv, NodeJS.ProcessEnv>();

/**
 * The key texts the environment configures, whether they make a usable ring or not: masked in
 * every line Nyl prints or keeps, should a tool have found them anyway (a second line of defence).
 */
export function configuredKeyTexts(env: NodeJS.ProcessEnv): string[] {
  const configured = configuredKeys(env);
  return 'problem' in configured ? [] : configured.texts.filter((t) => t.length >= 3);
}

/** What a sealed value or a digest belongs to: a seal or digest of one never stands for another. */
export interface SealBinding {
  environment: string;
  unit: string;
  output: string;
}

export interface KeyRing {
  /** Seals a value (any JSON) under the first key, bound to `binding`. */
  seal(binding: SealBinding, value: unknown): string;
  /** Opens a sealed value bound to `binding`; a problem as text when it cannot. */
  open(binding: SealBinding, sealed: string): { ok: true; value: unknown } | { ok: false; problem: string };
  /** The keyed digest of a value bound to `binding`, under the first key. */
  digest(binding: SealBinding, value: unknown): string;
  /** Is `digest` the keyed digest of this value? A problem when no configured key made it. */
  verify(binding: SealBinding, value: unknown, digest: string): { ok: boolean; problem?: string };
  /** The id of the key that seals (and makes digests) now. */
  readonly sealingKeyId: string;
}

/** The id of the key a seal or a keyed digest was made with, or undefined for another form. */
export function keyIdOf(sealedOrDigest: string): string | undefined {
  const parts = sealedOrDigest.split(':');
  if (parts[0] === 'aes256gcm' && (parts[1] === 'v1' || parts[1] === 'v2') && parts.length === 6) return parts[2];
  if (parts[0] === DIGEST && parts.length === 3) return parts[1];
  return undefined;
}

/** Is this a seal of the current form made with the given key? (What reseal leaves alone.) */
export function isCurrentSeal(sealed: string, keyId: string): boolean {
  return sealed.startsWith(`${V2}:${keyId}:`);
}

/**
 * The key file NYL_SECRETS_KEY_FILE names, with its permission bits, when its group or others may
 * read or write it (mode & 0o077): whoever reads it opens every seal of every state the key
 * protects. Undefined when the variable is unset, the file does not exist, or only its owner may.
 */
export function keyFileOpenTo(env: NodeJS.ProcessEnv): { file: string; mode: number } | undefined {
  const file = env.NYL_SECRETS_KEY_FILE;
  // A file NYL_SECRETS_KEY overrides is not read: nothing of it is in use.
  if (!file || env.NYL_SECRETS_KEY) return undefined;
  try {
    const mode = statSync(file).mode & 0o777;
    return (mode & 0o077) !== 0 ? { file, mode } : undefined;
  } catch {
    return undefined;
  }
}

/** Why no key ring could be made: none configured, or a configured one is unusable. */
export interface KeyRingProblem {
  missing: boolean;
  problem: string;
}

/** The id of a key: safe to print and to record. */
function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16);
}

/** The key texts the environment configures, and where they came from. */
function configuredKeys(env: NodeJS.ProcessEnv): { texts: string[]; from: string } | KeyRingProblem {
  if (env.NYL_SECRETS_KEY) return { texts: env.NYL_SECRETS_KEY.split(/[\s,]+/).filter(Boolean), from: 'NYL_SECRETS_KEY' };
  const file = env.NYL_SECRETS_KEY_FILE;
  if (!file) return { missing: true, problem: 'no key is configured: set NYL_SECRETS_KEY or NYL_SECRETS_KEY_FILE' };
  try {
    const lines = readFileSync(file, 'utf8')
      .split('\n')
      .map((l) => l.trim());
    return { texts: lines.filter((l) => l !== '' && !l.startsWith('#')), from: `NYL_SECRETS_KEY_FILE (${file})` };
  } catch (error) {
    return {
      missing: false,
      problem: `NYL_SECRETS_KEY_FILE names ${file}, which cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    };
  }
}

/** The key ring the environment configures, or why there is none. */
export function keyRingFrom(env: NodeJS.ProcessEnv): KeyRing | KeyRingProblem {
  const configured = configuredKeys(env);
  if ('problem' in configured) return configured;
  if (configured.texts.length === 0) return { missing: true, problem: `${configured.from} holds no key` };
  const keys: Buffer[] = [];
  for (const [i, text] of configured.texts.entries()) {
    const key = Buffer.from(text, 'base64');
    if (key.length !== 32 || key.toString('base64') !== text) {
      return { missing: false, problem: `key ${i + 1} of ${configured.from} is not 32 bytes in base64 (AES-256 needs 32)` };
    }
    keys.push(key);
  }
  return ring(keys);
}

/** The additional data of a seal: its format's own binding. */
function additionalData(format: string, b: SealBinding): Buffer {
  return Buffer.from(format === V1 ? `${b.unit}.${b.output}` : JSON.stringify(['nyl-seal', b.environment, b.unit, b.output]), 'utf8');
}

/** The key a digest is made with: derived from a ring key, never the ring key itself. */
function digestKey(key: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'nyl sensitive-output digest v1', 32));
}

function hmacOf(digestKeyOf: Buffer, b: SealBinding, value: unknown): string {
  return createHmac('sha256', digestKeyOf)
    .update(JSON.stringify([b.environment, b.unit, b.output, canonicalJson(value)]), 'utf8')
    .digest('hex');
}

function ring(keys: Buffer[]): KeyRing {
  const byId = new Map(keys.map((k) => [keyId(k), k]));
  const sealer = keys[0]!;
  const sealingKeyId = keyId(sealer);
  // Derived once per key: a run digests every sensitive output it records or checks.
  const digestKeys = new Map([...byId].map(([id, k]) => [id, digestKey(k)]));
  const unknownKey = (id: string, made: 'made' | 'sealed') =>
    `it was ${made} with key ${id}, which no configured key is (configured: ${[...byId.keys()].join(', ')})`;
  return {
    sealingKeyId,
    seal(binding, value) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', sealer, nonce);
      cipher.setAAD(additionalData(V2, binding));
      const data = Buffer.concat([cipher.update(JSON.stringify(value) ?? 'null', 'utf8'), cipher.final()]);
      return [V2, sealingKeyId, nonce.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join(':');
    },
    open(binding, sealed) {
      const parts = sealed.split(':');
      const format = `${parts[0]}:${parts[1]}`;
      if (parts.length !== 6 || (format !== V1 && format !== V2)) return { ok: false, problem: 'the sealed value has an unknown form' };
      const key = byId.get(parts[2]!);
      if (!key) return { ok: false, problem: unknownKey(parts[2]!, 'sealed') };
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[3]!, 'base64'));
        decipher.setAAD(additionalData(format, binding));
        decipher.setAuthTag(Buffer.from(parts[4]!, 'base64'));
        const text = Buffer.concat([decipher.update(Buffer.from(parts[5]!, 'base64')), decipher.final()]).toString('utf8');
        return { ok: true, value: JSON.parse(text) as unknown };
      } catch {
        return { ok: false, problem: 'it does not open with its key: the sealed value was altered or belongs to another output or environment' };
      }
    },
    digest(binding, value) {
      return `${DIGEST}:${sealingKeyId}:${hmacOf(digestKeys.get(sealingKeyId)!, binding, value)}`;
    },
    verify(binding, value, digest) {
      const [form, id, hex] = digest.split(':');
      if (form !== DIGEST || !id || !hex) return { ok: false, problem: 'the digest has an unknown form' };
      const key = digestKeys.get(id);
      return key ? { ok: hmacOf(key, binding, value) === hex } : { ok: false, problem: unknownKey(id, 'made') };
    },
  };
}
