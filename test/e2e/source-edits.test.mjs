// End-to-end over examples/shop in a real Git checkout: uncommitted edits to files the rendering
// reads are named by a warning of plan, reconcile and status (NYL-SOURCE-UNCOMMITTED), whose exit
// codes stay as they were, while an unrelated file warns nothing and --worktree nothing; once
// committed, the new migration runs migrate again, because the example declares the migrations
// as inputs (and its script names no path that inputs miss: no NYL-SOURCE-UNDECLARED-READ).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cleanupAll, git, makeBareRepo, tempDir } from '../support/git-fixtures.mjs';
import { codes, nyl } from '../support/cli.mjs';

after(cleanupAll);

const SHOP = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'examples', 'shop');

function shop() {
  const bare = makeBareRepo();
  const dir = path.join(tempDir('nyl-edits-'), 'shop');
  fs.cpSync(SHOP, dir, { recursive: true });
  const file = path.join(dir, 'nyl.yaml');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace('STATE_REPO_URL', pathToFileURL(bare).href));
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'shop');
  return dir;
}

function run(dir, args, exit) {
  const r = nyl(dir, [...args, '-o', 'json']);
  assert.equal(r.code, exit, `nyl ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
  return r;
}

const uncommitted = (r) => r.json.warnings.filter((w) => w.code === 'NYL-SOURCE-UNCOMMITTED');

test('examples/shop: uncommitted edits warn in plan, reconcile and status with unchanged exits; committed, the new migration runs migrate again', () => {
  const dir = shop();
  run(dir, ['state', 'init', '-e', 'dev'], 0);
  run(dir, ['reconcile', '-e', 'dev'], 0);
  const clean = run(dir, ['plan', '-e', 'dev'], 0);
  assert.deepEqual(codes(clean), [], 'a clean checkout of the example warns nothing');

  fs.writeFileSync(path.join(dir, 'migrations', '003-add-index.sql'), 'create index orders_customer on orders (customer);\n');
  fs.appendFileSync(path.join(dir, 'nyl.yaml'), '# an edit\n');
  fs.writeFileSync(path.join(dir, 'NOTES.md'), 'not read by any unit\n');
  for (const [args, ignored] of [
    [['plan', '-e', 'dev'], /this plan does not show them$/],
    [['reconcile', '-e', 'dev'], /this run did not apply them$/],
    [['status', '-e', 'dev'], /this status does not judge them$/],
  ]) {
    const r = run(dir, args, 0);
    const [w, ...more] = uncommitted(r);
    assert.equal(more.length, 0, args[0]);
    assert.ok(w, `${args[0]} warns NYL-SOURCE-UNCOMMITTED: ${r.stdout}`);
    assert.deepEqual(
      w.data.changes.map((c) => `${c.path} ${c.change}`).sort(),
      ['migrations/003-add-index.sql added', 'nyl.yaml changed'],
      `${args[0]}: the files it reads, not NOTES.md`,
    );
    assert.match(w.message, ignored);
  }
  const text = nyl(dir, ['plan', '-e', 'dev']);
  assert.match(
    text.stdout + text.stderr,
    /warning NYL-SOURCE-UNCOMMITTED\n.*\n  fix: commit them: `git add -A -- nyl\.yaml migrations\/003-add-index\.sql && git commit`; or .*`nyl plan -e dev --worktree`/,
  );

  const preview = run(dir, ['plan', '-e', 'dev', '--worktree'], 2);
  assert.deepEqual(uncommitted(preview), [], '--worktree renders the working files: nothing to warn');
  assert.equal(preview.json.units.migrate.result, 'execute');

  git(dir, 'add', '-A', '--', 'nyl.yaml', 'migrations');
  git(dir, 'commit', '-q', '-m', 'a migration');
  const planned = run(dir, ['plan', '-e', 'dev'], 2);
  assert.deepEqual(codes(planned), [], 'committed: nothing to warn (NOTES.md is read by no unit)');
  assert.deepEqual(
    Object.entries(planned.json.units)
      .filter(([, u]) => u.result !== 'current')
      .map(([n]) => n)
      .sort(),
    ['migrate', 'smoke-test'],
  );
  const applied = run(dir, ['reconcile', '-e', 'dev'], 0);
  assert.equal(applied.json.units.migrate.result, 'executed');
});
