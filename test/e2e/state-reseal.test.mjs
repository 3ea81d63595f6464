// End-to-end: a key rotation with `nyl state reseal`, through the built CLI and a file:// state
// repository. A Command producer seals a token that a consumer reads through its environment;
// with the new key first and the old one after it, one reseal commit seals every value with the
// new key (v2 form, bound to the environment) and digests it with it; then the new key alone is
// enough: the consumer executes once (its execution key covers the digest), then everything is
// current. A reseal with only an unrelated key refuses and writes nothing. A key file group or
// others can read warns in reconcile, plan, verify and reseal; one of mode 0600 does not.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll, git, tempDir } from '../support/git-fixtures.mjs';
import { nyl } from '../support/cli.mjs';
import { logLines, reconcile, refsUnder, results, setup, stateCounts } from '../support/reconcile-helpers.mjs';
import { describe as show, observedDoc } from '../support/hold-helpers.mjs';

after(cleanupAll);

const VALUE = 't0k3n-value';
const OLD = Buffer.alloc(32, 21).toString('base64');
const NEW = Buffer.alloc(32, 22).toString('base64');
const STRANGER = Buffer.alloc(32, 23).toString('base64');

/** The id of a key, as seals and digests name it: the first 16 hex digits of its sha256. */
const idOf = (key) => createHash('sha256').update(Buffer.from(key, 'base64')).digest('hex').slice(0, 16);

/** s seals a token; c checks it got the value through its environment; other reads nothing. */
const units = (log) => ({
  s: `script: 'echo s >> ${log}; printf "{\\"token\\": {\\"value\\": \\"${VALUE}\\", \\"sensitive\\": true}}" > "$NYL_OUTPUTS"'`,
  c: `env: {TOKEN: "\${{ units.s.outputs.token }}"}\nscript: 'test "$TOKEN" = "${VALUE}" && echo c >> ${log}'`,
  other: `script: 'echo other >> ${log}'`,
});

/** A project reconciled with the OLD key: s, c and other ran once. */
function rotated() {
  const ctx = setup(units);
  const r = reconcile(ctx.project, [], { env: { NYL_SECRETS_KEY: OLD } });
  assert.equal(r.code, 0, show(r));
  assert.deepEqual(logLines(ctx.log, { clear: true }).sort(), ['c', 'other', 's']);
  return ctx;
}

function reseal(ctx, keys, args = []) {
  return nyl(ctx.project, ['state', 'reseal', '-e', 'dev', ...args], { env: typeof keys === 'string' ? { NYL_SECRETS_KEY: keys } : keys });
}

/** Every sealed value and digest on the observed branch's tip, by unit.output. */
function sealsOf(bare) {
  const out = {};
  for (const file of git(bare, 'ls-tree', '--name-only', 'refs/heads/nyl/dev/observed', 'units/').split('\n').filter(Boolean)) {
    const unit = path.basename(file, '.yaml');
    for (const [output, record] of Object.entries(observedDoc(bare, unit).receipt?.sensitiveOutputs ?? {})) out[`${unit}.${output}`] = record;
  }
  return out;
}

test('a rotation: one reseal commit puts every seal under the new key in v2 form; with the new key alone the consumer runs once, then all is current', () => {
  const ctx = rotated();
  const oldSeal = sealsOf(ctx.bare)['s.token'];
  assert.match(oldSeal.sealed, new RegExp(`^aes256gcm:v2:${idOf(OLD)}:`));
  const before = stateCounts(ctx.bare);

  const r = reseal(ctx, `${NEW},${OLD}`, ['--reason', 'yearly rotation', '-o', 'json']);
  assert.equal(r.code, 0, show(r));
  assert.equal(r.json.result, 'done');
  assert.deepEqual(r.json.details.resealed, ['s.token']);
  assert.deepEqual(r.json.details.consumersToRun, ['c']);
  const resealCommits = { desired: stateCounts(ctx.bare).desired - before.desired, observed: stateCounts(ctx.bare).observed - before.observed };
  assert.deepEqual(resealCommits, { desired: 0, observed: 1 }, 'one commit, on the observed branch');
  assert.equal(r.json.observed, git(ctx.bare, 'rev-parse', 'refs/heads/nyl/dev/observed'));
  assert.match(git(ctx.bare, 'log', '-1', '--format=%B', 'refs/heads/nyl/dev/observed'), /Nyl-Reason: yearly rotation/);
  const seals = sealsOf(ctx.bare);
  assert.deepEqual(Object.keys(seals), ['s.token']);
  for (const record of Object.values(seals)) {
    assert.match(record.sealed, new RegExp(`^aes256gcm:v2:${idOf(NEW)}:`));
    assert.match(record.sha256, new RegExp(`^hmac-sha256:${idOf(NEW)}:[0-9a-f]{64}$`));
  }

  const next = reconcile(ctx.project, ['-o', 'json'], { env: { NYL_SECRETS_KEY: NEW } });
  assert.equal(next.code, 0, show(next));
  assert.deepEqual(results(next.json), { s: 'current', c: 'executed', other: 'current' });
  assert.deepEqual(logLines(ctx.log, { clear: true }), ['c'], 'the consumer ran once, with the value the new key opened');
  const quiet = reconcile(ctx.project, ['-o', 'json'], { env: { NYL_SECRETS_KEY: NEW } });
  assert.deepEqual(results(quiet.json), { s: 'current', c: 'current', other: 'current' });
  assert.deepEqual(logLines(ctx.log), []);

  const refs = refsUnder(ctx.bare);
  const again = reseal(ctx, NEW);
  assert.equal(again.code, 0, show(again));
  assert.match(again.stdout, /^state-reseal dev: unchanged/m);
  assert.match(again.stdout, /note NYL-UNCHANGED/);
  assert.deepEqual(refsUnder(ctx.bare), refs, 'nothing to reseal: no commit');
});

