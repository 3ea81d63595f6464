// `nyl state reseal` in process: after a key rotation (the new key first, the old one after it),
// every sealed value of the observed state is sealed again with the new key in the current form
// and its digest made again with it, in one observed commit under the lease; the desired branch
// does not move. The consumers of a re-digested output execute once on the next reconcile (their
// execution keys cover the digest), then everything is current with the new key alone. A value
// no key opens refuses the whole reseal before anything is written; digests of values a backend
// keeps are left and reported, with the key they need, until their unit executes again.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createCipheriv, createHash, randomBytes } from 'node:crypto';
import YAML from 'yaml';
import { receipt, secret } from '../fakes/driver.mjs';
import { canonicalJson } from '../../dist/util/canonical-json.js';
import { keyIdOf, keyRingFrom } from '../../dist/util/sealed.js';
import { World } from './world.mjs';

const SECRET = 'hunter2-s3cr3t-value';
const OLD = Buffer.alloc(32, 11).toString('base64');
const NEW = Buffer.alloc(32, 12).toString('base64');
const STRANGER = Buffer.alloc(32, 13).toString('base64');
const idOf = (key) => keyRingFrom({ NYL_SECRETS_KEY: key }).sealingKeyId;
const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const TOKEN_REF = '${{ units.s.outputs.token }}';
const UNITS = [unit('s'), unit('c', { dependsOn: ['s'], env: { TOKEN: TOKEN_REF } }), unit('other')];

/** A world whose s seals a secret that c consumes, reconciled with the OLD key. */
async function rotatedWorld(options = {}) {
  const world = await World.create({ units: UNITS, apply: { s: receipt({ token: secret(SECRET) }) }, processEnv: { NYL_SECRETS_KEY: OLD }, ...options });
  await world.process('init').run('state init');
  const first = await world.process('first').run('reconcile');
  assert.equal(first.code, 0, JSON.stringify(first.report?.units));
  return world;
}

/** A process of the world with these keys (NYL_SECRETS_KEY, or the environment given). */
function withKeys(world, name, env) {
  const p = world.process(name);
  p.rt.env = typeof env === 'string' ? { NYL_SECRETS_KEY: env } : env;
  return p;
}

const token = (world) => world.observedDoc('s').receipt.sensitiveOutputs.token;

/** The seal of the first format and the unkeyed digest, as state written before v2 holds them. */
function legacyRecord(key, unitName, output, value) {
  const k = Buffer.from(key, 'base64');
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', k, nonce);
  cipher.setAAD(Buffer.from(`${unitName}.${output}`, 'utf8'));
  const data = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  const sealed = ['aes256gcm:v1', idOf(key), nonce.toString('base64'), cipher.getAuthTag().toString('base64'), data.toString('base64')].join(':');
  return { sealed, sha256: `sha256:${createHash('sha256').update(canonicalJson(value)).digest('hex')}` };
}

