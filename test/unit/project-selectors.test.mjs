import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { groupMembers, groupsSelecting, matchesLabels, ownershipSet } from '../../dist/project/selectors.js';
import { documents, memoryTree } from '../support/memory-tree.mjs';

const doc = (kind, name, labels, ...spec) => [
  'apiVersion: nyl.io/v1',
  `kind: ${kind}`,
  `metadata: {name: ${name}, labels: ${JSON.stringify(labels)}}`,
  spec.length > 0 ? 'spec:' : 'spec: {}',
  ...spec.map((l) => `  ${l}`),
];

const project = await loadProject(
  '/p',
  memoryTree({
    'nyl.yaml': documents(
      doc('Environment', 'dev', { stage: 'dev', region: 'eu' }),
      doc('Environment', 'prod-eu', { stage: 'prod', region: 'eu' }, 'unitSelector: {matchLabels: {app: shop}}'),
      doc('Environment', 'prod-us', { stage: 'prod', region: 'us' }, 'unitSelector: {matchLabels: {app: shop, tier: db}}'),
      doc('EnvironmentGroup', 'prod', {}, 'selector: {matchLabels: {stage: prod}}'),
      doc('EnvironmentGroup', 'eu', {}, 'environments: [prod-eu, dev]'),
      doc('EnvironmentGroup', 'all', {}, 'selector: {matchLabels: {}}'),
      doc('Command', 'web', { app: 'shop' }, 'run: [x]'),
      doc('Terraform', 'db', { app: 'shop', tier: 'db' }, 'module: db'),
      doc('Command', 'audit', {}, 'run: [x]'),
    ),
  }),
);

test('matchesLabels requires every selector label with the same value', () => {
  assert.equal(matchesLabels({ a: '1', b: '2' }, { a: '1' }), true);
  assert.equal(matchesLabels({ a: '1' }, { a: '2' }), false);
  assert.equal(matchesLabels({}, { a: '1' }), false);
  assert.equal(matchesLabels({}, {}), true);
  assert.equal(matchesLabels({}, { toString: '' }), false);
});

test('ownershipSet: every unit without a selector, the matching ones with one, sorted by name', () => {
  const names = (env) => ownershipSet(project, project.environments.get(env)).map((u) => u.name);
  assert.deepEqual(names('dev'), ['audit', 'db', 'web']);
  assert.deepEqual(names('prod-eu'), ['db', 'web']);
  assert.deepEqual(names('prod-us'), ['db']);
});

test('groupMembers: by selector (sorted) or by list (as written)', () => {
  const names = (g) => groupMembers(project, project.groups.get(g)).map((e) => e.name);
  assert.deepEqual(names('prod'), ['prod-eu', 'prod-us']);
  assert.deepEqual(names('eu'), ['prod-eu', 'dev']);
  assert.deepEqual(names('all'), ['dev', 'prod-eu', 'prod-us']);
});

test('groupsSelecting lists the groups of an environment by name', () => {
  assert.deepEqual(
    groupsSelecting(project, 'prod-eu').map((g) => g.name),
    ['all', 'eu', 'prod'],
  );
  assert.deepEqual(
    groupsSelecting(project, 'prod-us').map((g) => g.name),
    ['all', 'prod'],
  );
  assert.deepEqual(groupsSelecting(project, 'nope'), []);
});
