// What `nyl state reseal` changes in an environment's observed documents (src/commands/state/reseal-documents.ts):
// every sealed value opened with the ring and sealed again with its first key in the current form,
// every digest of a sealed value made again with the first key; records already current left as
// they are; digests of values a backend keeps listed, never touched; a value no key opens listed
// (the operation refuses then); and the consumers whose execution key covers a re-digested output.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import { keyRingFrom, keyIdOf } from '../../dist/util/sealed.js';
import { canonicalJson } from '../../dist/util/canonical-json.js';
import { consumersOf, resealObserved } from '../../dist/commands/state/reseal-documents.js';

const OLD = Buffer.alloc(32, 1).toString('base64');
const NEW = Buffer.alloc(32, 2).toString('base64');
const STRANGER = Buffer.alloc(32, 3).toString('base64');
const oldRing = keyRingFrom({ NYL_SECRETS_KEY: OLD });
const rotating = keyRingFrom({ NYL_SECRETS_KEY: `${NEW},${OLD}` });
const newRing = keyRingFrom({ NYL_SECRETS_KEY: NEW });
const b = (unit, output) => ({ environment: 'dev', unit, output });

/** A seal of the first format (bound to `unit.output` alone), as state written before v2 holds it. */
function v1Seal(key, unit, output, value) {
  const k = Buffer.from(key, 'base64');
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', k, nonce);
  cipher.setAAD(Buffer.from(`${unit}.${output}`, 'utf8'));
  const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  const id = createHash('sha256').update(k).digest('hex').slice(0, 16);
  return ['aes256gcm:v1', id, nonce.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join(':');
}
const legacyDigest = (value) => `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}`;

const observedWith = (unit, sensitiveOutputs, outputs = {}) => ({
  uid: `uid-${unit}`,
  receipt: {
    run: `run-${unit}`,
    executionKey: `sha256:${unit}`,
    finishedAt: '2026-01-01T00:00:00Z',
    outputs,
    sensitiveOutputs,
    desired: { lifecycle: { state: 'active' } },
  },
});

test("after a rotation: old seals (v1 and v2) and old digests become the first key's, in v2 form; the value opens with the new key alone", () => {
  const observed = new Map([
    ['legacy', observedWith('legacy', { pw: { sha256: legacyDigest('p1'), sealed: v1Seal(OLD, 'legacy', 'pw', 'p1') } }, { url: 'u' })],
    ['keyed', observedWith('keyed', { token: { sha256: oldRing.digest(b('keyed', 'token'), { t: 2 }), sealed: oldRing.seal(b('keyed', 'token'), { t: 2 }) } })],
    ['plain', { uid: 'uid-plain', receipt: { ...observedWith('plain', undefined).receipt, sensitiveOutputs: undefined } }],
  ]);
  const out = resealObserved('dev', observed, rotating);
  assert.deepEqual(out.unopened, []);
  assert.equal(out.sealingKeyId, newRing.sealingKeyId);
  assert.deepEqual(out.resealed, ['keyed.token', 'legacy.pw']);
  assert.deepEqual(out.redigested, ['keyed.token', 'legacy.pw']);
  assert.equal(out.unchanged, 0);
  assert.deepEqual(out.kept, []);
  for (const [unit, output, value] of [
    ['legacy', 'pw', 'p1'],
    ['keyed', 'token', { t: 2 }],
  ]) {
    const record = out.observed.get(unit).receipt.sensitiveOutputs[output];
    assert.match(record.sealed, new RegExp(`^aes256gcm:v2:${newRing.sealingKeyId}:`));
    assert.equal(keyIdOf(record.sha256), newRing.sealingKeyId);
    assert.deepEqual(newRing.open(b(unit, output), record.sealed), { ok: true, value });
    assert.deepEqual(newRing.verify(b(unit, output), value, record.sha256), { ok: true });
  }
  assert.deepEqual(out.observed.get('legacy').receipt.outputs, { url: 'u' }, 'plain outputs stay');
  assert.equal(out.observed.get('plain'), observed.get('plain'), 'a document without sensitive outputs is the same object');
  assert.equal(observed.get('keyed').receipt.sensitiveOutputs.token.sealed.split(':')[2], oldRing.sealingKeyId, 'the input is not changed');
});

test('a record sealed and digested by the first key in v2 form is left alone; a current seal with an old digest gets a new digest only', () => {
  const current = { sha256: newRing.digest(b('a', 'x'), 'va'), sealed: newRing.seal(b('a', 'x'), 'va') };
  const oldDigest = { sha256: legacyDigest('vb'), sealed: newRing.seal(b('b', 'y'), 'vb') };
  const observed = new Map([
    ['a', observedWith('a', { x: current })],
    ['b', observedWith('b', { y: oldDigest })],
  ]);
  const out = resealObserved('dev', observed, rotating);
  assert.equal(out.unchanged, 1);
  assert.deepEqual(out.resealed, ['b.y']);
  assert.deepEqual(out.redigested, ['b.y']);
  assert.equal(out.observed.get('a'), observed.get('a'), 'unchanged: the same document');
  const y = out.observed.get('b').receipt.sensitiveOutputs.y;
  assert.equal(y.sealed, oldDigest.sealed, 'a current seal is not made again');
  assert.equal(keyIdOf(y.sha256), newRing.sealingKeyId);
  const again = resealObserved('dev', out.observed, rotating);
  assert.deepEqual([again.resealed, again.unchanged], [[], 2], 'a second reseal changes nothing');
});

test('an old seal with a digest of the first key is sealed again, its digest (what consumers cover) kept', () => {
  const record = { sha256: newRing.digest(b('a', 'x'), 'va'), sealed: oldRing.seal(b('a', 'x'), 'va') };
  const out = resealObserved('dev', new Map([['a', observedWith('a', { x: record })]]), rotating);
  assert.deepEqual([out.resealed, out.redigested], [['a.x'], []]);
  assert.equal(out.observed.get('a').receipt.sensitiveOutputs.x.sha256, record.sha256);
});

test("digests of values a backend keeps are listed with the key they need, never changed; the first key's count as unchanged", () => {
  const observed = new Map([
    [
      'tf',
      observedWith('tf', {
        old: { sha256: oldRing.digest(b('tf', 'old'), 'o') },
        legacy: { sha256: legacyDigest('l') },
        run: { sha256: 'execution:run-tf' },
        current: { sha256: newRing.digest(b('tf', 'current'), 'c') },
      }),
    ],
  ]);
  const out = resealObserved('dev', observed, rotating);
  assert.deepEqual(out.kept, [
    { unit: 'tf', output: 'legacy' },
    { unit: 'tf', output: 'old', keyId: oldRing.sealingKeyId },
    { unit: 'tf', output: 'run' },
  ]);
  assert.deepEqual([out.resealed, out.unchanged], [[], 1]);
  assert.equal(out.observed.get('tf'), observed.get('tf'));
});

test('a value no configured key opens is listed with the key that sealed it; so is every sealed value when no key is configured', () => {
  const observed = new Map([
    ['a', observedWith('a', { x: { sha256: oldRing.digest(b('a', 'x'), 1), sealed: oldRing.seal(b('a', 'x'), 1) } })],
    ['b', observedWith('b', { y: { sha256: legacyDigest(2), sealed: v1Seal(OLD, 'b', 'y', 2) } })],
  ]);
  const stranger = resealObserved('dev', observed, keyRingFrom({ NYL_SECRETS_KEY: STRANGER }));
  assert.deepEqual(
    stranger.unopened.map(({ unit, output, keyId }) => [unit, output, keyId]),
    [
      ['a', 'x', oldRing.sealingKeyId],
      ['b', 'y', oldRing.sealingKeyId],
    ],
  );
  assert.match(stranger.unopened[0].problem, /no configured key/);
  const none = resealObserved('dev', observed, keyRingFrom({}));
  assert.equal(none.unopened.length, 2);
  assert.equal(none.sealingKeyId, undefined);
  assert.match(none.unopened[0].problem, /no key is configured/);
  const moved = resealObserved('prod', observed, rotating);
  assert.deepEqual(
    moved.unopened.map((u) => u.unit),
    ['a'],
    'a v2 seal of another environment does not open (v1 is bound to unit.output only)',
  );
  assert.match(moved.unopened[0].problem, /altered or belongs to another/);
});

test('consumersOf: the units whose desired reads.secrets cover a re-digested output', () => {
  const reads = (unit, output) => ({ reads: { secrets: [{ pointer: '/env/T', unit, output, sha256: 'x' }] }, lifecycle: { state: 'active' } });
  const desired = new Map([
    ['c1', reads('s', 'token')],
    ['c2', reads('s', 'other')],
    ['c3', reads('t', 'token')],
    ['s', { lifecycle: { state: 'active' } }],
  ]);
  assert.deepEqual(consumersOf(desired, ['s.token', 't.token']), ['c1', 'c3']);
  assert.deepEqual(consumersOf(desired, []), []);
});
