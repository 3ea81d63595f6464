// EnvironmentTemplate: loading and validation (pattern, overlaps, clashes with Environments,
// field rules through a placeholder instance, the instance grammar), and resolving `-e NAME`
// to a declared Environment or an instance with ${{ instance.name }} / ${{ instance.suffix }}.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import { isInstance, knownEnvironments, resolveEnvironment } from '../../dist/project/instances.js';
import { patternSuffix, patternsOverlap } from '../../dist/project/name-pattern.js';
import { groupMembers } from '../../dist/project/selectors.js';
import { resolveLocation } from '../../dist/state/location.js';
import { at, documents, loadErrors, memoryTree, resource } from '../support/memory-tree.mjs';

const errorsOf = (files) => loadErrors(loadProject, files);
const load = (files) => loadProject('/project', memoryTree(files));

const PREVIEW = [
  'apiVersion: nyl.io/v1',
  'kind: EnvironmentTemplate',
  'metadata: {name: preview, labels: {stage: preview, pr: "${{ instance.suffix }}"}}',
  'spec:',
  '  namePattern: pr-*',
  '  environment:',
  '    values: {pr: "${{ instance.suffix }}", url: "https://${{ instance.name }}.example.com", whole: "${{ instance.suffix }}"}',
  '    state: {path: "previews/${{ instance.suffix }}", desiredRef: "nyl/previews/${{ instance.name }}"}',
  '    lease: {duration: 10m}',
];

const project = (...docs) => ({ 'nyl.yaml': documents(resource('Environment', 'dev'), ...docs) });

test('a name pattern matches names with a non-empty suffix; overlapping patterns are detected', () => {
  assert.equal(patternSuffix('pr-*', 'pr-123'), '123');
  assert.equal(patternSuffix('pr-*', 'pr-'), undefined);
  assert.equal(patternSuffix('pr-*', 'dev'), undefined);
  assert.equal(patternSuffix('*-preview', 'a-b-preview'), 'a-b');
  assert.equal(patternSuffix('pr-*-eu', 'pr-7-eu'), '7');
  assert.ok(patternsOverlap('pr-*', 'pr-1*'));
  assert.ok(patternsOverlap('pr-*', '*-eu'), 'pr-x-eu matches both');
  assert.ok(patternsOverlap('*', 'review-*'));
  assert.ok(!patternsOverlap('pr-*', 'review-*'));
  assert.ok(!patternsOverlap('*-eu', '*-us'));
});

test('a template loads; -e of a matching name resolves to an instance with the instance values rendered', async () => {
  const p = await load(project(PREVIEW));
  assert.deepEqual([...p.environments.keys()], ['dev']);
  assert.deepEqual([...p.templates.keys()], ['preview']);
  const env = resolveEnvironment(p, 'pr-123');
  assert.equal(env.kind, 'Environment');
  assert.equal(env.name, 'pr-123');
  assert.ok(isInstance(env));
  assert.deepEqual(env.instance, { template: 'preview', namePattern: 'pr-*', suffix: '123' });
  assert.deepEqual(env.labels, { stage: 'preview', pr: '123' });
  assert.deepEqual(env.spec.values, { pr: '123', url: 'https://pr-123.example.com', whole: '123' });
  assert.deepEqual(env.spec.state, { path: 'previews/123', desiredRef: 'nyl/previews/pr-123' });
  assert.equal(env.spec.lease.durationMs, 600000);
  assert.equal(env.origin.file, 'nyl.yaml');
  assert.equal(env.locations['/spec/state/desiredRef'].line, 13, 'the template line of the state ref');
  // Declared environments are never instances; unknown names resolve to nothing.
  assert.equal(isInstance(resolveEnvironment(p, 'dev')), false);
  assert.equal(resolveEnvironment(p, 'prod'), undefined);
  assert.deepEqual(knownEnvironments(p), { known: ['dev'], patterns: ['pr-*'] });
  // Two instances are independent, and the template is not changed by building one.
  assert.equal(resolveEnvironment(p, 'pr-8').spec.state.path, 'previews/8');
  assert.equal(p.templates.get('preview').spec.environment.state.path, 'previews/${{ instance.suffix }}');
});

