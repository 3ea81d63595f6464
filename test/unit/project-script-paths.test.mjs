// The source paths a Command's action names (src/project/script-paths.ts): the program it runs
// when that is a path (argv[0] with a slash, an interpreter's script operand, the command words of
// script: text and of sh -c text), and path-like words (a heuristic); resolving them against
// workingDir; which of them the execution key does not cover (undeclared-reads.ts); and which
// working files a rendering reads (working-reads.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actionDir, actionWords, resolveWord, shellCommands } from '../../dist/project/script-paths.js';
import { undeclaredReads } from '../../dist/project/undeclared-reads.js';
import { readsSource, sourceReads } from '../../dist/project/source-reads.js';
import { pathspecsOf, projectReadPatterns, readsPath } from '../../dist/project/working-reads.js';
import { loadProject } from '../../dist/project/load.js';
import { BUILTIN_KINDS, COMMAND_KIND } from '../../dist/drivers/kinds.js';
import { memoryTree } from '../support/memory-tree.mjs';

const FIELDS = COMMAND_KIND.actionFields;
const programs = (spec) =>
  actionWords(spec, FIELDS)
    .filter((w) => w.program)
    .map((w) => w.word);
const others = (spec) =>
  actionWords(spec, FIELDS)
    .filter((w) => !w.program)
    .map((w) => w.word);

test('the program of a run: argv: a path with a slash, or the script an interpreter runs', () => {
  assert.deepEqual(programs({ run: ['./bin/deploy.sh', '--prod'] }), ['./bin/deploy.sh']);
  assert.deepEqual(programs({ run: ['bin/deploy.sh'] }), ['bin/deploy.sh']);
  assert.deepEqual(programs({ run: ['bash', '-e', 'deploy.sh', 'x'] }), ['deploy.sh']);
  assert.deepEqual(programs({ run: ['bash', '-euo', 'pipefail', 'deploy.sh'] }), ['deploy.sh']);
  assert.deepEqual(programs({ run: ['bash', '-ec', 'echo hi'] }), []);
  assert.deepEqual(programs({ run: ['python3', 'tools/seed.py'] }), ['tools/seed.py']);
  assert.deepEqual(programs({ run: ['/usr/bin/env', 'FOO=1', 'node', 'scripts/x.js'] }), ['scripts/x.js']);
  // exec finds a program without a slash on PATH, not in the working directory; options that run text name no file.
  assert.deepEqual(programs({ run: ['deploy.sh'] }), []);
  assert.deepEqual(programs({ run: ['/usr/local/bin/deploy'] }), []);
  assert.deepEqual(programs({ run: ['python3', '-m', 'http.server'] }), []);
  assert.deepEqual(programs({ run: ['node', '-e', 'console.log(1)'] }), []);
  assert.deepEqual(programs({ run: ['./${{ env.values.tool }}'] }), [], 'a reference left in it names nothing');
});

test('the programs of script: text and of sh -c text are the command words that are paths, or an interpreter script', () => {
  const script = ['set -e', 'FOO=1 ./bin/one.sh --x', 'if true; then sh scripts/two.sh; fi', '. lib/env.sh', 'echo done | tee out.log', '"$HOME"/bin/x'].join(
    '\n',
  );
  assert.deepEqual(programs({ script }), ['./bin/one.sh', 'scripts/two.sh', 'lib/env.sh']);
  assert.deepEqual(programs({ run: ['sh', '-c', 'cd app && ./run.sh'] }), ['./run.sh']);
});

test('path-like words: a slash or a file extension, without $, references, URLs, or a leading /, - or ~', () => {
  const script = [
    'for f in migrations/*.sql; do psql -f "$f"; done',
    'cp conf/app.yaml /etc/app.yaml # comment names notes/x.txt',
    'tool --config=conf/tool.toml OUT=build/out "$DIR/x" https://example.com/a.json ~/x.txt -v',
    "echo 'a quoted data/file.csv' > report.txt",
  ].join('\n');
  assert.deepEqual(
    others({ script }),
    ['migrations/*.sql', 'conf/app.yaml', 'conf/tool.toml', 'build/out', 'report.txt'],
    'a quoted text with spaces is one word, and no path',
  );
  assert.deepEqual(others({ run: ['terraform', 'apply', '-var-file=vars/dev.tfvars', 'plan.out'] }), ['vars/dev.tfvars', 'plan.out']);
});

test('shellCommands splits simple commands and words as sh would for the plain cases', () => {
  assert.deepEqual(shellCommands("a 'b c' d\\ e; f && g | h\n# x y\ni>j"), [['a', 'b c', 'd e'], ['f'], ['g'], ['h'], ['i', 'j']]);
});

test('words resolve against workingDir inside the project; a glob keeps its wildcard segments', () => {
  assert.equal(actionDir({}, FIELDS), '');
  assert.equal(actionDir({ workingDir: './app/' }, FIELDS), 'app');
  assert.equal(actionDir({ workingDir: '${{ env.values.dir }}' }, FIELDS), undefined);
  assert.deepEqual(resolveWord('app', './bin/x.sh'), { path: 'app/bin/x.sh' });
  assert.deepEqual(resolveWord('app', '../migrations/*.sql'), { glob: 'migrations/*.sql' });
  assert.deepEqual(resolveWord('', 'conf/'), { path: 'conf' });
  assert.equal(resolveWord('', '../outside.sh'), undefined);
  assert.equal(resolveWord('app', '..'), undefined, 'the project root is no path a unit reads');
});

