// util/sealed: AES-256-GCM seals for sensitive values, a key ring that rotates, and clear problems
// for a missing, malformed or unreadable key.

import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { keyRingFrom } from '../../dist/util/sealed.js';

const KEY_A = Buffer.alloc(32, 1).toString('base64');
const KEY_B = Buffer.alloc(32, 2).toString('base64');

test('a value sealed under a name opens under that name only, and every seal is different', () => {
  const ring = keyRingFrom({ NYL_SECRETS_KEY: KEY_A });
  const one = ring.seal('db.password', { user: 'app', password: 'pa55' });
  const two = ring.seal('db.password', { user: 'app', password: 'pa55' });
  assert.notEqual(one, two, 'a fresh nonce per seal');
  assert.match(one, /^aes256gcm:v1:[0-9a-f]{16}:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+:[A-Za-z0-9+/=]+$/);
  assert.ok(!one.includes('pa55'));
  assert.deepEqual(ring.open('db.password', one), { ok: true, value: { user: 'app', password: 'pa55' } });
  const moved = ring.open('other.password', one);
  assert.equal(moved.ok, false, 'a seal copied to another output does not open');
});

test('rotation: the first key seals, every key opens; a seal of a removed key names that key', () => {
  const old = keyRingFrom({ NYL_SECRETS_KEY: KEY_A });
  const sealedOld = old.seal('u.o', 'v1');
  const rotating = keyRingFrom({ NYL_SECRETS_KEY: `${KEY_B}, ${KEY_A}` });
  assert.deepEqual(rotating.open('u.o', sealedOld), { ok: true, value: 'v1' });
  const sealedNew = rotating.seal('u.o', 'v2');
  assert.equal(sealedNew.split(':')[2], keyRingFrom({ NYL_SECRETS_KEY: KEY_B }).seal('x', 1).split(':')[2], 'sealed with the first key');
  const onlyNew = keyRingFrom({ NYL_SECRETS_KEY: KEY_B });
  assert.deepEqual(onlyNew.open('u.o', sealedNew), { ok: true, value: 'v2' });
  const lost = onlyNew.open('u.o', sealedOld);
  assert.equal(lost.ok, false);
  assert.match(lost.problem, new RegExp(`sealed with key ${sealedOld.split(':')[2]}`));
});

test('an altered seal does not open', () => {
  const ring = keyRingFrom({ NYL_SECRETS_KEY: KEY_A });
  const parts = ring.seal('u.o', 'secret-value').split(':');
  const data = Buffer.from(parts[5], 'base64');
  data[0] ^= 1;
  parts[5] = data.toString('base64');
  const r = ring.open('u.o', parts.join(':'));
  assert.equal(r.ok, false);
  assert.match(r.problem, /altered/);
  assert.equal(ring.open('u.o', 'plain text').ok, false);
});

test('keys from a key file: one per line, comments and blank lines skipped', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-keys-'));
  try {
    const file = path.join(dir, 'keys');
    fs.writeFileSync(file, `# new key first\n${KEY_B}\n\n# the old one until everything is sealed again\n${KEY_A}\n`);
    const sealedOld = keyRingFrom({ NYL_SECRETS_KEY: KEY_A }).seal('u.o', 42);
    const ring = keyRingFrom({ NYL_SECRETS_KEY_FILE: file });
    assert.deepEqual(ring.open('u.o', sealedOld), { ok: true, value: 42 });
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