test('an instance defaults its state refs like any environment, and no group selects it or lends it state', async () => {
  const p = await load(
    project(
      resource('EnvironmentTemplate', 'preview', 'namePattern: pr-*', 'environment: {values: {a: b}}'),
      resource('EnvironmentGroup', 'all', 'selector: {matchLabels: {}}', 'shared: {state: {coordinationRefPrefix: refs/heads/shared/}}'),
    ),
  );
  const env = resolveEnvironment(p, 'pr-7');
  const loc = resolveLocation(p, env, { workTree: '/project' });
  assert.equal(loc.desiredRef, 'refs/heads/nyl/pr-7/desired');
  assert.equal(loc.observedRef, 'refs/heads/nyl/pr-7/observed');
  assert.equal(loc.coordinationPrefix, 'refs/nyl/', 'the group selecting every environment does not lend an instance its prefix');
  assert.deepEqual(
    groupMembers(p, p.groups.get('all')).map((e) => e.name),
    ['dev'],
  );
});

test('a template without an environment spec makes instances with every default', async () => {
  const p = await load(project(resource('EnvironmentTemplate', 'preview', 'namePattern: "*-preview"')));
  const env = resolveEnvironment(p, 'a-b-preview');
  assert.deepEqual(env.spec, { values: {}, driftRepair: 'converge', dependsOn: [], lease: { durationMs: 300000 } });
  assert.equal(env.instance.suffix, 'a-b');
});

test('a namePattern must hold exactly one "*" and make valid names', async () => {
  for (const [pattern, message] of [
    ['pr', /has no "\*"/],
    ['pr-*-*', /has 2 "\*"/],
    ['PR-*', /would not be valid names/],
  ]) {
    const errors = await errorsOf(project(resource('EnvironmentTemplate', 'preview', `namePattern: "${pattern}"`)));
    const d = at(errors, '/spec/namePattern');
    assert.equal(d.code, 'NYL-SOURCE-INVALID');
    assert.match(d.message, message);
    assert.equal(d.location.line, 10);
  }
  const missing = await errorsOf(project(resource('EnvironmentTemplate', 'preview', 'environment: {}')));
  assert.match(at(missing, '/spec/namePattern').message, /namePattern/);
});

test('overlapping patterns and an Environment whose name a pattern matches are refused, naming both places', async () => {
  const overlap = await errorsOf(
    project(resource('EnvironmentTemplate', 'preview', 'namePattern: pr-*'), resource('EnvironmentTemplate', 'eu', 'namePattern: "*-eu"')),
  );
  const d = at(overlap, '/spec/namePattern');
  assert.equal(d.code, 'NYL-SOURCE-INVALID');
  assert.equal(d.location.line, 16);
  assert.match(d.message, /namePattern \*-eu and namePattern pr-\* of EnvironmentTemplate preview at nyl\.yaml:10 can match the same name/);
  assert.match(d.fix, /disjoint/);

  const clash = await errorsOf(project(resource('EnvironmentTemplate', 'preview', 'namePattern: "d*"')));
  const c = at(clash, '/metadata/name');
  assert.equal(c.location.line, 3);
  assert.match(c.message, /Environment dev matches namePattern d\* of EnvironmentTemplate preview at nyl\.yaml:10/);
  assert.match(c.fix, /rename the Environment or narrow the pattern/);
});

