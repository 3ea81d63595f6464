// End-to-end: `nyl graph` of a real project and state: every unit with its state as status
// resolves it (current, failed, held, pending behind a failure), the edges of dependsOn,
// triggers and output references (with the pointer where the consumer reads the output), in
// each format; it writes nothing.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { cleanupAll, git, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { command, environment, nyl, nylYaml } from '../support/cli.mjs';

after(cleanupAll);

test('nyl graph: states and edges of a real environment, as text, DOT, Mermaid and JSON; nothing written', () => {
  const bare = makeBareRepo();
  const flag = path.join(tempDir('nyl-graph-'), 'fail');
  fs.writeFileSync(flag, '');
  const project = makeProject({
    'nyl.yaml': nylYaml(
      environment('dev', `state: {repository: {repoURL: "${pathToFileURL(bare).href}"}}`),
      command('net', `script: 'echo "{\\"name\\": \\"shop\\"}" > "$NYL_OUTPUTS"'`),
      command('db', 'env: {NET: "${{ units.net.outputs.name }}"}\nscript: \'true\''),
      command('migrate', `dependsOn: [db]\nscript: 'test ! -e ${flag}'`),
      command('app', "dependsOn: [migrate]\ntriggers: [net]\nscript: 'true'"),
    ),
  });
  const ok = (args, exit = 0) => {
    const r = nyl(project, args);
    assert.equal(r.code, exit, `nyl ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
    return r;
  };
  ok(['state', 'init', '-e', 'dev']);
  ok(['reconcile', '-e', 'dev'], 3);
  ok(['hold', '-e', 'dev', '--unit', 'db', '--reason', 'incident']);
  const refs = git(bare, 'for-each-ref');

  const text = ok(['graph', '-e', 'dev']).stdout;
  assert.equal(
    text.split('\n').slice(0, 4).join('\n'),
    [
      'net  Command  current',
      '├─ db  Command  held  <- outputs.name at /env/NET',
      '│  └─ migrate  Command  failed  <- dependsOn',
      '│     └─ app  Command  pending  <- dependsOn',
    ].join('\n'),
  );
  assert.match(text, /^└─ app \(see above\) {2}<- triggers$/m);

  const json = ok(['graph', '-e', 'dev', '-o', 'json']).json;
  assert.deepEqual(
    json.nodes.map((n) => [n.name, n.state]),
    [
      ['net', 'current'],
      ['db', 'held'],
      ['migrate', 'failed'],
      ['app', 'pending'],
    ],
  );
  assert.deepEqual(
    json.edges.find((e) => e.via === 'reference'),
    { from: 'net', to: 'db', via: 'reference', output: 'name', pointer: '/env/NET' },
  );
  assert.match(ok(['graph', '-e', 'dev', '-o', 'dot']).stdout, /^ {2}"migrate" -> "app" \[label="dependsOn"\];$/m);
  assert.match(ok(['graph', '-e', 'dev', '-o', 'mermaid']).stdout, /^flowchart LR\n/);
  assert.equal(git(bare, 'for-each-ref'), refs, 'graph writes nothing');
  assert.match(ok(['graph', '-e', 'dev', '-o', 'table'], 0).stdout, /^net {2}Command {2}current$/m);
  assert.match(ok(['graph', '-e', 'dev', '-o', 'svg'], 1).stderr, /-o svg is not an output format/);
});
