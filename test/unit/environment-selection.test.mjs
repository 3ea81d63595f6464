// Selecting environments (src/project/environment-selection.ts): -e / -l / -g over a loaded
// project, the dependsOn order of a selection and what each environment waits for, qualified
// --unit names, and the exit code across environments.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import {
  declaredEnvironments,
  orderEnvironments,
  parseLabelSelector,
  qualifiedUnits,
  resolveSelection,
  selectEnvironments,
  unitsByEnvironment,
} from '../../dist/project/environment-selection.js';
import { environmentsExit } from '../../dist/commands/shared/environment-selection.js';
import { worst } from '../../dist/report/exit-code.js';
import { documents, loadErrors, memoryTree } from '../support/memory-tree.mjs';

const env = (name, labels, ...spec) => [
  'apiVersion: nyl.io/v1',
  'kind: Environment',
  `metadata: {name: ${name}, labels: ${JSON.stringify(labels)}}`,
  spec.length > 0 ? 'spec:' : 'spec: {}',
  ...spec.map((l) => `  ${l}`),
];
const group = (name, ...spec) => ['apiVersion: nyl.io/v1', 'kind: EnvironmentGroup', `metadata: {name: ${name}}`, 'spec:', ...spec.map((l) => `  ${l}`)];

// base <- network <- {dev, staging}; prod -> network, staging (a diamond over network); tools alone.
const project = await loadProject(
  '/p',
  memoryTree({
    'nyl.yaml': documents(
      env('prod', { stage: 'production', region: 'eu' }, 'dependsOn: [staging, network]'),
      env('staging', { stage: 'staging', region: 'eu' }, 'dependsOn: [network]'),
      env('dev', { stage: 'dev', region: 'us' }, 'dependsOn: [network]'),
      env('network', { stage: 'shared', region: 'eu' }, 'dependsOn: [base]'),
      env('base', { stage: 'shared', region: 'us' }),
      env('tools', {}),
      group('eu', 'selector: {matchLabels: {region: eu}}'),
      group('release', 'environments: [prod, dev]'),
      group('nobody', 'selector: {matchLabels: {stage: none}}'),
      group('empty', 'environments: []'),
    ),
  }),
);

/** The NylError's first diagnostic, from a function expected to throw one. */
function refusal(fn) {
  try {
    fn();
  } catch (error) {
    assert.ok(error.diagnostics, `not a NylError: ${error}`);
    return error.diagnostics[0];
  }
  assert.fail('expected a refusal');
}

const names = (list) => list.map((e) => e.name);

test('-e: the named environments in the order given, a repeat once', () => {
  assert.deepEqual(names(selectEnvironments(project, { names: ['prod', 'dev', 'prod'] })), ['prod', 'dev']);
});

test('-e: unknown names are NYL-ENVIRONMENT-UNKNOWN listing them and the declared names', () => {
  const d = refusal(() => selectEnvironments(project, { names: ['dev', 'qa', 'uat'] }));
  assert.equal(d.code, 'NYL-ENVIRONMENT-UNKNOWN');
  assert.match(d.message, /qa, uat/);
  assert.match(d.fix, /base, dev, network, prod, staging, tools/);
  assert.equal(refusal(() => selectEnvironments(project, { names: [] })).code, 'NYL-USAGE');
});

test('-e: an unknown name close to a declared one gets a did-you-mean', () => {
  const d = refusal(() => selectEnvironments(project, { names: ['prdo'] }));
  assert.match(d.fix, /^did you mean prod\? declare an Environment prdo/);
  assert.doesNotMatch(refusal(() => selectEnvironments(project, { names: ['zzzzzz'] })).fix, /did you mean/);
});

test('-e: names resolve through the lookup (the hook for EnvironmentTemplate instances)', () => {
  const instance = {
    kind: 'Environment',
    name: 'pr-7',
    labels: {},
    origin: { file: 'nyl.yaml', line: 1, pointer: '', document: 0 },
    spec: { dependsOn: ['dev'], values: {}, driftRepair: 'converge', lease: { durationMs: 1 } },
  };
  const declared = declaredEnvironments(project);
  const lookup = (name) => (name === 'pr-7' ? instance : declared(name));
  const selection = resolveSelection(project, { names: ['pr-7', 'dev'] }, lookup);
  assert.deepEqual(selection.order, ['dev', 'pr-7']);
  assert.deepEqual(selection.dependencies.get('pr-7'), ['dev']);
  // Instances are never selected by labels or groups: those read declared environments only.
  assert.equal(names(selectEnvironments(project, { labels: { region: 'eu' } }, lookup)).includes('pr-7'), false);
});

