// The CLI as a user meets it (issue 16): the subcommands of `nyl state` and `nyl lease`, "did you
// mean" fixes that run as printed, colour only where it belongs, shell completion generated from
// the command table, text output without JSON, and nyl installed from its npm tarball without a
// network. Few nyl processes: the renderers and decisions are unit-tested in
// test/unit/cli-style.test.mjs.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { NYL, REPO_ROOT, cliEnv, command, environment, nyl, nylYaml } from '../support/cli.mjs';
import { argvOf, diagnosticsOf, nylCommands } from '../support/fix-texts.mjs';
import { cleanupAll, git, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';

after(cleanupAll);

const ESC = /\u001b\[/;
const AUTHOR = ['--author', 'Test <test@example.com>'];

/** A line of text output that shows JSON object or array syntax. */
const JSON_SYNTAX = /\{"|\["|\[\]|\{\}|:\s*[[{]/;

function project() {
  const bare = makeBareRepo();
  const yaml = nylYaml(
    environment('dev', `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}`),
    environment('prod', `state:\n  repository: {repoURL: "${pathToFileURL(bare).href}"}`),
    command('a', 'run: ["true"]'),
    command('b', 'dependsOn: [a]\nscript: "exit 1"'),
  );
  return { dir: makeProject({ 'nyl.yaml': yaml }), bare };
}

function which(program) {
  return spawnSync('sh', ['-c', `command -v ${program}`], { encoding: 'utf8' }).status === 0;
}

describe('help and did-you-mean', () => {
  test('nyl state and nyl lease list their subcommands; alone they exit 1 as nyl does', () => {
    const dir = tempDir();
    const help = nyl(dir, ['state', '--help']);
    assert.equal(help.code, 0, help.stderr);
    for (const sub of ['init', 'move', 'forget', 'restore', 'reset', 'delete']) assert.match(help.stdout, new RegExp(`^  ${sub} +\\S`, 'm'));
    const alone = nyl(dir, ['lease']);
    assert.equal(alone.code, 1);
    assert.match(alone.stdout, /^ {2}break +Declare the holder of the lease gone$/m);
    assert.equal(nyl(dir, ['help', 'state']).stdout, help.stdout);
  });

  test('a mistyped command or option gets a fix that names the corrected command line, which runs as printed', () => {
    const { dir } = project();
    for (const [argv, wanted] of [
      [
        ['reconile', '-e', 'dev', '-o', 'json'],
        ['reconcile', '-e', 'dev', '-o', 'json'],
      ],
      [
        ['status', '-e', 'dev', '--outptu', 'json'],
        ['status', '-e', 'dev', '--output', 'json'],
      ],
    ]) {
      const r = nyl(dir, argv);
      assert.equal(r.code, 1);
      const [usage] = diagnosticsOf(r);
      assert.equal(usage.code, 'NYL-USAGE');
      const [fix] = nylCommands(usage.fix);
      assert.deepEqual(argvOf(fix), wanted, usage.fix);
      const ran = nyl(dir, argvOf(fix));
      assert.ok(!diagnosticsOf(ran).some((d) => d.code === 'NYL-USAGE'), `${fix} is no usage error: ${ran.stdout}${ran.stderr}`);
    }
    const typo = nyl(dir, ['reconcile', '--unti', 'a']);
    assert.match(typo.stderr, /did you mean --unit\? `nyl reconcile --unit a`/);
  });
});

describe('colour and text output', () => {
  const { dir, bare } = project();
  nyl(dir, ['state', 'init', '-e', 'dev', ...AUTHOR]);
  const initialized = git(bare, 'rev-parse', 'refs/heads/nyl/dev/desired');
  nyl(dir, ['reconcile', '-e', 'dev', ...AUTHOR, '-o', 'json']);

  test('no escape codes without a terminal, with NO_COLOR, or with --no-color; FORCE_COLOR colours a log', () => {
    const plain = nyl(dir, ['status', '-e', 'dev']);
    assert.equal(plain.code, 3);
    assert.doesNotMatch(plain.stdout + plain.stderr, ESC, 'a pipe is no terminal');
    const forced = nyl(dir, ['status', '-e', 'dev'], { env: { FORCE_COLOR: '1' } });
    assert.match(forced.stdout, /\u001b\[31mfailed\u001b\[39m/);
    assert.equal(forced.stdout.replace(/\u001b\[\d+m/g, ''), plain.stdout, 'colour adds escape codes and nothing else');
    for (const [env, args] of [
      [{ FORCE_COLOR: '1', NO_COLOR: '1' }, []],
      [{ FORCE_COLOR: '1' }, ['--no-color']],
    ]) {
      const r = nyl(dir, ['status', ...args, '-e', 'dev'], { env });
      assert.equal(r.stdout, plain.stdout, `${JSON.stringify(env)} ${args}`);
    }
    const usage = nyl(dir, ['status', '-e', 'dev', '--bogus', '--no-color'], { env: { FORCE_COLOR: '1' } });
    assert.match(usage.stderr, /^error NYL-USAGE$/m, '--no-color counts on stderr too, wherever it stands');
  });

  test('a terminal gets colour, unless NO_COLOR or --no-color', { skip: !which('script') && 'script(1) of util-linux is not installed' }, () => {
    const run = (prefix, args) =>
      spawnSync('script', ['-qec', `${prefix} ${JSON.stringify(process.execPath)} ${JSON.stringify(NYL)} status -e dev ${args}`, '/dev/null'], {
        cwd: dir,
        env: cliEnv({ FORCE_COLOR: undefined, NO_COLOR: undefined, TERM: 'xterm' }),
        encoding: 'utf8',
      });
    assert.match(run('', '').stdout, /\u001b\[32mcurrent\u001b\[39m/);
    assert.doesNotMatch(run('NO_COLOR=1', '').stdout, ESC);
    assert.doesNotMatch(run('', '--no-color').stdout, ESC);
  });

  test('the text of state operations shows nested details as lines, never JSON', () => {
    const outputs = [
      nyl(dir, ['hold', '-e', 'dev', '--unit', 'a', '--reason', 'incident', ...AUTHOR]),
      nyl(dir, ['resume', '-e', 'dev', '--unit', 'a', '--reason', 'resolved', ...AUTHOR]),
      nyl(dir, ['state', 'restore', '-e', 'dev', '--to', initialized, '--reason', 'undo', ...AUTHOR]),
      nyl(dir, ['state', 'init', '-e', 'prod', ...AUTHOR]),
    ];
    for (const r of outputs) {
      assert.ok(r.code === 0 || r.code === 2, r.stderr);
      for (const line of r.stdout.split('\n')) assert.doesNotMatch(line, JSON_SYNTAX, r.stdout);
    }
    assert.match(outputs[3].stdout, /^ {2}state:\n {4}generation: 1\n {4}status: active$/m);
  });
});

describe('completion', () => {
  test('nyl completion bash passes bash -n and completes subcommands, options, -o values and environments', () => {
    const { dir } = project();
    const script = nyl(dir, ['completion', 'bash']);
    assert.equal(script.code, 0, script.stderr);
    const file = path.join(tempDir(), 'nyl.bash');
    fs.writeFileSync(file, script.stdout);
    assert.equal(spawnSync('bash', ['-n', file], { encoding: 'utf8' }).status, 0);
    // COMP_WORDS[0] is what completion runs for environments: the built CLI, as `nyl` would be.
    const complete = (words) =>
      spawnSync('bash', ['--norc', '-i', '-c', `source ${file}; COMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]}-1)); _nyl; echo "\${COMPREPLY[*]}"`], {
        cwd: dir,
        env: cliEnv(),
        encoding: 'utf8',
      }).stdout.trim();
    const bin = JSON.stringify(NYL);
    assert.equal(complete(`${bin} sta`), 'state status');
    assert.equal(complete(`${bin} state re`), 'restore reseal reset');
    assert.equal(complete(`${bin} reconcile --unit`), '--unit --units --unit-log-dir');
    assert.equal(complete(`${bin} status -o ''`), 'text table json');
    assert.equal(complete(`${bin} plan -e ''`), 'dev prod');
    // Each command's own -o values; unit names (not file names) after --unit, the last of a list.
    assert.equal(complete(`${bin} graph -o ''`), 'text table dot mermaid json');
    assert.equal(complete(`${bin} reconcile -e dev --unit ''`), 'a b');
    assert.equal(complete(`${bin} plan --units a,''`), 'a,a a,b');
    assert.equal(complete(`${bin} state init -e ''`), 'dev prod');
  });

  for (const shell of ['zsh', 'fish']) {
    test(`nyl completion ${shell} passes ${shell} -n`, { skip: !which(shell) && `${shell} is not installed` }, () => {
      const script = nyl(tempDir(), ['completion', shell]);
      const file = path.join(tempDir(), `nyl.${shell}`);
      fs.writeFileSync(file, script.stdout);
      const r = spawnSync(shell, ['-n', file], { encoding: 'utf8' });
      assert.equal(r.status, 0, r.stderr);
      if (shell !== 'fish') return;
      const listed = spawnSync('fish', ['--no-config', '-c', `source ${file}; complete -C 'nyl state re'`], { encoding: 'utf8' }).stdout;
      assert.deepEqual(
        listed
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split('\t')[0])
          .sort(),
        ['reset', 'restore'],
      );
    });
  }
});

describe('install as a package', () => {
  test('npm pack, then an offline npm install -g --prefix: nyl runs from another directory', () => {
    const out = tempDir('nyl-pack-');
    const env = { ...cliEnv(), npm_config_cache: path.join(out, 'npm-cache'), npm_config_update_notifier: 'false' };
    // --ignore-scripts: dist/ is built already (tests run after `npm run build`); prepare would rebuild it under the running tests.
    const pack = spawnSync('npm', ['pack', '--ignore-scripts', '--pack-destination', out], { cwd: REPO_ROOT, env, encoding: 'utf8' });
    assert.equal(pack.status, 0, pack.stderr);
    const tarball = path.join(out, pack.stdout.trim().split('\n').pop());
    const files = spawnSync('tar', ['tzf', tarball], { encoding: 'utf8' }).stdout.split('\n');
    for (const f of ['bin/nyl', 'bin/load-bundle.cjs', 'dist/nyl.cjs', 'dist/nyl.cjs.cache', 'package.json'])
      assert.ok(files.includes(`package/${f}`), `${f} is in the tarball`);
    assert.ok(!files.includes('package/dist/cli/main.js'), 'the per-module build stays out');
    const prefix = path.join(out, 'global');
    const install = spawnSync('npm', ['install', '-g', '--prefix', prefix, tarball, '--offline', '--no-audit', '--no-fund'], {
      cwd: out,
      env,
      encoding: 'utf8',
    });
    assert.equal(install.status, 0, install.stderr);
    const installed = path.join(prefix, 'bin', 'nyl');
    const version = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, 'package.json'), 'utf8')).version;
    assert.equal(spawnSync(installed, ['--version'], { cwd: out, env: cliEnv(), encoding: 'utf8' }).stdout, `nyl ${version}\n`);
    const { dir } = project();
    const init = spawnSync(installed, ['state', 'init', '-e', 'dev', ...AUTHOR], { cwd: dir, env: cliEnv(), encoding: 'utf8' });
    assert.equal(init.status, 0, init.stderr);
    assert.match(init.stdout, /^state-init dev: done$/m);
  });
});
