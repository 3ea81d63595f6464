// Colour (src/cli/style.ts), nested details as text lines, "did you mean" (src/cli/suggest.ts)
// and the completion scripts (src/cli/completion.ts), in-process against dist/.
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { colorWanted } from '../../dist/cli/style.js';
import { withColor } from '../../dist/commands/text/style.js';
import { renderDiagnostic, renderStateOperation, renderTable, valueLines, withDiagnostics } from '../../dist/commands/text/render.js';
import { renderReconcile } from '../../dist/commands/reconcile/render.js';
import { renderStatus } from '../../dist/commands/inspect/render-status.js';
import { renderPlan } from '../../dist/commands/plan/render.js';
import { shellQuote, unknownCommandHelp, unknownOptionFix } from '../../dist/cli/suggest.js';
import { COMMANDS, findCommand, groupOf, subcommandsOf } from '../../dist/cli/registry.js';
import { groupHelp } from '../../dist/cli/help.js';
import { editDistance } from '../../dist/util/closest.js';
import { cleanupAll, hermeticEnv, makeProject } from '../support/git-fixtures.mjs';

after(cleanupAll);

const DIST = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist');
const ESC = /\u001b\[/;
const strip = (text) => text.replace(/\u001b\[\d+m/g, '');
/** A line of text output that shows JSON object or array syntax. */
const JSON_SYNTAX = /\{"|\["|\[\]|\{\}|:\s*[[{]/;

test('colorWanted: --no-color, then NO_COLOR (non-empty), then FORCE_COLOR, then a terminal that is not dumb', () => {
  const cases = [
    [{ isTTY: true, env: {}, refused: false }, true],
    [{ isTTY: undefined, env: {}, refused: false }, false],
    [{ isTTY: false, env: {}, refused: false }, false],
    [{ isTTY: true, env: { TERM: 'dumb' }, refused: false }, false],
    [{ isTTY: true, env: {}, refused: true }, false],
    [{ isTTY: true, env: { NO_COLOR: '1' }, refused: false }, false],
    [{ isTTY: true, env: { NO_COLOR: '' }, refused: false }, true],
    [{ isTTY: false, env: { FORCE_COLOR: '1' }, refused: false }, true],
    [{ isTTY: true, env: { FORCE_COLOR: '0' }, refused: false }, false],
    [{ isTTY: false, env: { FORCE_COLOR: '' }, refused: false }, false],
    [{ isTTY: false, env: { FORCE_COLOR: '1', NO_COLOR: 'yes' }, refused: false }, false],
    [{ isTTY: false, env: { FORCE_COLOR: '1' }, refused: true }, false],
  ];
  for (const [inputs, wanted] of cases) assert.equal(colorWanted(inputs), wanted, JSON.stringify(inputs));
});

function statusReport() {
  const unit = (name, state, detail = '') => ({ name, kind: 'Command', state, receipt: 'none', detail });
  return {
    environment: 'dev',
    unitOrder: ['db', 'web', 'cache', 'job'],
    units: { db: unit('db', 'current'), web: unit('web', 'failed', 'exit 1\nmore'), cache: unit('cache', 'held'), job: unit('job', 'pending') },
    source: 's',
    desired: 'd',
    observed: 'o',
    details: {},
    errors: [],
    warnings: [{ code: 'NYL-UNIT-FAILED', severity: 'warning', message: 'web failed', fix: 'fix it', units: ['web'] }],
    notes: [],
  };
}

function reconcileReport(operation = 'reconcile') {
  const unit = (result, extra = {}) => ({ kind: 'Command', result, detail: '', dispatched: false, ...extra });
  return {
    operation,
    environment: 'dev',
    unitOrder: ['a', 'b', 'c'],
    units: { a: unit(operation === 'plan' ? 'execute' : 'executed'), b: unit('uncertain'), c: unit(operation === 'plan' ? 'wait' : 'blocked') },
    run: 'r',
    source: 's',
    desired: 'd',
    observed: 'o',
    errors: [{ code: 'NYL-LEASE-LOST', severity: 'error', message: 'lost', fix: 'see `nyl status -e dev`' }],
    warnings: [],
    notes: [],
  };
}

test('renderers: colour off (the default) prints no escape code; colour on adds codes and nothing else', () => {
  const renders = [() => renderStatus(statusReport()), () => renderReconcile(reconcileReport()), () => renderPlan(reconcileReport('plan'))];
  for (const render of renders) {
    const plain = render();
    assert.doesNotMatch(plain, ESC);
    assert.equal(withColor(false, render), plain);
    const coloured = withColor(true, render);
    assert.match(coloured, ESC);
    assert.equal(strip(coloured), plain, 'the same text, byte for byte, once the codes are gone');
  }
  const status = withColor(true, () => renderStatus(statusReport()));
  assert.match(status, /^db +Command +\u001b\[32mcurrent\u001b\[39m  none/m, 'green, padded after the code');
  assert.match(status, /^web +Command +\u001b\[31mfailed\u001b\[39m   none/m);
  assert.match(status, /^cache +Command +\u001b\[33mheld\u001b\[39m     none/m);
  assert.match(status, /^\u001b\[1m\u001b\[33mwarning NYL-UNIT-FAILED \(web\)\u001b\[39m\u001b\[22m$/m, 'a warning heading in bold yellow');
  assert.match(
    withColor(true, () => renderReconcile(reconcileReport())),
    /^\u001b\[1m\u001b\[31merror NYL-LEASE-LOST\u001b\[39m\u001b\[22m$/m,
  );
  assert.match(
    withColor(true, () => renderPlan(reconcileReport('plan'))),
    /\u001b\[33mwait\u001b\[39m/,
  );
});

test('renderTable: a coloured last column gets no padding, and headers and other columns stay plain', () => {
  const rows = [
    ['a', 'failed'],
    ['bb', 'current'],
  ];
  const coloured = withColor(true, () => renderTable(['UNIT', 'STATE'], rows, 1));
  assert.equal(coloured, 'UNIT  STATE\na     \u001b[31mfailed\u001b[39m\nbb    \u001b[32mcurrent\u001b[39m');
  assert.equal(strip(coloured), renderTable(['UNIT', 'STATE'], rows, 1));
  assert.equal(
    withColor(true, () => renderDiagnostic({ code: 'NYL-X', severity: 'note', message: 'm', fix: 'f' })).split('\n')[0],
    '\u001b[1mnote NYL-X\u001b[22m',
  );
});

test('valueLines: objects indented, lists one item per line, empty ones (none), never JSON', () => {
  assert.deepEqual(valueLines('state', { generation: 1, status: 'active', fresh: false }, 1), [
    '  state:',
    '    generation: 1',
    '    status: active',
    '    fresh: false',
  ]);
  assert.deepEqual(valueLines('runs', ['r1', 'r2'], 1), ['  runs:', '    - r1', '    - r2']);
  assert.deepEqual(valueLines('imported', [], 1), ['  imported: (none)']);
  assert.deepEqual(valueLines('dropped', {}, 1), ['  dropped: (none)']);
  assert.deepEqual(valueLines('holds', [{ unit: 'a', by: { name: 'x' } }, [], null], 1), [
    '  holds:',
    '    - unit: a',
    '      by:',
    '        name: x',
    '    - (none)',
    '    - null',
  ]);
  assert.deepEqual(valueLines('unit', 'a', 1), ['  unit: a'], 'a string as it always was');
});

test('typical state operations render their details without JSON syntax', () => {
  const who = 'Alice Example <alice@example.com>';
  const details = [
    { state: { generation: 1, status: 'active', fresh: false } },
    { holder: { host: 'ci-runner-7', name: who, pid: 28160 }, broken: { by: who, reason: 'killed', at: '2026-11-30T03:29:35Z' } },
    { imported: [], runs: ['0192'], recovered: ['migrate'], leaseBroken: { by: who, reason: 'killed', run: '0192', holder: who } },
    { unit: 'db', deliveredTo: { run: '0193', runner: { host: 'h', name: who, pid: 1 }, operation: 'reconcile' } },
    {
      restoredFrom: { commit: 'c', desired: 'c', observed: 'o' },
      restored: { database: 'restored' },
      resurrected: { database: 'u' },
      dropped: {},
      holdsKept: [],
    },
    { units: { site: { drift: 'drifted', kind: 'Command' } }, skipped: { cache: 'held' }, observations: [{ unit: 'site', status: 'drifted' }] },
  ];
  for (const [i, d] of details.entries()) {
    const text = renderStateOperation({
      operation: i === 5 ? 'verify' : 'op',
      environment: 'dev',
      result: 'done',
      desired: 'd',
      details: d,
      errors: [],
      warnings: [],
      notes: [],
    });
    for (const line of text.split('\n')) assert.doesNotMatch(line, JSON_SYNTAX, text);
  }
});

test('did you mean: the corrected command line, quoted to run as printed; none when nothing is close', () => {
  assert.equal(editDistance('unti', 'unit'), 1, 'a swap of two letters is one edit');
  assert.equal(editDistance('reconile', 'reconcile'), 1);
  assert.deepEqual(unknownCommandHelp(['reconile', '-e', 'dev']), {
    message: 'unknown command: nyl reconile -e dev',
    fix: 'did you mean `nyl reconcile -e dev`?',
  });
  assert.equal(unknownCommandHelp(['state', 'innit', '-e', 'dev']).fix, 'did you mean `nyl state init -e dev`?');
  assert.equal(unknownCommandHelp(['lease', '-e', 'dev']).fix, 'see `nyl lease --help` for what each does');
  assert.equal(unknownCommandHelp(['frobnicate']).fix, 'see `nyl --help` for the commands');
  assert.equal(unknownCommandHelp(['statu', '-e', 'dev']).fix, 'did you mean `nyl status -e dev`?', 'of two equally close, the one the word begins');
  assert.equal(unknownCommandHelp(['stat', 'init']).fix, 'did you mean `nyl state init`?');
  assert.equal(unknownCommandHelp(['plna', '-e', 'dev', '--reason', "it's late"]).fix, "did you mean `nyl plan -e dev --reason 'it'\\''s late'`?");
  const reconcile = findCommand(['reconcile']).spec;
  assert.equal(unknownOptionFix(reconcile, ['--unti', 'a', '-e', 'dev'], '--unti'), 'did you mean --unit? `nyl reconcile --unit a -e dev`');
  assert.equal(unknownOptionFix(reconcile, ['--concurency=2'], '--concurency'), 'did you mean --concurrency? `nyl reconcile --concurrency=2`');
  assert.equal(unknownOptionFix(reconcile, ['--frobnicate'], '--frobnicate'), 'see `nyl reconcile --help`');
  assert.equal(unknownOptionFix(reconcile, ['-x'], '-x'), 'see `nyl reconcile --help`');
  assert.equal(shellQuote('a b'), "'a b'");
  assert.equal(shellQuote('--unit=a,b'), '--unit=a,b');
});

test('completion scripts name every command, subcommand and option of the command table', async () => {
  const { completion } = await import('../../dist/cli/completion.js');
  for (const shell of ['bash', 'zsh', 'fish']) {
    let text = '';
    const write = process.stdout.write;
    process.stdout.write = (chunk) => ((text += chunk), true);
    try {
      assert.equal(await completion(['completion', shell]), 0);
    } finally {
      process.stdout.write = write;
    }
    for (const spec of COMMANDS) {
      for (const word of spec.words) assert.ok(text.includes(word), `${shell}: ${word}`);
      for (const o of spec.options)
        assert.ok(shell === 'fish' ? text.includes(`-l ${o.name}`) : text.includes(`--${o.name}`), `${shell}: ${spec.words.join(' ')} --${o.name}`);
    }
  }
});

test('subcommandsOf: the commands of a group in table order, as the group help, "did you mean" and completion list them', () => {
  const state = subcommandsOf('state');
  assert.ok(state.length > 1);
  assert.deepEqual(
    state,
    COMMANDS.filter((c) => c.words[0] === 'state' && c.words.length > 1),
  );
  assert.deepEqual(subcommandsOf('status'), [], 'a command without subcommands');
  assert.deepEqual(subcommandsOf('frobnicate'), []);
  assert.equal(groupOf(['state']), 'state');
  assert.equal(groupOf(['status']), undefined);
  for (const c of state) assert.ok(groupHelp('state').includes(`  ${c.words.slice(1).join(' ')}`), c.words.join(' '));
  assert.match(unknownCommandHelp(['state']).message, new RegExp(`the subcommands of nyl state: ${state.map((c) => c.words[1]).join(', ')}$`));
});

test('withDiagnostics: the body and a newline, the diagnostics after a blank line; an empty body prints nothing of its own', () => {
  const d = { severity: 'warning', code: 'NYL-X', message: 'm', fix: 'f' };
  assert.equal(withDiagnostics('body', []), 'body\n');
  assert.equal(withDiagnostics('body', [d]), `body\n\n${renderDiagnostic(d)}\n`);
  assert.equal(withDiagnostics('', []), '');
  assert.equal(withDiagnostics('', [d]), `${renderDiagnostic(d)}\n`);
});

test('nyl __complete environments (each TAB press) lists the environments without loading the command dispatcher', () => {
  const env = (name) =>
    `apiVersion: nyl.io/v1\nkind: Environment\nmetadata: {name: ${name}}\nspec:\n  state: {repository: {repoURL: "file:///nowhere/state.git"}}`;
  const project = makeProject({ 'nyl.yaml': `${[env('prod'), env('dev')].join('\n---\n')}\n` });
  const script = `require(${JSON.stringify(path.join(DIST, 'cli', 'main.js'))}).main(['__complete', 'environments']).then((code) => {
    const loaded = Object.keys(require.cache).filter((f) => f.startsWith(${JSON.stringify(DIST + path.sep)})).map((f) => f.slice(${DIST.length + 1}));
    process.stderr.write('EXIT ' + code + ' LOADED ' + JSON.stringify(loaded.sort()) + '\\n');
  });`;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: project, env: hermeticEnv(), encoding: 'utf8' });
  assert.equal(r.stdout, 'dev\nprod\n', r.stderr);
  const [, code, loaded] = /EXIT (\d+) LOADED (.*)/.exec(r.stderr);
  assert.equal(code, '0');
  assert.ok(JSON.parse(loaded).includes('cli/runtime.js'), loaded);
  assert.ok(!JSON.parse(loaded).includes('cli/dispatch.js'), loaded);
});

test('nyl state --help and nyl lease load only the command table and the version', () => {
  for (const argv of [['state', '--help'], ['lease']]) {
    const script = `require(${JSON.stringify(path.join(DIST, 'cli', 'main.js'))}).main(${JSON.stringify(argv)}).then(() => {
      const loaded = Object.keys(require.cache).filter((f) => f.startsWith(${JSON.stringify(DIST + path.sep)})).map((f) => f.slice(${DIST.length + 1}));
      process.stderr.write('LOADED ' + JSON.stringify(loaded.sort()) + '\\n');
    });`;
    const r = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8' });
    assert.match(r.stdout, /Subcommands:/);
    // The command table is the registry (cli/registry.js) and its entries; no operation, no renderer.
    const entry = (f) =>
      /^commands\/.+-command\.js$/.test(f) || ['ui/command.js', 'commands/command.js', 'commands/options.js', 'commands/across.js'].includes(f);
    assert.deepEqual(
      JSON.parse(r.stderr.split('LOADED ')[1]).filter((f) => !entry(f)),
      ['cli/help.js', 'cli/main.js', 'cli/registry.js', 'util/version.js'],
    );
  }
});