describe('state reseal', () => {
  test('a rotation: one observed commit reseals every value with the new key in v2 form; the consumer runs once, then all is current with the new key alone', async () => {
    const world = await rotatedWorld();
    try {
      assert.equal(keyIdOf(token(world).sealed), idOf(OLD));
      const before = world.stateRefs();
      const counts = world.counts();
      const r = await withKeys(world, 'resealer', `${NEW},${OLD}`).run('state reseal', { reason: 'rotate the key' });
      assert.equal(r.code, 0, JSON.stringify(r.report ?? r.codes));
      assert.equal(r.report.result, 'done');
      assert.equal(r.report.operation, 'state-reseal');
      assert.deepEqual(r.report.details.resealed, ['s.token']);
      assert.deepEqual(r.report.details.kept, []);
      assert.equal(r.report.details.unchanged, 0);
      assert.deepEqual(r.report.details.consumersToRun, ['c']);
      assert.equal(r.report.details.sealingKey, idOf(NEW));
      assert.deepEqual(
        r.report.notes.map((n) => n.code),
        ['NYL-RESEAL-CONSUMERS'],
      );
      assert.match(r.report.notes[0].fix, /`nyl reconcile -e dev`/);

      const after = world.stateRefs();
      assert.equal(after.desired, before.desired, 'the desired branch does not move');
      assert.equal(r.report.observed, after.observed);
      const [tipCommit] = world.repo.commitsOf(after.observed);
      assert.equal(tipCommit.parents[0], before.observed, 'one commit on the observed branch');
      assert.match(tipCommit.message, /^nyl: state-reseal dev \(s\)\n/);
      assert.match(token(world).sealed, new RegExp(`^aes256gcm:v2:${idOf(NEW)}:`));
      assert.equal(keyIdOf(token(world).sha256), idOf(NEW));
      assert.deepEqual(world.counts(), counts, 'nothing executed');
      assert.equal(world.refs()[world.leaseRef], undefined, 'the lease is released');

      const next = await withKeys(world, 'new-only', NEW).run('reconcile');
      assert.equal(next.code, 0, JSON.stringify(next.report.units));
      assert.deepEqual([next.report.units.s.result, next.report.units.c.result, next.report.units.other.result], ['current', 'executed', 'current']);
      assert.equal(world.driver.callsOf('c').at(-1).rendering.env.TOKEN, SECRET, 'the consumer got the value the new key opened');
      const quiet = await withKeys(world, 'quiet', NEW).run('reconcile');
      assert.deepEqual(
        Object.values(quiet.report.units).map((u) => u.result),
        ['current', 'current', 'current'],
      );
      assert.deepEqual(world.counts(), { ...counts, c: counts.c + 1 }, 'the rotation cost one execution of the consumer');

      const settled = world.refs();
      const again = await withKeys(world, 'again', NEW).run('state reseal');
      assert.equal(again.report.result, 'unchanged');
      assert.equal(again.report.details.unchanged, 1);
      assert.deepEqual(
        again.report.notes.map((n) => n.code),
        ['NYL-UNCHANGED'],
      );
      assert.deepEqual(world.refs(), settled, 'no commit, no lease taken');
    } finally {
      world.cleanup();
    }
  });

  test('legacy state: a v1 seal with an unkeyed digest becomes a v2 seal of the first key with its keyed digest', async () => {
    const world = await rotatedWorld();
    try {
      const file = 'units/s.yaml';
      const stored = YAML.parse(world.text(world.loc.observedRef, file));
      stored.receipt.sensitiveOutputs.token = legacyRecord(OLD, 's', 'token', SECRET);
      world.edit(world.loc.observedRef, { [file]: YAML.stringify(stored) });
      const r = await withKeys(world, 'resealer', `${NEW},${OLD}`).run('state reseal');
      assert.deepEqual([r.report.result, r.report.details.resealed], ['done', ['s.token']]);
      assert.match(token(world).sealed, new RegExp(`^aes256gcm:v2:${idOf(NEW)}:`));
      assert.match(token(world).sha256, new RegExp(`^hmac-sha256:${idOf(NEW)}:`));
      const next = await withKeys(world, 'new-only', NEW).run('reconcile');
      assert.equal(next.report.units.c.result, 'executed', JSON.stringify(next.report.units.c));
      assert.equal(world.driver.callsOf('c').at(-1).rendering.env.TOKEN, SECRET);
    } finally {
      world.cleanup();
    }
  });

  test('a value no configured key opens refuses the whole reseal before the lease: nothing is written, the error names unit, output and key', async () => {
    const world = await rotatedWorld();
    try {
      const refs = world.refs();
      const r = await withKeys(world, 'stranger', STRANGER).run('state reseal');
      assert.equal(r.code, 1);
      assert.deepEqual(r.codes, ['NYL-RESEAL-UNOPENED']);
      const [d] = r.error.diagnostics;
      assert.deepEqual(d.units, ['s']);
      assert.match(d.message, /s\.token/);
      assert.match(d.fix, new RegExp(`key id ${idOf(OLD)}`));
      assert.match(d.fix, /`nyl state reseal -e dev`/);
      assert.deepEqual(world.refs(), refs, 'no ref moved, no lease taken');
      const keyless = await withKeys(world, 'keyless', {}).run('state reseal');
      assert.deepEqual(keyless.codes, ['NYL-RESEAL-UNOPENED']);
      assert.deepEqual(world.refs(), refs);
    } finally {
      world.cleanup();
    }
  });

  test('a cancelled run not imported yet refuses the reseal (its checkpoints keep old-key seals): nothing is written; once imported, the reseal covers them', async () => {
    const world = await rotatedWorld();
    try {
      // A run under the old key executes a new s and is cancelled while c runs: it releases the
      // lease, and s's checkpoint, sealed with the old key, waits in its run ref.
      await world.setUnits([unit('s', { version: '2' }), { ...UNITS[1], version: '2' }, UNITS[2]]);
      world.driver.reset();
      const release = world.driver.hold('c');
      const holder = withKeys(world, 'holder', OLD);
      const run = holder.start('reconcile');
      await world.driver.whenCalled('c');
      holder.cancel();
      await run.done;
      release();
      const [dead] = world.runRefs();
      assert.ok(world.receiptsIn(dead).includes('s'), JSON.stringify(world.receiptsIn(dead)));
      assert.equal(world.refs()[world.leaseRef], undefined, 'the cancelled run released the lease');

      const refs = world.refs();
      const r = await withKeys(world, 'resealer', `${NEW},${OLD}`).run('state reseal');
      assert.equal(r.code, 1, JSON.stringify(r.report ?? r.codes));
      assert.deepEqual(r.codes, ['NYL-RESEAL-RUNS-UNIMPORTED']);
      const [d] = r.error.diagnostics;
      assert.deepEqual(d.data, { runs: [dead] });
      assert.match(d.fix, /`nyl reconcile -e dev`/);
      assert.match(d.fix, /`nyl recover -e dev`/);
      assert.match(d.fix, /then `nyl state reseal -e dev`/);
      assert.deepEqual(world.refs(), refs, 'no ref moved, no lease taken');

      // The import (c, cancelled while it ran, is left uncertain: that is recover's business).
      await withKeys(world, 'importer', `${NEW},${OLD}`).run('reconcile');
      assert.deepEqual(world.runRefs(), [], 'the cancelled run is imported');
      assert.equal(keyIdOf(token(world).sealed), idOf(OLD), "the imported receipt of s keeps the old key's seal");
      const resealed = await withKeys(world, 'resealer-2', `${NEW},${OLD}`).run('state reseal');
      assert.deepEqual([resealed.code, resealed.report.details.resealed], [0, ['s.token']], JSON.stringify(resealed.report ?? resealed.codes));
      assert.match(token(world).sealed, new RegExp(`^aes256gcm:v2:${idOf(NEW)}:`));
    } finally {
      world.cleanup();
    }
  });

  test('a reseal with nothing to change still refuses a dead run not imported yet, before the lease: its import would bring back old-key seals', async () => {
    // converge: the --reapply runs s at once, without an approval.
    const world = await rotatedWorld({ units: [unit('s', { recovery: 'converge' }), ...UNITS.slice(1)] });
    try {
      assert.equal((await withKeys(world, 'resealer', `${NEW},${OLD}`).run('state reseal')).report.result, 'done');
      const victim = withKeys(world, 'victim', OLD).crashAt('after-checkpoint-push', { unit: 's' });
      assert.ok((await victim.start('reconcile', { units: ['s'], reapply: true, reason: 'a new token' }).outcome).died);
      await world.clock.advance(6 * 60_000);
      const refs = world.refs();
      const r = await withKeys(world, 'again', `${NEW},${OLD}`).run('state reseal');
      assert.deepEqual([r.code, r.codes], [1, ['NYL-RESEAL-RUNS-UNIMPORTED']]);
      assert.deepEqual(world.refs(), refs, 'no ref moved, no lease taken');
    } finally {
      world.cleanup();
    }
  });

  test("a digest of a value its backend keeps is left and reported with the key it needs; the unit's --reapply digests it again", async () => {
    const readOutputs = () => ({ result: 'read', outputs: { token: { value: SECRET, sensitive: true } } });
    // converge, as a module's units are: a --reapply runs it without an approval.
    const world = await rotatedWorld({ driver: { readOutputs }, units: [unit('s', { recovery: 'converge' }), ...UNITS.slice(1)] });
    try {
      assert.deepEqual(Object.keys(token(world)), ['sha256']);
      const refs = world.refs();
      const r = await withKeys(world, 'resealer', `${NEW},${OLD}`).run('state reseal');
      assert.equal(r.code, 0);
      assert.equal(r.report.result, 'unchanged');
      assert.deepEqual(r.report.details.kept, [{ unit: 's', output: 'token', keyId: idOf(OLD) }]);
      const kept = r.report.warnings.find((w) => w.code === 'NYL-RESEAL-KEPT');
      assert.ok(kept, JSON.stringify(r.report.warnings));
      assert.match(kept.message, new RegExp(`keep key ${idOf(OLD)} in the ring`));
      assert.equal(
        kept.fix,
        'make them execute again with `nyl reconcile -e dev --unit s --reapply --reason "<why>"`: their new receipts digest the values with the first key',
      );
      assert.deepEqual(world.refs(), refs, 'nothing to write: no commit');

      const reapplied = await withKeys(world, 'reapply', `${NEW},${OLD}`).run('reconcile', { units: ['s'], reapply: true, reason: 'digest with the new key' });
      assert.equal(reapplied.report.units.s.result, 'executed', JSON.stringify(reapplied.report.units));
      assert.equal(keyIdOf(token(world).sha256), idOf(NEW));
      const clean = await withKeys(world, 'clean', NEW).run('state reseal');
      assert.deepEqual([clean.report.result, clean.report.details.kept, clean.report.warnings], ['unchanged', [], []]);
    } finally {
      world.cleanup();
    }
  });

  test('a key file group or others can read warns NYL-SECRETS-KEY-FILE-OPEN with chmod 600 as its fix; mode 0600 does not', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-keyfile-'));
    const file = path.join(dir, 'keys');
    fs.writeFileSync(file, `${NEW}\n${OLD}\n`);
    fs.chmodSync(file, 0o644);
    const world = await rotatedWorld();
    try {
      const open = await withKeys(world, 'open', { NYL_SECRETS_KEY_FILE: file }).run('state reseal');
      assert.equal(open.code, 0);
      const w = open.report.warnings.find((x) => x.code === 'NYL-SECRETS-KEY-FILE-OPEN');
      assert.ok(w, JSON.stringify(open.report.warnings));
      assert.equal(w.fix, `chmod 600 ${file}`);
      fs.chmodSync(file, 0o600);
      const closed = await withKeys(world, 'closed', { NYL_SECRETS_KEY_FILE: file }).run('state reseal');
      assert.deepEqual(
        closed.report.warnings.map((x) => x.code),
        [],
      );
    } finally {
      world.cleanup();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