test('-l: literal labels, AND over the pairs, sorted by name', () => {
  assert.deepEqual(names(selectEnvironments(project, { labels: { region: 'eu' } })), ['network', 'prod', 'staging']);
  assert.deepEqual(names(selectEnvironments(project, { labels: { region: 'eu', stage: 'shared' } })), ['network']);
  const none = refusal(() => selectEnvironments(project, { labels: { region: 'eu', stage: 'dev' } }));
  assert.equal(none.code, 'NYL-ENVIRONMENT-NONE-SELECTED');
  assert.match(none.message, /-l region=eu,stage=dev/);
  assert.match(none.fix, /dev \(stage=dev,region=us\)/);
  assert.equal(refusal(() => selectEnvironments(project, { labels: {} })).code, 'NYL-USAGE');
});

test('parseLabelSelector: key=value pairs, comma-separated and repeated, strictly', () => {
  assert.deepEqual({ ...parseLabelSelector(['stage=production,region=eu']) }, { stage: 'production', region: 'eu' });
  assert.deepEqual({ ...parseLabelSelector(['stage=production', 'region=eu']) }, { stage: 'production', region: 'eu' });
  assert.deepEqual({ ...parseLabelSelector(['tier=', 'a=b=c']) }, { tier: '', a: 'b=c' });
  assert.deepEqual({ ...parseLabelSelector(['a=1', 'a=1']) }, { a: '1' });
  for (const bad of [['stage'], ['=eu'], ['stage=dev,'], ['a=1,,b=2'], ['a=1', 'a=2']]) {
    const d = refusal(() => parseLabelSelector(bad));
    assert.equal(d.code, 'NYL-USAGE', bad.join(' '));
    assert.match(d.fix, /pass -l /);
  }
  // A key named like an Object.prototype member is an ordinary label.
  assert.deepEqual(Object.keys(parseLabelSelector(['constructor=x'])), ['constructor']);
});

test('-g: members by selector (sorted) or by list; unknown and empty groups are refused', () => {
  assert.deepEqual(names(selectEnvironments(project, { group: 'eu' })), ['network', 'prod', 'staging']);
  assert.deepEqual(names(selectEnvironments(project, { group: 'release' })), ['dev', 'prod']);
  const unknown = refusal(() => selectEnvironments(project, { group: 'europe' }));
  assert.equal(unknown.code, 'NYL-GROUP-UNKNOWN');
  assert.match(unknown.fix, /-g with one of: empty, eu, nobody, release/);
  for (const name of ['nobody', 'empty']) {
    const d = refusal(() => selectEnvironments(project, { group: name }));
    assert.equal(d.code, 'NYL-ENVIRONMENT-NONE-SELECTED', name);
    assert.match(d.fix, /nyl\.yaml:\d+/);
  }
});

test('order: dependencies first, ties by name; chains and diamonds', () => {
  const all = resolveSelection(project, { names: ['prod', 'tools', 'dev', 'staging', 'network', 'base'] });
  assert.deepEqual(all.order, ['base', 'network', 'dev', 'staging', 'prod', 'tools']);
  assert.deepEqual(names(all.environments), all.order);
  assert.deepEqual(Object.fromEntries(all.dependencies), {
    prod: ['base', 'network', 'staging'],
    tools: [],
    dev: ['base', 'network'],
    staging: ['base', 'network'],
    network: ['base'],
    base: [],
  });
});

test('order: a dependency outside the selection is not waited for, but orders through it', () => {
  // staging -> network -> base: network does not run, base still runs before staging.
  const s = resolveSelection(project, { names: ['staging', 'base', 'tools'] });
  assert.deepEqual(s.order, ['base', 'staging', 'tools']);
  assert.deepEqual(s.dependencies.get('staging'), ['base']);
  // Nothing selected that prod depends on: independent, by name.
  const alone = resolveSelection(project, { names: ['prod', 'dev'] });
  assert.deepEqual(alone.order, ['dev', 'prod']);
  assert.deepEqual(alone.dependencies.get('prod'), []);
  // The group's list order does not decide the run order; dependsOn and names do.
  assert.deepEqual(resolveSelection(project, { group: 'eu' }).order, ['network', 'staging', 'prod']);
  assert.deepEqual(orderEnvironments([], declaredEnvironments(project)).order, []);
});

