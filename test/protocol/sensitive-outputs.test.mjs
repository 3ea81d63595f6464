// Sensitive outputs in process: a producer's sensitive output is sealed (or, for a driver that
// reads its outputs back from its own backend, kept as a digest), a consumer gets the value for
// its execution only, masked in every printed line, and no Git object ever holds it in plain text.

import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { receipt, secret } from '../fakes/driver.mjs';
import { World } from './world.mjs';
import { Journal } from './invariants.mjs';

const SECRET = 'hunter2-s3cr3t-value';
const unit = (name, extra = {}) => ({ name, dependsOn: [], ...extra });
const TOKEN_REF = '${{ units.s.outputs.token }}';

/** Every object of the state repository, every line the processes wrote and every file under `dirs` that holds the secret. */
function leaks(world, procs, dirs = []) {
  const found = [];
  for (const [oid, obj] of world.repo.objects) if (obj.content.includes(SECRET)) found.push(`${obj.type} ${oid}`);
  for (const p of procs) for (const line of p.lines) if (line.includes(SECRET)) found.push(`${p.name}: ${line}`);
  for (const dir of dirs) {
    for (const f of fs.readdirSync(dir, { recursive: true })) {
      const file = path.join(dir, f);
      if (fs.statSync(file).isFile() && fs.readFileSync(file, 'utf8').includes(SECRET)) found.push(file);
    }
  }
  return found;
}

/** A world whose unit s answers with a sensitive output; procs lists every process made with proc(). */
async function secretWorld(options = {}) {
  const world = await World.create({ units: [unit('s'), unit('slow')], apply: { s: receipt({ url: 'https://db', token: secret(SECRET) }) }, ...options });
  await world.process('init').run('state init');
  const procs = [];
  const proc = (name) => {
    const p = world.process(name);
    procs.push(p);
    return p;
  };
  return { world, procs, proc, journal: new Journal(world) };
}

/** The receipt keeps the plain output, and of the sensitive one its digest and its seal only. */
function assertSealed(receiptDoc) {
  assert.deepEqual(Object.keys(receiptDoc.sensitiveOutputs ?? {}), ['token'], JSON.stringify(receiptDoc));
  assert.match(receiptDoc.sensitiveOutputs.token.sha256, /^hmac-sha256:[0-9a-f]{16}:[0-9a-f]{64}$/, 'a keyed digest');
  assert.match(receiptDoc.sensitiveOutputs.token.sealed, /^aes256gcm:v2:/);
  assert.equal(receiptDoc.outputs.url, 'https://db');
  assert.equal(receiptDoc.outputs.token, undefined);
}

