// Warnings about source a rendering may miss, in process over a loaded project
// (src/commands/shared/source-warnings.ts): NYL-SOURCE-UNDECLARED-READ names the source paths a
// script names that no inputs glob covers, with the glob to add.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { undeclaredReadWarnings } from '../../dist/commands/shared/source-warnings.js';
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

async function opened(migrateSpec, changes) {
  const project = await loadProject('/p', memoryTree({ ...FILES, 'nyl.yaml': nylYaml(migrateSpec) }));
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
