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

/** The NYL-USAGE diagnostic parseCommand throws for argv of a command. */
function usageOf(argv) {
  const { spec, rest } = findCommand(argv);
  let error;
  try {
    parseCommand(spec, rest);
  } catch (e) {
    error = e;
  }
  assert.ok(error, `nyl ${argv.join(' ')} was accepted`);
  assert.equal(error.diagnostics?.[0]?.code, 'NYL-USAGE', String(error));
  return error.diagnostics[0];
}

test('an empty value (an unset shell variable) is NYL-USAGE, never "not given": --unit "" does not select every unit', () => {
  for (const argv of [
    ['reconcile', '-e', 'dev', '--unit', ''],
    ['reconcile', '-e', 'dev', '--unit', '  '],
    ['reconcile', '-e', 'dev', '--units', ''],
    ['reconcile', '-e', 'dev', '--unit', 'a', '--unit', ''],
    ['reconcile', '-e', 'dev', '--units', 'a,,b'],
    ['reconcile', '-e', 'dev', '--units', 'a,'],
    ['reconcile', '-e', 'dev', '--units', ','],
    ['recover', '-e', 'dev', '--unit', ''],
    ['hold', '-e', 'dev', '--unit', ''],
    ['resume', '-e', 'dev', '--unit', ''],
    ['status', '-e', ''],
    ['reconcile', '-e', 'dev', '--source', ''],
    ['reconcile', '-e', 'dev', '--unit-log-dir', ''],
    ['state', 'init', '-e', 'dev', '--author', ''],
  ]) {
    const d = usageOf(argv);
    assert.match(d.message, /empty/, argv.join(' '));
    assert.ok(d.fix.length > 0);
  }
  const ok = findCommand(['reconcile', '-e', 'dev', '--units', 'a, b', '--unit', 'c']);
  assert.deepEqual(parseCommand(ok.spec, ok.rest).values.units, ['a, b']);
  // An empty --reason is no reason: recover --retry refuses it with NYL-RECOVER-REASON-REQUIRED.
  const blank = findCommand(['recover', '-e', 'dev', '--unit', 'a', '--retry', '--reason', ' ']);
  assert.equal(parseCommand(blank.spec, blank.rest).values.reason, ' ');
});

test('--wait-lease takes a duration from 0s to 24h; anything else is NYL-USAGE naming the range', () => {
  for (const text of ['soon', '25h', '2d', '100000000h']) {
    const d = usageOf(['reconcile', '-e', 'dev', '--wait-lease', text]);
    assert.match(d.message, new RegExp(`--wait-lease ${text}`));
    assert.match(`${d.message} ${d.fix}`, /24h/);
  }
  for (const text of ['0s', '500ms', '10m', '24h']) {
    const { spec, rest } = findCommand(['hold', '-e', 'dev', '--unit', 'a', '--wait-lease', text]);
    assert.equal(parseCommand(spec, rest).values['wait-lease'], text);
  }
});

test('state init --help agrees with the command: --fresh works without --reason, which it records when given', () => {
  const { spec } = findCommand(['state', 'init']);
  assert.match(spec.usage, /\[--fresh \[--reason <text>\]\]/, 'the usage shows --reason as optional with --fresh');
  assert.match(spec.description, /--reason is recorded/);
  const parsed = parseCommand(spec, ['-e', 'dev', '--fresh']);
  assert.equal(parsed.values.fresh, true, 'accepted without --reason (the fix of NYL-STATE-DELETED names --fresh alone)');
});
