// The newcomer's walk, as one test: what someone who just found this repository does first.
// 1. A fresh clone of this repository's HEAD (`git clone` into a temp dir: committed files only,
//    so a file that is not committed, or a build artefact the docs rely on, fails here first).
// 2. README's install step, `npm ci`, with one substitution: the clone's node_modules is a symlink
//    to this repository's instead of a download (no network, and seconds instead of a minute);
//    the clone then builds itself with `npm run build`, which is what `npm ci`'s prepare script runs.
// 3. README's first command, the rest of the first line of its first block after `npm ci &&` (the
//    quickstart: a real example reconciled against a state repository on this machine).
// 4. The clone's docs/tutorial.md end to end with the clone's bin/nyl (test/support/doc-run.mjs,
//    the runner of test/e2e/doc-examples.test.mjs).
// It prints each step's time and the time from the fresh clone to the end of the tutorial.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanupAll, git, hermeticEnv, tempDir } from '../support/git-fixtures.mjs';
import { fencedBlocks } from '../support/doc-blocks.mjs';
import { assertPageRan, runPage } from '../support/doc-run.mjs';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

after(cleanupAll);

/** README's first command without its `npm ci && ` (step 2 stands in for it). */
function readmeFirstCommand(readme) {
  const first = fencedBlocks(readme)[0].body[0].replace(/\s+#.*$/, '');
  assert.match(first, /^npm ci && /, `README's first command installs first: ${first}`);
  return first.slice('npm ci && '.length);
}

function timed(what, run) {
  const started = Date.now();
  const r = run();
  return { ...r, what, ms: Date.now() - started };
}

/** Runs a command line in dir; fails with its output when it exits other than 0. */
function sh(dir, line, env) {
  const r = spawnSync('bash', ['-c', line], { cwd: dir, env, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.status, 0, `\`${line}\` in the fresh clone exited ${r.status}:\n${r.stdout}${r.stderr}`);
  return r;
}

test("a newcomer's walk: a fresh clone, README's first command, then the tutorial end to end", (t) => {
  const head = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  if (head.status !== 0 || !fs.existsSync(path.join(ROOT, 'node_modules'))) {
    t.skip('needs this repository as a Git checkout with node_modules installed');
    return;
  }
  const clone = path.join(tempDir('nyl-newcomer-'), 'nyl');
  const env = hermeticEnv({ NYL_CACHE_DIR: path.join(path.dirname(clone), 'cache'), NO_COLOR: '1' });
  const steps = [];
  steps.push(
    timed('clone', () => {
      git(ROOT, 'clone', '--quiet', '--no-checkout', ROOT, clone);
      git(clone, 'checkout', '--quiet', '--detach', head.stdout.trim());
      fs.symlinkSync(path.join(ROOT, 'node_modules'), path.join(clone, 'node_modules'));
      return {};
    }),
  );
  steps.push(timed('npm run build', () => sh(clone, 'npm run --silent build', env)));
  const first = readmeFirstCommand(fs.readFileSync(path.join(clone, 'README.md'), 'utf8'));
  const quickstart = timed(first, () => sh(clone, first, env));
  steps.push(quickstart);
  // The example ran for real: both reconciles and the status, against its state repository.
  assert.match(quickstart.stdout, /==> nyl reconcile -e dev[\s\S]*==> nyl reconcile -e dev[\s\S]*==> nyl status -e dev/);
  assert.match(quickstart.stdout, /\nDone\./);

  const tutorial = timed('docs/tutorial.md', () => runPage(clone, 'docs/tutorial.md'));
  steps.push(tutorial);
  assert.deepEqual(tutorial.skipped, [], 'the tutorial skips none of its blocks');
  assert.ok(tutorial.steps.length >= 20, `the clone's tutorial has its examples (${tutorial.steps.length} steps)`);
  assertPageRan('docs/tutorial.md (fresh clone)', tutorial);

  const total = steps.reduce((sum, s) => sum + s.ms, 0);
  process.stdout.write(
    `# newcomer's walk: ${steps.map((s) => `${s.what} ${(s.ms / 1000).toFixed(1)} s`).join(', ')}; ` +
      `${(total / 1000).toFixed(1)} s from the fresh clone to the end of the tutorial (${tutorial.steps.length} commands)\n`,
  );
});
