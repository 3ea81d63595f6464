// Names on the command line, in process: what `nyl __complete` (src/cli/completion.ts) offers on
// a TAB press, read from the project at HEAD, the units narrowed to the environments a -e among
// the typed words names (the shells themselves run the scripts in test/e2e/cli-usability.test.mjs);
// and an environment given where the command reads its PATH.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { completion } from '../../dist/cli/completion.js';
import { dispatch } from '../../dist/cli/dispatch.js';
import { COMMANDS, findCommand } from '../../dist/cli/registry.js';
import { cleanupAll, hermeticEnv, makeProject } from '../support/git-fixtures.mjs';
import { describeErrors, validatorOf } from '../support/schemas.mjs';

after(cleanupAll);

const STATE = 'state: {repository: {repoURL: "file:///nowhere/state.git"}}';
const doc = (kind, name, spec, labels = '') => `apiVersion: nyl.io/v1\nkind: ${kind}\nmetadata: {name: ${name}${labels}}\nspec:\n${spec}`;
const dir = makeProject({
  'nyl.yaml': `${[
    doc('Environment', 'dev', `  ${STATE}`),
    doc('Environment', 'prod', `  ${STATE}\n  unitSelector: {matchLabels: {tier: prod}}`),
    doc('EnvironmentGroup', 'all', '  environments: [dev, prod]'),
    doc('Command', 'web', '  run: ["true"]', ', labels: {tier: prod}'),
    doc('Command', 'migrate', '  run: ["true"]'),
  ].join('\n---\n')}\n`,
});
Object.assign(process.env, hermeticEnv());
process.chdir(dir);

async function complete(...argv) {
  let out = '';
  const write = process.stdout.write;
  // Strings only: the test runner reports on the same stream, in buffers.
  process.stdout.write = (chunk, ...rest) => (typeof chunk === 'string' ? ((out += chunk), true) : write.call(process.stdout, chunk, ...rest));
  try {
    return { code: await completion(['__complete', ...argv]), lines: out.split('\n').filter(Boolean) };
  } finally {
    process.stdout.write = write;
  }
}

test('__complete lists environments, groups and units of the project at HEAD', async () => {
  assert.deepEqual(await complete('environments'), { code: 0, lines: ['dev', 'prod'] });
  assert.deepEqual(await complete('groups'), { code: 0, lines: ['all'] });
  assert.deepEqual(await complete('units', 'reconcile'), { code: 0, lines: ['migrate', 'web'] });
});

test('__complete units: the ownership sets of the environments -e names among the words typed', async () => {
  assert.deepEqual((await complete('units', 'reconcile', '-e', 'prod', '--unit')).lines, ['web']);
  assert.deepEqual((await complete('units', 'plan', '--environment=prod')).lines, ['web']);
  assert.deepEqual((await complete('units', 'plan', '-eprod', '-e', 'dev')).lines, ['migrate', 'web']);
  // An environment that does not resolve narrows nothing.
  assert.deepEqual((await complete('units', 'plan', '-e', 'nope')).lines, ['migrate', 'web']);
});

test('__complete of anything else prints nothing and exits 1', async () => {
  assert.deepEqual(await complete('files'), { code: 1, lines: [] });
});

test('every option that takes unit names completes them; every -o value is an output the CLI renders', () => {
  for (const c of COMMANDS) {
    for (const o of c.options) {
      const name = `${c.words.join(' ')} --${o.name}`;
      if (['unit', 'units', 'approve'].includes(o.name)) assert.equal(o.completes, 'units', name);
      if (o.name === 'environment') assert.equal(o.completes, 'environments', name);
      if (o.name === 'output') {
        assert.ok(o.choices.includes('json') && o.choices.includes('text'), name);
        for (const v of o.choices) assert.ok(['text', 'table', 'json', 'dot', 'mermaid'].includes(v), `${name}: ${v}`);
        assert.equal(o.value, `<${o.choices.filter((v) => v !== 'table' || o.choices.length === 3).join('|')}>`, name);
      }
    }
  }
  const graph = COMMANDS.find((c) => c.options.some((o) => o.choices?.includes('mermaid')));
  assert.ok(graph, 'a command draws its report');
});

/** Runs `nyl argv` in process (as main.ts dispatches it): its exit code and what it wrote to stderr. */
async function run(...argv) {
  let err = '';
  const write = process.stderr.write;
  process.stderr.write = (chunk, ...rest) => (typeof chunk === 'string' ? ((err += chunk), true) : write.call(process.stderr, chunk, ...rest));
  try {
    const { spec, rest } = findCommand(argv);
    return { code: await dispatch(spec, rest), stderr: err };
  } finally {
    process.stderr.write = write;
  }
}

test('an environment given as PATH (a forgotten -e) is NYL-USAGE whose fix names -e', async () => {
  for (const argv of [
    ['reconcile', 'dev'],
    ['plan', '--unit', 'web', 'prod'],
    ['state', 'init', 'dev'],
    ['log', 'dev'],
  ]) {
    const r = await run(...argv);
    assert.equal(r.code, 1, argv.join(' '));
    assert.match(r.stderr, /NYL-USAGE/, argv.join(' '));
    const env = argv.at(-1);
    const fixed = ['nyl', ...argv.slice(0, -1), '-e', env].join(' ');
    assert.ok(r.stderr.includes(`did you mean -e ${env}? \`${fixed}\``), `${argv.join(' ')}:\n${r.stderr}`);
  }
  // A PATH that is no environment keeps the usage error it had.
  const other = await run('reconcile', 'nowhere');
  assert.equal(other.code, 1);
  assert.doesNotMatch(other.stderr, /did you mean/);
});

/** Runs `nyl argv` in process: its exit code and stdout. */
async function runOut(...argv) {
  let out = '';
  const write = process.stdout.write;
  process.stdout.write = (chunk, ...rest) => (typeof chunk === 'string' ? ((out += chunk), true) : write.call(process.stdout, chunk, ...rest));
  try {
    const { spec, rest } = findCommand(argv);
    return { code: await dispatch(spec, rest), stdout: out };
  } finally {
    process.stdout.write = write;
  }
}

test('nyl status without -e lists the environments with a hint, and exits 0; -o json is an EnvironmentListReport', async () => {
  const text = await runOut('status');
  assert.equal(text.code, 0, text.stdout);
  assert.match(text.stdout, /^dev +declared$/m);
  assert.match(text.stdout, /^prod +declared$/m);
  assert.match(text.stdout, /\n\nnyl status shows one environment: nyl status -e <environment>/);
  const json = await runOut('status', '-o', 'json');
  assert.equal(json.code, 0);
  const doc = JSON.parse(json.stdout);
  assert.equal(doc.kind, 'EnvironmentListReport');
  assert.deepEqual(
    doc.environments.map((e) => e.name),
    ['dev', 'prod'],
  );
  assert.deepEqual(doc.errors, []);
  const validate = validatorOf('status-report');
  assert.ok(validate(doc), describeErrors(validate.errors));
});
