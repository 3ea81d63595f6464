// run/secrets: which value a consumer's execution was planned with, by the form of the digest its
// read recorded: keyed (hmac-sha256, checked with the key that made it), the first format's
// unkeyed sha256 (state written before keyed digests: it keeps working until its producer runs
// again) and, where no key exists, the producer's execution.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { openSecrets, RunKeys } from '../../dist/run/secrets.js';
import { canonicalJson } from '../../dist/util/canonical-json.js';

const KEY = Buffer.alloc(32, 3).toString('base64');
const read = (sha256) => ({ pointer: '/env/T', unit: 'p', output: 'token', sha256 });
const observed = (sha256, run = 'run-1') => new Map([['p', { receipt: { run, outputs: {}, sensitiveOutputs: { token: { sha256 } } } }]]);
const backend = (value) => async () => ({ token: { value, sensitive: true } });

async function opened(sha256, { value = 'pw', env = { NYL_SECRETS_KEY: KEY }, run } = {}) {
  return openSecrets([read(sha256)], observed(sha256, run), new RunKeys(env, 'dev'), backend(value));
}

test('a keyed digest: the value it was made of opens, another fails NYL-SECRET-UNAVAILABLE; without the key, NYL-SECRETS-KEY-MISSING', async () => {
  const keys = new RunKeys({ NYL_SECRETS_KEY: KEY }, 'dev');
  const digest = keys.ring().digest(keys.binding('p', 'token'), 'pw');
  assert.deepEqual(await opened(digest), new Map([['p.token', 'pw']]));
  assert.equal((await opened(digest, { value: 'other' })).code, 'NYL-SECRET-UNAVAILABLE');
  assert.equal((await opened(digest, { env: {} })).code, 'NYL-SECRETS-KEY-MISSING');
});

test("the first format's unkeyed digest is still checked: existing state keeps working", async () => {
  const legacy = `sha256:${createHash('sha256').update(canonicalJson('pw')).digest('hex')}`;
  assert.deepEqual(await opened(legacy, { env: {} }), new Map([['p.token', 'pw']]));
  assert.equal((await opened(legacy, { value: 'other' })).code, 'NYL-SECRET-UNAVAILABLE');
});

test("without a key, the producer's execution: the same receipt opens, a later one fails", async () => {
  assert.deepEqual(await opened('execution:run-1', { env: {} }), new Map([['p.token', 'pw']]));
  const later = await openSecrets([read('execution:run-1')], observed('execution:run-2', 'run-2'), new RunKeys({}, 'dev'), backend('pw'));
  assert.equal(later.code, 'NYL-SECRET-UNAVAILABLE');
});