describe('sensitive outputs', () => {
  test('a sensitive output reaches Git only sealed: checkpointed, then imported by a takeover', async () => {
    const { world, procs, proc, journal } = await secretWorld();
    try {
      const releaseSlow = world.driver.hold('slow');
      const victim = proc('victim');
      const run = victim.start('reconcile');
      await world.until(() => world.runRefs().some((r) => world.receiptsIn(r).includes('s')), "s's checkpoint");
      victim.kill();
      await run.outcome;
      releaseSlow();
      journal.noteDeadRuns();
      await journal.leaseBreak(proc('operator'));
      const take = await proc('takeover').run('reconcile');
      assert.equal(take.report.units.s.result, 'imported');
      assertSealed(world.observedDoc('s').receipt);
      assert.deepEqual(leaks(world, procs), [], 'the secret is in no Git object and no line of output');
    } finally {
      world.cleanup();
    }
  });

  test('recover --accept of a late checkpoint keeps the sensitive output sealed', async () => {
    const { world, procs, proc, journal } = await secretWorld();
    try {
      const releaseS = world.driver.hold('s');
      const run = proc('holder').start('reconcile');
      await world.driver.whenCalled('s');
      const [holderRun] = journal.noteDeadRuns();
      await journal.leaseBreak(proc('operator'), 'looked dead');
      await proc('importer').run('recover');
      releaseS();
      await run.outcome;
      assert.equal(world.observedDoc('s').condition?.type, 'uncertain');
      const accepted = await proc('accepter').run('recover', { unit: 's', accept: holderRun, reason: 'checked by hand' });
      assert.equal(accepted.code, 0, JSON.stringify(accepted.report ?? accepted));
      const receiptDoc = world.observedDoc('s').receipt;
      assert.equal(receiptDoc.run, holderRun);
      assertSealed(receiptDoc);
      assert.deepEqual(leaks(world, procs), [], 'the secret is in no Git object and no line of output');
    } finally {
      world.cleanup();
    }
  });

  // Pins: a producer that ran again, printed its own value and failed wrote it to Git in plain
  // text (its condition's output), though Nyl held that value sealed and had the key; a new value
  // it wrote to its outputs file before failing was printed and kept the same way.
  test("a producer's own values are masked in what it keeps when it fails: its previous sealed value, and the new one its outputs file held", async () => {
    const NEW = 'n3w-r0tated-s3cret';
    const apply = {
      s: [
        receipt({ url: 'https://db', token: secret(SECRET) }),
        { result: 'failed', reason: 'rotation failed', retryable: true, unrecorded: receipt({ token: secret(NEW), url: 'https://db' }).outputs },
      ],
    };
    const toolOutput = { s: [`old token ${SECRET}`, `new token ${NEW}`, 'giving up'] };
    const { world, procs, proc } = await secretWorld({ apply, driver: { toolOutput } });
    try {
      assert.equal((await proc('first').run('reconcile')).code, 0);
      await world.setUnits([unit('s', { version: 'v2' }), unit('slow')]);
      const r = await proc('again').run('reconcile');
      assert.equal(r.report.units.s.result, 'failed');
      const kept = world.observedDoc('s').condition.output;
      assert.deepEqual(kept.slice(-3), ['old token ***', 'new token ***', 'giving up']);
      assert.deepEqual(
        leaks(world, procs).filter((l) => !l.includes(': ')),
        [],
        'no object of the state repository holds the old value',
      );
      for (const [, obj] of world.repo.objects) assert.ok(!obj.content.includes(NEW), 'nor the new one');
    } finally {
      world.cleanup();
    }
  });

  // Pins: without a key, a producer's tool ran again (rotating its password, say), then failed
  // because its new value could not be sealed: the value was lost, and the next run repeated it.
  test('a producer whose receipt holds sealed outputs fails before its tool runs when no key is configured; the fix names the key that sealed them', async () => {
    const { world, procs, proc } = await secretWorld();
    try {
      assert.equal((await proc('first').run('reconcile')).code, 0);
      const sealedBy = world.observedDoc('s').receipt.sensitiveOutputs.token.sealed.split(':')[2];
      await world.setUnits([unit('s', { version: 'v2' }), unit('slow')]);
      const keyless = proc('keyless');
      delete keyless.rt.env.NYL_SECRETS_KEY;
      const r = await keyless.run('reconcile');
      assert.equal(r.report.units.s.result, 'failed');
      assert.equal(r.report.units.s.code, 'NYL-SECRETS-KEY-MISSING');
      assert.match(r.report.units.s.detail, /it was not run/);
      assert.equal(world.driver.callsOf('s').length, 1, 'the tool did not run again');
      const warning = r.report.warnings.find((w) => w.code === 'NYL-SECRETS-KEY-MISSING');
      assert.match(warning?.fix ?? '', new RegExp(`configure the key that sealed .* \\(key id ${sealedBy}`));
      assert.doesNotMatch(warning.fix, /openssl rand/, 'not a new key: it would not open them');
      assert.ok(world.observedDoc('s').receipt, 'the receipt stays');
      assert.deepEqual(leaks(world, procs), []);
    } finally {
      world.cleanup();
    }
  });

  test('without a key, a unit with a sensitive output fails with NYL-SECRETS-KEY-MISSING and nothing is written in plain text', async () => {
    // Pins: the tool printed its new value and exited 0; the value could not be sealed, and the
    // lines kept for the failure's condition held it in plain text.
    const { world, procs, proc } = await secretWorld({ processEnv: {}, driver: { toolOutput: { s: [`made token ${SECRET}`] } } });
    try {
      const r = await proc('runner').run('reconcile');
      assert.equal(r.code, 3, JSON.stringify(r.report?.units));
      const s = r.report.units.s;
      assert.equal(s.result, 'failed');
      assert.equal(s.code, 'NYL-SECRETS-KEY-MISSING', JSON.stringify(s));
      assert.match(s.detail, /NYL_SECRETS_KEY/);
      assert.equal(world.observedDoc('s').condition.code, 'NYL-SECRETS-KEY-MISSING');
      assert.deepEqual(world.observedDoc('s').condition.output, ['made token ***'], 'the kept line is masked');
      const warning = r.report.warnings.find((w) => w.code === 'NYL-SECRETS-KEY-MISSING');
      assert.match(warning?.fix ?? '', /openssl rand -base64 32/, 'the failure brings its fix');
      assert.equal(r.report.units.slow.result, 'executed', 'a unit without secrets runs all the same');
      assert.equal(world.observedDoc('s').receipt, undefined);
      assert.deepEqual(
        leaks(world, procs).filter((l) => !l.includes(': ')),
        [],
        'no object holds it (the line was printed before Nyl knew the value)',
      );
      // Pins: the next run without a key ran the tool again (its effects repeated), and lost its value again.
      const again = await proc('again').run('reconcile');
      assert.equal(again.report.units.s.code, 'NYL-SECRETS-KEY-MISSING');
      assert.match(again.report.units.s.detail, /it was not run/);
      assert.equal(world.driver.callsOf('s').length, 1, 'known to need a key now: the tool did not run again');
    } finally {
      world.cleanup();
    }
  });

  test('a consumer gets the value through env for its execution only: the desired document keeps the reference, every printed line and log file masks it', async () => {
    const logDir = fs.mkdtempSync(path.join(os.tmpdir(), 'nyl-unit-logs-'));
    const seen = [];
    const consumer = (ctx) => {
      seen.push(ctx.rendering.env.TOKEN);
      ctx.toolOutput({ text: `connecting with ${ctx.rendering.env.TOKEN}`, bytes: Buffer.from(`connecting with ${ctx.rendering.env.TOKEN}\n`) });
      return receipt({ dsn: `postgres://app:${ctx.rendering.env.TOKEN}@db`, plain: 'ok' });
    };
    const units = [unit('s'), unit('c', { dependsOn: ['s'], env: { TOKEN: TOKEN_REF } })];
    const { world, procs, proc } = await secretWorld({ units, apply: { s: receipt({ token: secret(SECRET) }), c: consumer } });
    try {
      const r = await proc('runner').run('reconcile', { output: { quiet: false, logDir } });
      assert.equal(r.code, 0, JSON.stringify(r.report?.units));
      assert.deepEqual(seen, [SECRET], 'the driver saw the value');
      assert.equal(world.desiredDoc('c').rendering.env.TOKEN, TOKEN_REF, 'the committed rendering keeps the reference');
      const c = world.observedDoc('c').receipt;
      assert.deepEqual(c.outputs, { plain: 'ok' });
      assert.deepEqual(Object.keys(c.sensitiveOutputs), ['dsn'], 'an output holding a consumed secret becomes sensitive');
      assert.ok(
        procs[0].lines.some((l) => l.includes('connecting with ***')),
        procs[0].lines.join('\n'),
      );
      assert.deepEqual(leaks(world, procs, [logDir]), []);
    } finally {
      world.cleanup();
      fs.rmSync(logDir, { recursive: true, force: true });
    }
  });

  test('a changed sensitive value re-runs its consumer; an unchanged one does not', async () => {
    let value = SECRET;
    const units = [unit('s', { version: '1' }), unit('c', { dependsOn: ['s'], env: { TOKEN: TOKEN_REF } })];
    const { world, proc } = await secretWorld({ units, apply: { s: () => receipt({ token: secret(value) }) } });
    try {
      await proc('first').run('reconcile');
      await world.setUnits([unit('s', { version: '2' }), units[1]]);
      const same = await proc('same').run('reconcile');
      assert.equal(same.report.units.s.result, 'executed');
      assert.equal(same.report.units.c.result, 'current', JSON.stringify(same.report.units.c));
      value = `${SECRET}-rotated`;
      await world.setUnits([unit('s', { version: '3' }), units[1]]);
      const changed = await proc('changed').run('reconcile');
      assert.equal(changed.report.units.c.result, 'executed', JSON.stringify(changed.report.units.c));
      assert.equal(world.driver.callsOf('c').at(-1).rendering.env.TOKEN, value, 'the driver got the new value');
      assert.equal(world.desiredDoc('c').rendering.env.TOKEN, TOKEN_REF, 'the committed rendering still holds the reference');
    } finally {
      world.cleanup();
    }
  });

  test('a sensitive reference in a committed field that is not env is refused with a fix, and nothing runs', async () => {
    const units = [unit('s'), unit('c', { dependsOn: ['s'], run: ['deploy', '--token', TOKEN_REF] })];
    const { world, proc } = await secretWorld({ units });
    try {
      await proc('first').run('reconcile');
      const r = await proc('second').run('reconcile');
      assert.equal(r.report.units.c.result, 'blocked', JSON.stringify(r.report.units.c));
      assert.match(r.report.units.c.detail, /sensitive output token of s at \/run\/2/);
      const error = [...r.report.errors, ...r.report.warnings].find((d) => /sensitive/.test(d.message));
      assert.match(error?.fix ?? '', /environment/, JSON.stringify(r.report.errors));
      assert.equal(world.driver.callsOf('c').length, 0);
    } finally {
      world.cleanup();
    }
  });

  test('a driver that reads its outputs back keeps only the digest; its consumer gets the value from the backend', async () => {
    const readOutputs = () => ({ result: 'read', outputs: { token: { value: SECRET, sensitive: true } } });
    const seen = [];
    const units = [unit('s'), unit('c', { dependsOn: ['s'], env: { TOKEN: TOKEN_REF } })];
    const apply = { s: receipt({ token: secret(SECRET) }), c: (ctx) => (seen.push(ctx.rendering.env.TOKEN), receipt({})) };
    const { world, procs, proc } = await secretWorld({ units, apply, driver: { readOutputs }, processEnv: {} });
    try {
      const r = await proc('runner').run('reconcile');
      assert.equal(r.code, 0, JSON.stringify(r.report?.units));
      const token = world.observedDoc('s').receipt.sensitiveOutputs.token;
      assert.deepEqual(Object.keys(token), ['sha256'], 'no seal: the backend keeps the value');
      assert.equal(token.sha256, `execution:${world.observedDoc('s').receipt.run}`, 'without a key, nothing of the value: the execution that produced it');
      assert.deepEqual(seen, [SECRET]);
      assert.equal(world.driver.callsOf('s', 'readOutputs').length, 1);
      assert.deepEqual(leaks(world, procs), []);
    } finally {
      world.cleanup();
    }
  });

  test('a backend whose value no longer matches the keyed digest fails the consumer with NYL-SECRET-UNAVAILABLE', async () => {
    const readOutputs = () => ({ result: 'read', outputs: { token: { value: 'something-else', sensitive: true } } });
    const units = [unit('s'), unit('c', { dependsOn: ['s'], env: { TOKEN: TOKEN_REF } })];
    const { world, proc } = await secretWorld({ units, driver: { readOutputs } });
    try {
      const r = await proc('runner').run('reconcile');
      assert.equal(r.report.units.c.result, 'failed');
      assert.equal(r.report.units.c.code, 'NYL-SECRET-UNAVAILABLE', JSON.stringify(r.report.units.c));
      assert.equal(world.driver.callsOf('c').length, 0, 'the consumer never ran with a value it was not planned with');
    } finally {
      world.cleanup();
    }
  });
});
