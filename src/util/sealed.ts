/**
 * Sensitive values sealed for Git: AES-256-GCM with Node's crypto, one random 96-bit nonce per
 * value, the value's name as additional data (a sealed value copied to another output does not
 * open there), and the id of the key that sealed it, so that a ring of several keys rotates.
 *
 * Keys come from the environment of the process, never from Git:
 * - `NYL_SECRETS_KEY`: one or more keys, each 32 bytes in base64, separated by commas or spaces;
 * - `NYL_SECRETS_KEY_FILE`: a file holding one key per line (blank lines and `#` comments skipped).
 * The first key seals; every key opens. To rotate, put the new key first and keep the old one
 * after it until every sealed value was sealed again (the producing units executed again).
 *
 * The sealed form is one line: `aes256gcm:v1:<key id>:<nonce>:<tag>:<ciphertext>` (base64 parts;
 * the key id is the first 16 hex digits of the key's sha256, which tells nothing of the key).
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

const PREFIX = 'aes256gcm:v1';

export interface KeyRing {
  /** Seals a value (any JSON) under the first key, bound to `name`. */
  seal(name: string, value: unknown): string;
  /** Opens a sealed value bound to `name`; a problem as text when it cannot. */
  open(name: string, sealed: string): { ok: true; value: unknown } | { ok: false; problem: string };
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
    const lines = readFileSync(file, 'utf8').split('\n').map((l) => l.trim());
    return { texts: lines.filter((l) => l !== '' && !l.startsWith('#')), from: `NYL_SECRETS_KEY_FILE (${file})` };
  } catch (error) {
    return { missing: false, problem: `NYL_SECRETS_KEY_FILE names ${file}, which cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}` };
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

function ring(keys: Buffer[]): KeyRing {
  const byId = new Map(keys.map((k) => [keyId(k), k]));
  const sealer = keys[0]!;
  return {
    seal(name, value) {
      const nonce = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', sealer, nonce);
      cipher.setAAD(Buffer.from(name, 'utf8'));
      const data = Buffer.concat([cipher.update(JSON.stringify(value) ?? 'null', 'utf8'), cipher.final()]);
      return [PREFIX, keyId(sealer), nonce.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join(':');
    },
    open(name, sealed) {
      const parts = sealed.split(':');
      if (parts.length !== 6 || `${parts[0]}:${parts[1]}` !== PREFIX) return { ok: false, problem: 'the sealed value has an unknown form' };
      const key = byId.get(parts[2]!);
      if (!key) return { ok: false, problem: `it was sealed with key ${parts[2]}, which no configured key is (configured: ${[...byId.keys()].join(', ')})` };
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(parts[3]!, 'base64'));
        decipher.setAAD(Buffer.from(name, 'utf8'));
        decipher.setAuthTag(Buffer.from(parts[4]!, 'base64'));
        const text = Buffer.concat([decipher.update(Buffer.from(parts[5]!, 'base64')), decipher.final()]).toString('utf8');
        return { ok: true, value: JSON.parse(text) as unknown };
      } catch {
        return { ok: false, problem: 'it does not open with its key: the sealed value was altered or belongs to another output' };
      }
    },
  };
}