const FILES = {
  'bin/deploy.sh': 'echo deploy',
  'migrations/001.sql': 'a',
  'migrations/002.sql': 'b',
  'migrations/README.md': 'notes',
  'conf/app.yaml': 'x: 1',
  'app/run.sh': 'echo run',
};

async function objects() {
  return memoryTree(FILES).objects();
}

test('the program file the action runs enters the reads as a declared input would; a word naming no file of the source reads nothing', async () => {
  const all = await objects();
  const unit = (spec) => ({ kind: 'Command', spec });
  assert.deepEqual(Object.keys(sourceReads(unit({ run: ['./bin/deploy.sh'] }), { run: ['./bin/deploy.sh'] }, all, BUILTIN_KINDS)), ['bin/deploy.sh']);
  const declared = { run: ['./bin/deploy.sh'], inputs: ['bin/deploy.sh'] };
  assert.deepEqual(
    sourceReads(unit(declared), declared, all, BUILTIN_KINDS),
    sourceReads(unit({ run: ['./bin/deploy.sh'] }), { run: ['./bin/deploy.sh'] }, all, BUILTIN_KINDS),
  );
  const inDir = { script: './run.sh', workingDir: 'app' };
  assert.deepEqual(Object.keys(sourceReads(unit(inDir), inDir, all, BUILTIN_KINDS)), ['app/run.sh']);
  assert.deepEqual(sourceReads(unit({ run: ['./bin/missing.sh'] }), { run: ['./bin/missing.sh'] }, all, BUILTIN_KINDS), {});
  assert.deepEqual(
    sourceReads(unit({ script: 'cat conf/app.yaml' }), { script: 'cat conf/app.yaml' }, all, BUILTIN_KINDS),
    {},
    'a word that is not the program is not read',
  );
});

test('undeclaredReads: paths the action names that the reads do not cover, with the inputs entry that would', async () => {
  const all = await objects();
  const check = (spec, reads) => undeclaredReads(COMMAND_KIND, spec, all, reads).map((r) => r.input);
  const script = 'for f in migrations/*.sql; do apply "$f"; done; cat conf/app.yaml; ./bin/deploy.sh; cat nothing/here.txt';
  assert.deepEqual(check({ script }, { 'bin/deploy.sh': 'x' }), ['migrations/*.sql', 'conf/app.yaml']);
  assert.deepEqual(
    check({ script }, { 'bin/deploy.sh': 'x', 'migrations/001.sql': 'a', 'conf/app.yaml': 'c' }),
    ['migrations/*.sql'],
    'one file of the glob is not read',
  );
  assert.deepEqual(check({ script }, { 'bin/deploy.sh': 'x', 'migrations/': 't', 'conf/app.yaml': 'c' }), [], 'a directory read covers what is below it');
  // A directory is covered when some file under it is read: its author chose what matters there.
  assert.deepEqual(check({ script: 'ls migrations/' }, {}), ['migrations/**']);
  assert.deepEqual(check({ script: 'ls migrations/' }, { 'migrations/001.sql': 'a' }), []);
  assert.deepEqual(check({ script: 'echo hello world. done' }, {}), []);
});

test('working reads: nyl.yaml, includes, source dirs up to a reference, inputs, programs, and named paths the commit has', async () => {
  const files = {
    ...FILES,
    'units/a.yaml': '',
    'nyl.yaml': [
      'apiVersion: nyl.io/v1',
      'kind: Project',
      'metadata: {name: p}',
      'spec: {include: ["units/*.yaml"]}',
      '---',
      'apiVersion: nyl.io/v1',
      'kind: Command',
      'metadata: {name: m}',
      'spec:',
      '  inputs: [migrations/*.sql]',
      '  script: "./bin/deploy.sh && cat conf/app.yaml && cat missing/file.txt && ./bin/new.sh"',
      '---',
      'apiVersion: nyl.io/v1',
      'kind: Terraform',
      'metadata: {name: t}',
      'spec: {module: "stacks/${{ env.name }}"}',
    ].join('\n'),
  };
  const project = await loadProject('/p', memoryTree(files));
  assert.deepEqual(project.includes, ['units/*.yaml']);
  const patterns = projectReadPatterns(project, [...project.units.values()], BUILTIN_KINDS);
  const reads = (p) => readsPath(patterns, p);
  for (const p of ['nyl.yaml', 'units/b.yaml', 'migrations/003.sql', 'bin/deploy.sh', 'bin/new.sh', 'conf/app.yaml', 'stacks/dev/main.tf'])
    assert.ok(reads(p), p);
  for (const p of ['README.md', 'units/sub/c.yaml', 'migrations/README.md', 'missing/file.txt', 'bin/other.sh']) assert.ok(!reads(p), p);
  assert.deepEqual(pathspecsOf(patterns), ['bin/deploy.sh', 'bin/new.sh', 'conf/app.yaml', 'migrations', 'nyl.yaml', 'stacks', 'units']);
  assert.deepEqual(pathspecsOf([{ glob: '**/*.sql' }, { prefix: 'a' }]), [''], 'a glob from the root looks at the whole project');
});

test('a program that only a reference renders is not read: the key never depends on whether other units load the listing', async () => {
  const all = await objects();
  const unit = (spec) => ({ kind: 'Command', spec });
  // Whether the listing is loaded depends on the whole project (readsSource of any unit); what
  // a unit reads must follow from its own spec, or an unrelated unit's inputs would run it again.
  const spec = { run: ['${{ units.build.outputs.program }}'] };
  assert.equal(readsSource(unit(spec)), false);
  assert.deepEqual(sourceReads(unit(spec), { run: ['./bin/deploy.sh'] }, all, BUILTIN_KINDS), {});
});
