// End-to-end: the sealing key is Nyl's alone. Pins: NYL_SECRETS_KEY and NYL_SECRETS_KEY_FILE were
// in every tool's environment, so a unit that printed its environment and failed wrote the key
// into condition.output on the observed branch, next to the seals it opens.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll, git, tempDir } from '../support/git-fixtures.mjs';
import { changeUnits, logLines, reconcile, setup } from '../support/reconcile-helpers.mjs';

after(cleanupAll);

const KEY = Buffer.alloc(32, 7).toString('base64');
const OTHER = Buffer.alloc(32, 9).toString('base64');

/** Every object of the repository, as text: where a key written to Git would be. */
function allObjects(repo) {
  return git(repo, 'cat-file', '--batch-all-objects', '--batch', '--unordered');
}

test('no tool gets the key variables; a key a tool found anyway is masked in what Nyl prints and keeps', () => {
  const dir = tempDir('nyl-key-');
  const keyFile = path.join(dir, 'keys');
  fs.writeFileSync(keyFile, `# ring\n${OTHER}\n`, { mode: 0o600 });
  const leaked = path.join(dir, 'leaked');
  fs.writeFileSync(leaked, KEY);
  const ctx = setup((log) => ({
    printer: `script: 'env >> ${log}; env; echo "found $(cat ${leaked})"; exit 1'`,
  }));
  const r = reconcile(ctx.project, ['-o', 'json'], { env: { NYL_SECRETS_KEY: KEY, NYL_SECRETS_KEY_FILE: keyFile } });
  assert.equal(r.code, 3, r.stderr);
  const env = logLines(ctx.log);
  assert.ok(
    env.some((l) => l.startsWith('NYL_UNIT=printer')),
    'the tool printed its environment',
  );
  assert.deepEqual(
    env.filter((l) => l.startsWith('NYL_SECRETS_KEY')),
    [],
    'no key variable reached the tool',
  );
  assert.ok(!r.stderr.includes(KEY), 'the key the tool printed is masked on stderr');
  assert.match(r.stderr, /found \*\*\*/);
  const objects = allObjects(ctx.bare);
  assert.match(objects, /found \*\*\*/, 'the failure output reached the observed branch, masked');
  assert.ok(!objects.includes(KEY) && !objects.includes(OTHER), 'no key in any object of the state repository');
  assert.ok(!objects.includes(keyFile), "not even the key file's path");
});

// Pins: a producer that ran again, wrote a new sensitive value, printed it and failed put the
// value on the observed branch in plain text (its condition's output). The outputs file it wrote
// is read after the failure to mask it, and recorded nowhere.
test("a failing producer's new sensitive value, from its outputs file, is masked in what Nyl keeps", () => {
  const NEW = 'r0tated-pa55word-2';
  const dir = tempDir('nyl-rotate-');
  // The values come from files outside the source: the rendering committed to state holds neither.
  fs.writeFileSync(path.join(dir, '1'), 'first-pa55word-1');
  fs.writeFileSync(path.join(dir, '2'), NEW);
  const producer = (round) => ({
    vault: [
      `env: {ROUND: "${round}"}`,
      'script: |',
      `  v=$(cat ${dir}/$ROUND)`,
      '  printf \'{"pw": {"value": "%s", "sensitive": true}}\' "$v" > "$NYL_OUTPUTS"',
      '  echo "password is now $v"',
      '  [ "$ROUND" = 1 ]',
    ].join('\n'),
  });
  const ctx = setup(() => producer(1));
  const env = { env: { NYL_SECRETS_KEY: KEY } };
  assert.equal(reconcile(ctx.project, ['-o', 'json'], env).code, 0);
  changeUnits(ctx, () => producer(2), 'round 2');
  const r = reconcile(ctx.project, ['-o', 'json'], env);
  assert.equal(r.code, 3, r.stderr);
  const objects = allObjects(ctx.bare);
  assert.match(objects, /password is now \*\*\*/, 'the line reached the condition, masked');
  assert.ok(!objects.includes(NEW), 'the new value is in no object');
  assert.ok(!objects.includes('first-pa55word-1'), 'nor the old one');
});