test('cycles in Environment dependsOn are refused at validation with file and line', async () => {
  const errors = await loadErrors(loadProject, {
    'nyl.yaml': documents(env('a', {}, 'dependsOn: [b]'), env('b', {}, 'dependsOn: [c]'), env('c', {}, 'dependsOn: [a]'), env('d', {}, 'dependsOn: [d]')),
  });
  const cycles = errors.filter((d) => /environment dependency cycle/.test(d.message));
  assert.deepEqual(
    cycles.map((d) => [d.code, d.message, d.location.file, d.location.line, d.location.pointer]),
    [
      ['NYL-SOURCE-INVALID', 'environment dependency cycle: a -> b -> c -> a', 'nyl.yaml', 5, '/spec/dependsOn/0'],
      ['NYL-SOURCE-INVALID', 'environment dependency cycle: d -> d', 'nyl.yaml', 23, '/spec/dependsOn/0'],
    ],
  );
});

const UNITS = { dev: new Set(['web', 'db', 'audit']), prod: new Set(['web', 'db']) };
const unitsOf = (e) => UNITS[e] ?? new Set();

test('units: a plain name in every selected environment, ENV/UNIT in one', () => {
  assert.equal(unitsByEnvironment(['dev', 'prod'], [], unitsOf), undefined);
  assert.deepEqual(Object.fromEntries(unitsByEnvironment(['dev', 'prod'], ['web', 'dev/audit', 'dev/web'], unitsOf)), { dev: ['web', 'audit'], prod: ['web'] });
  // An environment no unit option names runs no unit of its own.
  assert.deepEqual(Object.fromEntries(unitsByEnvironment(['dev', 'prod'], ['dev/audit'], unitsOf)), { dev: ['audit'], prod: [] });
});

test('units: a plain name missing somewhere is NYL-UNIT-UNKNOWN naming where', () => {
  const d = refusal(() => unitsByEnvironment(['dev', 'prod'], ['audit', 'db', 'cache'], unitsOf));
  assert.equal(d.code, 'NYL-UNIT-UNKNOWN');
  assert.match(d.message, /audit \(not in prod\); cache \(not in dev, prod\)/);
  assert.match(d.fix, /--unit <env>\/audit/);
  assert.equal(refusal(() => unitsByEnvironment(['dev', 'prod'], ['prod/audit'], unitsOf)).code, 'NYL-UNIT-UNKNOWN');
});

test('units: an unknown name close to a unit of the environment gets a did-you-mean', () => {
  const d = refusal(() => unitsByEnvironment(['dev'], ['wbe'], unitsOf));
  assert.match(d.fix, /^did you mean web\? /);
  assert.doesNotMatch(refusal(() => unitsByEnvironment(['dev'], ['zzzzzz'], unitsOf)).fix, /did you mean/);
});

test('units: ENV/UNIT naming an environment not selected, or malformed, is NYL-USAGE', () => {
  const d = refusal(() => qualifiedUnits(['dev'], ['prod/web']));
  assert.equal(d.code, 'NYL-USAGE');
  assert.match(d.message, /prod, which this command does not select/);
  assert.match(d.fix, /--unit dev\/web/);
  for (const bad of ['/web', 'dev/', 'dev/a/b']) assert.equal(refusal(() => qualifiedUnits(['dev'], [bad])).code, 'NYL-USAGE', bad);
  assert.deepEqual(qualifiedUnits(['dev'], ['dev/web', 'db']).get('dev'), ['web', 'db']);
});

test('exit across environments: the most severe, 4 > 3 > 1 > 2 > 0, the same ranking as one report', () => {
  const order = [0, 2, 1, 3, 4];
  for (const [i, a] of order.entries()) {
    for (const b of order.slice(i)) {
      assert.equal(environmentsExit([a, b]), b);
      assert.equal(environmentsExit([b, a]), worst([a, b]));
    }
  }
  assert.equal(environmentsExit([]), 0);
  assert.equal(
    environmentsExit(
      new Map([
        ['dev', 2],
        ['prod', 1],
      ]).values(),
    ),
    1,
  );
});
