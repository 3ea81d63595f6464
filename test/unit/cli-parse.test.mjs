// Argument parsing (src/cli/parse.ts) and the fast paths of the entry point: --version and --help
// load neither dispatch nor any operation.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findCommand } from '../../dist/cli/registry.js';
import { parseCommand } from '../../dist/cli/parse.js';
import { environmentSelectorOf, singleEnvironmentOf, unitsOfSingle } from '../../dist/commands/selection.js';

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

/** The modules a registry entry is made of: loading them costs no operation. */
function isRegistryEntry(file) {
  return /^commands\/.+-command\.js$/.test(file) || ['ui/command.js', 'commands/command.js', 'commands/options.js', 'commands/across.js'].includes(file);
}

for (const argv of [['--version'], ['--help'], ['help', 'reconcile'], ['reconcile', '--help'], ['state', 'init', '-h']]) {
  test(`nyl ${argv.join(' ')} loads only the command table and the version`, () => {
    const { stdout, loaded } = loadedBy(argv);
    assert.ok(stdout.length > 0);
    // The command table is the registry (cli/registry.js) and its entries: each family's
    // <name>-command.js, ui/command.js and the light modules they share; no operation, no renderer.
    assert.deepEqual(
      loaded.filter((f) => !isRegistryEntry(f)),
      ['cli/help.js', 'cli/main.js', 'cli/registry.js', 'util/version.js'],
    );
  });
}

test('parseCommand: options by the command table, one positional path (default .)', () => {
  const found = findCommand(['reconcile', '-e', 'dev', '--units', 'a,b', '--fail-fast', 'proj']);
  const parsed = parseCommand(found.spec, found.rest);
  assert.equal(parsed.spec.words.join(' '), 'reconcile');
  assert.deepEqual(parsed.values.environment, ['dev'], 'reconcile takes -e repeatedly');
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

// --- selecting environments: -e (repeatable where it makes sense), -l, -g -----------------------

const MULTI = ['reconcile', 'plan', 'status', 'teardown', 'verify'];

/** The parsed command line of argv (a command and its arguments). */
function parsed(argv) {
  const { spec, rest } = findCommand(argv);
  return parseCommand(spec, rest);
}

/** The NYL-USAGE diagnostic fn throws. */
function usageFrom(fn) {
  try {
    fn();
  } catch (e) {
    assert.equal(e.diagnostics?.[0]?.code, 'NYL-USAGE', String(e));
    return e.diagnostics[0];
  }
  assert.fail('accepted');
}

test('-e, -l and -g: every multi-environment command takes them; -e and -l repeat, -g does not', () => {
  for (const command of MULTI) {
    const { spec } = findCommand([command]);
    const byName = Object.fromEntries(spec.options.map((o) => [o.name, o]));
    assert.equal(byName.environment.multiple, true, command);
    assert.equal(byName.labels.short, 'l', command);
    assert.equal(byName.group.short, 'g', command);
    assert.match(spec.usage, /-e <env>\.\.\. \| -l <key=value> \| -g <group>/, command);
    assert.deepEqual(environmentSelectorOf(parsed([command, '-e', 'dev', '--environment', 'prod'])), { names: ['dev', 'prod'] });
    assert.deepEqual(
      { ...environmentSelectorOf(parsed([command, '-l', 'stage=prod,region=eu', '-l', 'tier=web'])).labels },
      { stage: 'prod', region: 'eu', tier: 'web' },
    );
    assert.deepEqual(environmentSelectorOf(parsed([command, '-g', 'release'])), { group: 'release' });
    assert.match(usageOf([command, '-g', 'a', '-g', 'b']).message, /--group takes one value/);
  }
});

test('exactly one form of selection: none or two is NYL-USAGE with a fix of the options given', () => {
  const none = usageFrom(() => environmentSelectorOf(parsed(['reconcile'])));
  assert.match(none.message, /needs -e <environment>, -l <key=value> or -g <group>/);
  const two = usageFrom(() => environmentSelectorOf(parsed(['plan', '-e', 'dev', '-e', 'qa', '-l', 'stage=prod'])));
  assert.match(two.message, /-e dev -e qa and -l stage=prod/);
  assert.equal(two.fix, 'pass only one of: -e dev -e qa, or -l stage=prod');
  const three = usageFrom(() => environmentSelectorOf(parsed(['status', '-e', 'dev', '-l', 'a=b', '-g', 'g'])));
  assert.match(three.fix, /-e dev, or -l a=b, or -g g/);
  for (const bad of ['stage', '=prod', 'a=1,']) assert.match(usageFrom(() => environmentSelectorOf(parsed(['status', '-l', bad]))).fix, /pass -l key=value/);
});

test('single-environment commands refuse a repeated -e instead of keeping the last', () => {
  for (const argv of [
    ['state', 'delete', '-e', 'dev', '-e', 'prod'],
    ['hold', '-e', 'dev', '--unit', 'a', '--environment', 'prod'],
    ['recover', '-e', 'dev', '-e', 'dev'],
    ['lease', 'break', '-e', 'dev', '-e', 'prod', '--reason', 'x'],
  ]) {
    const d = usageOf(argv);
    assert.match(d.message, /acts on one environment, and was given -e dev, (-e|--environment) (dev|prod)/, argv.join(' '));
    assert.match(d.fix, /^pass (-e|--environment) (dev|prod) once/);
  }
  assert.match(usageOf(['reconcile', '-e', 'dev', '--source', 'a', '--source', 'b']).message, /--source takes one value, and was given --source a, --source b/);
  assert.equal(
    findCommand(['state', 'delete']).spec.options.find((o) => o.name === 'labels'),
    undefined,
  );
  // state init selects environments as reconcile does: repeated -e, -l or -g.
  assert.ok(findCommand(['state', 'init']).spec.options.find((o) => o.name === 'labels'));
  assert.deepEqual(environmentSelectorOf(parsed(['state', 'init', '-e', 'dev', '-e', 'prod'])), { names: ['dev', 'prod'] });
});

test('the one environment of a command line that names one (a repeat of it included)', () => {
  assert.equal(singleEnvironmentOf(parsed(['reconcile', '-e', 'dev'])), 'dev');
  assert.equal(singleEnvironmentOf(parsed(['status', '-e', 'dev', '-e', 'dev'])), 'dev');
  // Several are a multi-environment run, which never asks for one environment.
  assert.throws(() => singleEnvironmentOf(parsed(['reconcile', '-e', 'dev', '-e', 'prod'])), /selection of several/);
  assert.throws(() => singleEnvironmentOf(parsed(['status', '-g', 'eu'])), /selection of several/);
});

test('--unit ENV/UNIT on a single-environment run: its own environment only', () => {
  assert.deepEqual(unitsOfSingle('dev', ['dev/web', 'db', 'web']), ['web', 'db']);
  assert.deepEqual(unitsOfSingle('dev', []), []);
  assert.match(usageFrom(() => unitsOfSingle('dev', ['prod/web'])).fix, /--unit dev\/web/);
});
