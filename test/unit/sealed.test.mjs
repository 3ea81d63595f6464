// util/sealed: AES-256-GCM seals for sensitive values bound to environment, unit and output, keyed
// digests, a key ring that rotates, and clear problems for a missing, malformed or unreadable key.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { keyFileOpenTo, keyRingFrom, keyIdOf } from '../../dist/util/sealed.js';
import { canonicalJson } from '../../dist/util/canonical-json.js';

/** A binding of a seal or digest: environment dev unless said otherwise. */
const b = (name, environment = 'dev') => {
  const [unit, output] = name.split('.');
  return { environment, unit, output };
};

const KEY_A = Buffer.alloc(32, 1).toString('base64');
const KEY_B = Buffer.alloc(32, 2).toString('base64');

test('a value sealed under a name opens under that name only, and every seal is different', () => {
  const ring = keyRingFrom({ NYL_SECRETS_KEY: KEY_A });
  const one = ring.seal(b('db.password'), { user: 'app', password: 'pa55' });
  const two = ring.seal(b('db.password'), { user: 'app', password: 'pa55' });
  assert.notEqual(one, two, 'a fresh nonce per seal');
  assert.match(one, /^aes256gcm:v2:[0-9a-f]{16}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
  assert.ok(!one.includes('pa55'));
  assert.deepEqual(ring.open(b('db.password'), one), { ok: true, value: { user: 'app', password: 'pa55' } });
  const moved = ring.open(b('other.password'), one);
  assert.equal(moved.ok, false, 'a seal copied to another output does not open');
});

test('rotation: the first key seals, every key opens; a seal of a removed key names that key', () => {
  const old = keyRingFrom({ NYL_SECRETS_KEY: KEY_A });
  const sealedOld = old.seal(b('u.o'), 'v1');
  const rotating = keyRingFrom({ NYL_SECRETS_KEY: `${KEY_B}, ${KEY_A}` });
  assert.deepEqual(rotating.open(b('u.o'), sealedOld), { ok: true, value: 'v1' });
  const sealedNew = rotating.seal(b('u.o'), 'v2');
  assert.equal(sealedNew.split(':')[2], keyRingFrom({ NYL_SECRETS_KEY: KEY_B }).seal(b('x.y'), 1).split(':')[2], 'sealed with the first key');
  const onlyNew = keyRingFrom({ NYL_SECRETS_KEY: KEY_B });
  assert.deepEqual(onlyNew.open(b('u.o'), sealedNew), { ok: true, value: 'v2' });
  const lost = onlyNew.open(b('u.o'), sealedOld);
  assert.equal(lost.ok, false);
  assert.match(lost.problem, new RegExp(`sealed with key ${sealedOld.split(':')[2]}`));
});

test('an altered seal does not open', () => {
  const ring = keyRingFrom({ NYL_SECRETS_KEY: KEY_A });
  const parts = ring.seal(b('u.o'), 'secret-value').split(':');
  const data = Buffer.from(parts[5], 'base64');
  data[0] ^= 1;
  parts[5] = data.toString('base64');
  const r = ring.open(b('u.o'), parts.join(':'));
  assert.equal(r.ok, false);
  assert.match(r.problem, /altered/);
  assert.equal(ring.open(b('u.o'), 'plain text').ok, false);
});

test('keys from a key file: one per line, comments and blank lines skipped', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-keys-'));
  try {
    const file = path.join(dir, 'keys');
    fs.writeFileSync(file, `# new key first\n${KEY_B}\n\n# the old one until everything is sealed again\n${KEY_A}\n`);
    const sealedOld = keyRingFrom({ NYL_SECRETS_KEY: KEY_A }).seal(b('u.o'), 42);
    const ring = keyRingFrom({ NYL_SECRETS_KEY_FILE: file });
    assert.deepEqual(ring.open(b('u.o'), sealedOld), { ok: true, value: 42 });
    const missing = keyRingFrom({ NYL_SECRETS_KEY_FILE: path.join(dir, 'absent') });
    assert.match(missing.problem, /cannot be read: ENOENT/);
    assert.equal(missing.missing, false);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('no key, or a key that is not 32 bytes of base64, is a problem that says what to set', () => {
  const none = keyRingFrom({});
  assert.equal(none.missing, true);
  assert.match(none.problem, /NYL_SECRETS_KEY or NYL_SECRETS_KEY_FILE/);
  const short = keyRingFrom({ NYL_SECRETS_KEY: Buffer.alloc(16).toString('base64') });
  assert.match(short.problem, /key 1 of NYL_SECRETS_KEY is not 32 bytes in base64/);
  assert.match(keyRingFrom({ NYL_SECRETS_KEY: 'not-base64!' }).problem, /not 32 bytes/);
});

test('a seal names its environment: copied to another environment that shares the key, it does not open there', () => {
  const ring = keyRingFrom({ NYL_SECRETS_KEY: KEY_A });
  const sealed = ring.seal(b('db.password', 'dev'), 'pa55');
  assert.deepEqual(ring.open(b('db.password', 'dev'), sealed), { ok: true, value: 'pa55' });
  const copied = ring.open(b('db.password', 'prod'), sealed);
  assert.equal(copied.ok, false);
  assert.match(copied.problem, /another output or environment/);
});

test('a seal of the first format (bound to unit.output alone) still opens; its key id is read like the current one', () => {
  const key = Buffer.from(KEY_A, 'base64');
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(Buffer.from('db.password'));
  const data = Buffer.concat([cipher.update(JSON.stringify('old'), 'utf8'), cipher.final()]);
  const id = createHash('sha256').update(key).digest('hex').slice(0, 16);
  const v1 = ['aes256gcm', 'v1', id, nonce.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join(':');
  const ring = keyRingFrom({ NYL_SECRETS_KEY: KEY_A });
  assert.deepEqual(ring.open(b('db.password'), v1), { ok: true, value: 'old' });
  assert.equal(keyIdOf(v1), id);
  assert.equal(ring.sealingKeyId, id);
});

// Pins: the digest was sha256(canonicalJson(value)), published in state and in reports, and
// `password123` was recovered from a seven-word list.
test('a digest is keyed: not a hash of the value, bound to its output and environment, checked by any key of the ring', () => {
  const ring = keyRingFrom({ NYL_SECRETS_KEY: KEY_A });
  const digest = ring.digest(b('db.password'), 'password123');
  assert.match(digest, /^hmac-sha256:[0-9a-f]{16}:[0-9a-f]{64}$/);
  for (const guess of [canonicalJson('password123'), 'password123'])
    assert.ok(!digest.endsWith(createHash('sha256').update(guess).digest('hex')), 'not an unkeyed hash');
  assert.equal(ring.digest(b('db.password'), 'password123'), digest, 'the same value, the same digest: a consumer stays current');
  assert.notEqual(ring.digest(b('db.password', 'prod'), 'password123'), digest);
  assert.notEqual(ring.digest(b('db.token'), 'password123'), digest);
  assert.notEqual(keyRingFrom({ NYL_SECRETS_KEY: KEY_B }).digest(b('db.password'), 'password123'), digest, 'another key, another digest');
  assert.deepEqual(ring.verify(b('db.password'), 'password123', digest), { ok: true });
  assert.deepEqual(ring.verify(b('db.password'), 'password124', digest), { ok: false });
  const rotating = keyRingFrom({ NYL_SECRETS_KEY: `${KEY_B},${KEY_A}` });
  assert.deepEqual(rotating.verify(b('db.password'), 'password123', digest), { ok: true }, 'a digest of the old key is checked while it is in the ring');
  const gone = keyRingFrom({ NYL_SECRETS_KEY: KEY_B }).verify(b('db.password'), 'password123', digest);
  assert.equal(gone.ok, false);
  assert.match(gone.problem, /made with key [0-9a-f]{16}, which no configured key is/);
});

test('a key file readable by others is named, unless NYL_SECRETS_KEY overrides it (then it is not read at all)', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-keys-'));
  try {
    const file = path.join(dir, 'keys');
    fs.writeFileSync(file, `${KEY_A}\n`, { mode: 0o644 });
    fs.chmodSync(file, 0o644);
    assert.deepEqual(keyFileOpenTo({ NYL_SECRETS_KEY_FILE: file }), { file, mode: 0o644 });
    assert.equal(keyFileOpenTo({ NYL_SECRETS_KEY_FILE: file, NYL_SECRETS_KEY: KEY_B }), undefined);
    fs.chmodSync(file, 0o600);
    assert.equal(keyFileOpenTo({ NYL_SECRETS_KEY_FILE: file }), undefined);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