test('the text of a reseal names what it resealed and that the consumers execute once', () => {
  const ctx = rotated();
  const r = reseal(ctx, `${NEW},${OLD}`);
  assert.equal(r.code, 0, show(r));
  assert.match(r.stdout, /^state-reseal dev: done/m);
  assert.match(r.stdout, /resealed:\n\s+- s\.token/);
  assert.match(r.stdout, /^note NYL-RESEAL-CONSUMERS \(c\)/m);
  assert.match(r.stdout, /executes? once on the next reconcile/);
});

test('a reseal with only an unrelated key refuses, naming the unit, the output and the key it needs, and writes nothing', () => {
  const ctx = rotated();
  const refs = refsUnder(ctx.bare);
  const r = reseal(ctx, STRANGER, ['-o', 'json']);
  assert.equal(r.code, 1, show(r));
  assert.equal(r.json.result, 'refused');
  const [error] = r.json.errors;
  assert.equal(error.code, 'NYL-RESEAL-UNOPENED');
  assert.deepEqual(error.units, ['s']);
  assert.match(error.message, /s\.token/);
  assert.match(error.fix, new RegExp(`key id ${idOf(OLD)}`));
  assert.deepEqual(refsUnder(ctx.bare), refs, 'no ref moved');
});

test('a key file group or others can read warns NYL-SECRETS-KEY-FILE-OPEN in reconcile, plan, verify and reseal; mode 0600 does not', () => {
  const ctx = rotated();
  const file = path.join(tempDir('nyl-keys-'), 'keys');
  fs.writeFileSync(file, `${OLD}\n`);
  const runs = () => [
    reconcile(ctx.project, ['-o', 'json'], { env: { NYL_SECRETS_KEY_FILE: file } }),
    nyl(ctx.project, ['plan', '-e', 'dev', '-o', 'json'], { env: { NYL_SECRETS_KEY_FILE: file } }),
    nyl(ctx.project, ['verify', '-e', 'dev', '-o', 'json'], { env: { NYL_SECRETS_KEY_FILE: file } }),
    reseal(ctx, { NYL_SECRETS_KEY_FILE: file }, ['-o', 'json']),
  ];
  fs.chmodSync(file, 0o644);
  for (const r of runs()) {
    assert.equal(r.code, 0, show(r));
    const w = r.json.warnings.find((d) => d.code === 'NYL-SECRETS-KEY-FILE-OPEN');
    assert.ok(w, show(r));
    assert.equal(w.fix, `chmod 600 ${file}`);
  }
  const text = reconcile(ctx.project, [], { env: { NYL_SECRETS_KEY_FILE: file } });
  assert.match(text.stdout, /^warning NYL-SECRETS-KEY-FILE-OPEN/m);
  fs.chmodSync(file, 0o600);
  for (const r of runs()) {
    assert.equal(r.code, 0, show(r));
    assert.deepEqual(
      r.json.warnings.map((d) => d.code),
      [],
      show(r),
    );
  }
  assert.ok(
    !git(ctx.bare, 'cat-file', '--batch-all-objects', '--batch', '--unordered').includes(file),
    "the key file's path is in no object of the state repository",
  );
});
