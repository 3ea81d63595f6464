// Argument parsing (src/cli/parse.ts) and the fast paths of the entry point: --version and --help
// load neither dispatch nor any operation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCommand } from '../../dist/cli/commands.js';
import { parseCommand } from '../../dist/cli/parse.js';

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');

/** Runs main(argv) in a fresh node and returns the modules of dist/ it loaded (relative paths). */
function loadedBy(argv) {
  const script = `
    const main = require(${JSON.stringify(path.join(DIST, 'cli', 'main.js'))});
    main.main(${JSON.stringify(argv)}).then(() => {
      const dist = ${JSON.stringify(DIST + path.sep)};
      const loaded = Object.keys(require.cache).filter((f) => f.startsWith(dist)).map((f) => f.slice(dist.length));
      process.stderr.write('LOADED ' + JSON.stringify(loaded) + '\\n');
    });`;
  const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
  const line = r.stderr.split('\n').find((l) => l.startsWith('LOADED '));
  assert.ok(line, `no module list; stderr: ${r.stderr}`);
  return { stdout: r.stdout, loaded: JSON.parse(line.slice('LOADED '.length)).sort() };
}

for (const argv of [['--version'], ['--help'], ['help', 'reconcile'], ['reconcile', '--help'], ['state', 'init', '-h']]) {
  test(`nyl ${argv.join(' ')} loads only the command table and the version`, () => {
    const { stdout, loaded } = loadedBy(argv);
    assert.ok(stdout.length > 0);
    assert.deepEqual(loaded, ['cli/commands.js', 'cli/main.js', 'util/version.js']);
  });
}

test('parseCommand: options by the command table, one positional path (default .)', () => {
  const found = findCommand(['reconcile', '-e', 'dev', '--units', 'a,b', '--fail-fast', 'proj']);
  const parsed = parseCommand(found.spec, found.rest);
  assert.equal(parsed.spec.words.join(' '), 'reconcile');
  assert.equal(parsed.values.environment, 'dev');
  assert.equal(parsed.values['fail-fast'], true);
  assert.equal(parsed.path, 'proj');
  assert.equal(parseCommand(found.spec, ['-e', 'dev']).path, '.');
});

test('parseCommand: an unknown option or a second positional is NYL-USAGE with a fix', () => {
  const { spec } = findCommand(['status']);
  for (const rest of [['--bogus'], ['a', 'b']]) {
    assert.throws(
      () => parseCommand(spec, rest),
      (error) => {
        assert.equal(error.diagnostics[0].code, 'NYL-USAGE');
        assert.match(error.diagnostics[0].fix, /nyl status --help/);
        return true;
      },
    );
  }
});
