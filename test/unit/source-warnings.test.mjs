// Warnings about source a rendering may miss, in process over a loaded project and a fake look
// at the working files (src/commands/shared/source-warnings.ts): NYL-SOURCE-UNCOMMITTED names
// the working files the rendering reads that differ from HEAD, asks Git only about those paths,
// and says nothing when the source is not HEAD (--worktree, another source ref: no
// workingChanges); NYL-SOURCE-UNDECLARED-READ names the source paths a script names that no
// inputs glob covers, with the glob to add.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { uncommittedWarnings, undeclaredReadWarnings } from '../../dist/commands/shared/source-warnings.js';
import { BUILTIN_DRIVERS } from '../../dist/drivers/registry.js';
import { loadProject } from '../../dist/project/load.js';
import { memoryTree } from '../support/memory-tree.mjs';

const COMMIT = 'c0ffee0000000000000000000000000000000001';

function nylYaml(migrateSpec) {
  return [
    'apiVersion: nyl.io/v1',
    'kind: Environment',
    'metadata: {name: dev}',
    '---',
    'apiVersion: nyl.io/v1',
    'kind: Command',
    'metadata: {name: migrate}',
    'spec:',
    ...migrateSpec,
    '---',
    'apiVersion: nyl.io/v1',
    'kind: Command',
    'metadata: {name: deploy}',
    'spec: {run: [./bin/deploy.sh]}',
  ].join('\n');
}

const MIGRATE = ['  script: |', '    for f in migrations/*.sql; do apply "$f"; done'];
const FILES = { 'migrations/001.sql': 'a', 'bin/deploy.sh': 'echo', 'README.md': 'hello' };

/** The project as loaded from root (default: the test's working directory, so that fixes name no directory). */
async function opened(migrateSpec, changes, root = process.cwd()) {
  const project = await loadProject(root, memoryTree({ ...FILES, 'nyl.yaml': nylYaml(migrateSpec) }));
  const asked = [];
  const o = { project, env: project.environments.get('dev'), sourceCommit: COMMIT, drivers: BUILTIN_DRIVERS };
  if (changes) {
    o.workingChanges = async (paths) => {
      asked.push(paths);
      return changes;
    };
  }
  return { o, asked };
}

test('NYL-SOURCE-UNCOMMITTED names the changed, added and deleted files the rendering reads, and only those', async () => {
  const changes = [
    { path: 'nyl.yaml', change: 'changed' },
    { path: 'bin/deploy.sh', change: 'deleted' },
    { path: 'migrations/002.sql', change: 'added' },
    { path: 'README.md', change: 'changed' },
  ];
  const { o, asked } = await opened(MIGRATE, changes);
  const [w, ...rest] = await uncommittedWarnings(o, 'plan');
  assert.equal(rest.length, 0);
  assert.equal(w.code, 'NYL-SOURCE-UNCOMMITTED');
  assert.equal(w.severity, 'warning');
  assert.match(w.message, /nyl\.yaml changed, bin\/deploy\.sh deleted, migrations\/002\.sql added; this plan does not show them$/);
  assert.doesNotMatch(w.message, /README/);
  assert.deepEqual(
    w.data.changes.map((c) => c.path),
    ['nyl.yaml', 'bin/deploy.sh', 'migrations/002.sql'],
  );
  assert.match(w.fix, /^commit them: `git add -A -- nyl\.yaml bin\/deploy\.sh migrations\/002\.sql && git commit`; .*`nyl plan -e dev --worktree`$/);
  assert.deepEqual(asked, [['bin/deploy.sh', 'migrations', 'nyl.yaml']], 'Git is asked once, about the paths the rendering reads');

  const [r] = await uncommittedWarnings(o, 'reconcile');
  assert.match(r.message, /this run did not apply them$/);
  assert.match(r.fix, /`nyl reconcile -e dev --worktree`$/);
  const [s] = await uncommittedWarnings(o, 'status');
  assert.match(s.fix, /`nyl plan -e dev --worktree`$/, 'status takes no --worktree: its fix previews with plan');
});

test('NYL-SOURCE-UNCOMMITTED: nothing when no file the rendering reads changed, or when the source is not HEAD', async () => {
  assert.deepEqual(await uncommittedWarnings((await opened(MIGRATE, [{ path: 'README.md', change: 'changed' }])).o, 'plan'), []);
  assert.deepEqual(await uncommittedWarnings((await opened(MIGRATE, undefined)).o, 'plan'), [], 'no look at the working files: --worktree or another source');
});

test('NYL-SOURCE-UNCOMMITTED caps the files it names', async () => {
  const changes = Array.from({ length: 30 }, (_, i) => ({ path: `migrations/${String(i).padStart(3, '0')}.sql`, change: 'added' }));
  const [w] = await uncommittedWarnings((await opened(MIGRATE, changes)).o, 'plan');
  assert.match(w.message, /30 files it reads differ/);
  assert.match(w.message, /migrations\/007\.sql added, and 22 more; /);
  assert.match(w.fix, /^commit them \(`git status` lists them\); /);
});

test('NYL-SOURCE-UNCOMMITTED run from another directory: git -C and the nyl command name the project directory', async () => {
  const root = path.join(process.cwd(), 'sub', 'dir with space');
  const [w] = await uncommittedWarnings((await opened(MIGRATE, [{ path: 'nyl.yaml', change: 'changed' }], root)).o, 'reconcile');
  assert.equal(
    w.fix,
    "commit them: `git -C 'sub/dir with space' add -A -- nyl.yaml && git -C 'sub/dir with space' commit`; or render the working files as they are: `nyl reconcile -e dev --worktree 'sub/dir with space'`",
  );
});

test('NYL-SOURCE-UNDECLARED-READ: a script naming migrations/*.sql without inputs, with the glob to add; none once declared', async () => {
  const plan = { units: new Map() };
  const { o } = await opened(MIGRATE);
  const [w, ...rest] = undeclaredReadWarnings(o, plan, undefined);
  assert.equal(rest.length, 0, 'the program deploy.sh is read automatically: no warning for deploy');
  assert.equal(w.code, 'NYL-SOURCE-UNDECLARED-READ');
  assert.deepEqual(w.units, ['migrate']);
  assert.equal(w.location.pointer, '/spec/script');
  assert.match(w.message, /its script names migrations\/\*\.sql, which no inputs glob covers/);
  assert.match(w.fix, /^add inputs: \['migrations\/\*\.sql'\]|^add inputs: \[migrations\/\*\.sql\]/);
  assert.deepEqual(undeclaredReadWarnings(o, plan, new Set(['deploy'])), [], 'only the selected units');

  const declared = await opened(['  inputs: [migrations/*.sql]', ...MIGRATE]);
  assert.deepEqual(undeclaredReadWarnings(declared.o, plan, undefined), []);
  const other = await opened(['  inputs: [bin/deploy.sh]', ...MIGRATE]);
  assert.match(undeclaredReadWarnings(other.o, plan, undefined)[0].fix, /^add migrations\/\*\.sql to the inputs: list of migrate/);
});