test("a bad field of the template's environment spec is reported at its file and line, rendered for a placeholder instance", async () => {
  const errors = await errorsOf({
    'nyl.yaml': documents(resource('Project', 'shop', 'include: [envs/*.yaml]')),
    'envs/preview.yaml': documents(
      resource(
        'EnvironmentTemplate',
        'preview',
        'namePattern: pr-*',
        'environment:',
        '  driftRepair: sometimes',
        '  state: {desiredRef: "nyl/${{ instance.suffix }}..x", path: "../${{ instance.name }}"}',
        '  dependsOn: [nowhere]',
      ),
    ),
  });
  assert.equal(at(errors, '/spec/environment/driftRepair', 'envs/preview.yaml').location.line, 7);
  const ref = at(errors, '/spec/environment/state/desiredRef');
  assert.equal(ref.location.line, 8);
  assert.match(ref.message, /EnvironmentTemplate preview: invalid branch name "nyl\/0\.\.x"/);
  assert.match(at(errors, '/spec/environment/state/path').message, /invalid path/);
});

test('a template names declared environments and repositories only', async () => {
  const errors = await errorsOf(
    project(resource('EnvironmentTemplate', 'preview', 'namePattern: pr-*', 'environment: {dependsOn: [dve], state: {repositoryRef: nowhere}}')),
  );
  assert.match(at(errors, '/spec/environment/dependsOn/0').fix, /did you mean dev\?/);
  assert.match(at(errors, '/spec/environment/state/repositoryRef').message, /EnvironmentTemplate preview names unknown GitRepository "nowhere"/);
});

test('references other than instance.* are refused in a template, and instance.* in units', async () => {
  const errors = await errorsOf(
    project(
      resource('EnvironmentTemplate', 'preview', 'namePattern: pr-*', 'environment: {values: {a: "${{ env.name }}", b: "${{ instance.suffix"}}'),
      resource('Command', 'web', 'run: [echo, "${{ instance.name }}"]'),
    ),
  );
  const a = at(errors, '/spec/environment/values/a');
  assert.match(a.message, /unknown reference \$\{\{ env\.name \}\}/);
  assert.match(a.fix, /instance\.name.*instance\.suffix/);
  assert.match(at(errors, '/spec/environment/values/b').message, /unterminated reference/);
  assert.match(at(errors, '/spec/run/1').fix, /env\.name/);
});

test('an instance whose suffix makes an invalid field is refused at the template line; an invalid name is unknown', async () => {
  const p = await load({
    'nyl.yaml': documents(resource('EnvironmentTemplate', 'preview', 'namePattern: "*"', 'environment: {state: {desiredRef: "x/${{ instance.suffix }}"}}')),
  });
  assert.throws(
    () => resolveEnvironment(p, 'Bad_Name'),
    (e) => e.code === 'NYL-ENVIRONMENT-UNKNOWN' && /matches namePattern \* of EnvironmentTemplate preview, but invalid name/.test(e.message),
  );
  // The fix names a valid name the pattern matches, not an Environment to declare.
  const pr = await load({
    'nyl.yaml': documents(resource('EnvironmentTemplate', 'preview', 'namePattern: "pr-*"', 'environment: {state: {desiredRef: "x/${{ instance.suffix }}"}}')),
  });
  assert.throws(
    () => resolveEnvironment(pr, 'pr-Fix_Login'),
    (e) => {
      const fix = e.diagnostics[0].fix;
      assert.equal(fix, 'name the instance in lowercase letters, digits and "-": -e pr-fix-login');
      assert.ok(resolveEnvironment(pr, 'pr-fix-login'), 'the suggested name is an instance');
      return true;
    },
  );
  assert.equal(resolveEnvironment(p, 'ok').spec.state.desiredRef, 'x/ok');
  const bad = await load(
    project(resource('EnvironmentTemplate', 'preview', 'namePattern: "pr*"', 'environment: {state: {desiredRef: "${{ instance.suffix }}"}}')),
  );
  assert.equal(resolveEnvironment(bad, 'pr7').spec.state.desiredRef, '7');
  assert.throws(
    () => resolveEnvironment(bad, 'pr-7'),
    (e) => {
      const d = e.diagnostics[0];
      return (
        d.code === 'NYL-SOURCE-INVALID' &&
        d.location.line === 11 &&
        d.location.pointer === '/spec/environment/state/desiredRef' &&
        /EnvironmentTemplate preview, instance pr-7: invalid branch name "-7": it starts with "-"/.test(d.message)
      );
    },
  );
});
