/**
 * What may be a credential in a tool's configuration (a Terraform backendConfig): fields whose
 * name says so, and the user and password a URL may carry. One rule for everything that records
 * or prints such a configuration: a receipt, a fingerprint, a message.
 */

/** Configuration fields that may hold a credential. */
const CREDENTIAL = /secret|token|password|passwd|credential|conn_str|access_key|private|sas|certificate/i;

function isCredentialField(name: string): boolean {
  return CREDENTIAL.test(name);
}

/** A value without the user and password a URL may carry (`https://user:token@host/state`). */
export function withoutUserinfo(value: unknown): unknown {
  return typeof value === 'string' ? value.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/@]*@/i, '$1') : value;
}

/** A configuration mapping without its credential fields and URL userinfo; any other value as it is. */
export function withoutCredentials(value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return withoutUserinfo(value);
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k, v]) => v !== null && !isCredentialField(k))
      .map(([k, v]) => [k, withoutUserinfo(v)]),
  );
}
