// Fix texts work as printed: for every catalog code whose fix names a `nyl ...` command, a
// scenario makes the built CLI print it, and the test runs each command the fix names exactly as
// printed (split into words as sh would, never through a shell), in the same directory, filling
// only the placeholders in angle brackets that the reader must fill. Each command must be
// accepted (no usage error, unknown unit, missing reason, nothing to do) and make the progress
// the fix promises. A meta-check keeps the scenarios complete: every code and variant whose fix
// names a command has a scenario, or a skip below with its reason.
//
// Scenarios that share a setup are one group (one test); groups run two at a time because the
// one whose state repository goes away mostly waits for Nyl's write retries.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CATALOG, fixFor } from '../../dist/errors/catalog.js';
import { cacheRepositoryOf } from '../../dist/state/location.js';
import { cliEnv, command, environment, nylAsync, nylYaml } from '../support/cli.mjs';
import { cleanupAll, commitTree, git, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { commitFiles } from '../support/reconcile-helpers.mjs';
import { commitBody } from '../support/commit-evidence.mjs';
import { describe as show, logLines, openGate } from '../support/hold-helpers.mjs';
import { argvOf, diagnosticsOf, nylCommands, runNyl, startNyl } from '../support/fix-texts.mjs';
import { TEST_IMAGE, podmanAvailable, sh } from '../support/oci-images.mjs';
import { SKIP_NO_TERRAFORM, terraform, terraformEnv } from '../support/terraform.mjs';

after(cleanupAll);

const ENV = 'dev';
const DESIRED = 'refs/heads/nyl/dev/desired';
const OBSERVED = 'refs/heads/nyl/dev/observed';
const LEASE = 'refs/nyl/dev/lease';
const RUNS = 'refs/nyl/dev/runs/';

/**
 * Parameter sets that select a catalog fix's variants, named as the keys below spell them
 * (`CODE (variant)`). They mirror what the raise sites pass; a new variant parameter belongs here.
 */
const PROBES = {
  '': {},
  expired: { expired: true },
  init: { init: true },
  fromLocal: { fromLocal: true },
  unimported: { unimported: true },
  runs: { runs: true },
  failed: { failed: true },
  'not retryable': { retryable: false, acknowledge: true },
  'not retryable, unimported': { retryable: false, acknowledge: true, unimported: true },
  held: { held: true },
  'needs-allow-teardown': { wait: 'needs-allow-teardown' },
  'lifecycle-excluded': { wait: 'lifecycle-excluded' },
  dependents: { dependents: ['d'] },
  teardown: { command: 'teardown' },
  waitsForTeardown: { waitsForTeardown: true },
  reapply: { scope: 'reapply' },
  local: { scope: 'local' },
  digestUnknown: { digestUnknown: true },
  resurrected: { incarnation: 'resurrected' },
  repairConverge: { repair: 'converge' },
  repairApprove: { repair: 'approve' },
  prefix: { prefix: 'refs/nyl/' },
  cache: { cache: '/cache/state.git' },
  'left-lease': { left: 'lease' },
  'left-evidence': { left: 'evidence' },
  instance: { template: 'previews' },
  observed: { observed: true },
  rendered: { rendered: true },
  backend: { backend: true },
  'failed teardown': { teardown: true },
  ...Object.fromEntries(['lease', 'state', 'unit', 'run', 'signal', 'signal-set-aside', 'evidence'].map((r) => [r, { repair: r }])),
};

/**
 * Fix texts this test does not run, each with the reason. Only variants whose scenario a later
 * feature owns, or that no command prints: their texts stay as they are until that feature lands.
 */
const SKIPPED = {
  'NYL-TEARDOWN-PENDING':
    'the text without dependents is a fallback no command prints: a teardown that waits for its dependents names them (the dependents variant)',
  'NYL-TEARDOWN-HAS-DEPENDENTS':
    'the text without tombstones is a fallback no command prints: the warning names the tombstones that cite the unit (the dependents variant)',
  'NYL-TEARDOWN-WAITING': 'a publication teardown (milestone M5); names `nyl teardown --confirm-removed` (not built yet)',
  'NYL-UNIT-PENDING': 'reserved: no command reports it yet',
  'NYL-STATE-CORRUPT': 'the text without a repair is a fallback no command prints: every damaged document names its repair',
  'NYL-BACKEND-SHARED (failed teardown)':
    "a teardown refused at run time for another's state needs a unit whose current incarnation has no receipt and whose failed attempts wrote no state, while the backend holds another's resources; the teardown of a state source shows shared is blocked before it runs (the rendered variant, which names no command)",
  'NYL-UNIT-AWAITING-APPROVAL (digestUnknown)':
    'printed only for a Terraform or OpenTofu unit with requireDigest, whose digest only a plan of its module gives: test/e2e/plan.test.mjs takes that digest from `nyl plan -o json` and applies it with the printed form of `--approve`',
};

/** Commands of features not built yet: a fix may name them beside a built way forward, which runs. */
const UNBUILT = [];

/** Codes whose raise sites write their own fix (the catalog's is a fallback): their text is not compared. */
const OWN_FIX = new Set(['NYL-USAGE']);

/** Codes that say a printed command could not be run as printed. */
const NOT_RUNNABLE = new Set([
  'NYL-USAGE',
  'NYL-UNIT-UNKNOWN',
  'NYL-ENVIRONMENT-UNKNOWN',
  'NYL-PROJECT-MISSING',
  'NYL-REASON-REQUIRED',
  'NYL-RECOVER-REASON-REQUIRED',
  'NYL-RECOVER-NOTHING',
  'NYL-INTERNAL',
]);

/** What the test fills in for the placeholders every reader fills the same way. */
const FILL = { '<why>': 'checked by the fix-texts test', '<what you checked>': 'checked by the fix-texts test: nothing was applied' };

/** The words after `nyl` that name a command, to find commands a fix names outside backticks. */
const COMMAND_WORDS = /\bnyl (?:--help|reconcile|status|recover|hold|resume|state|lease|teardown|plan|verify)\b/;

function parseKey(key) {
  const m = /^(NYL-[A-Z0-9-]+)(?: \((.+)\))?$/.exec(key);
  return { code: m[1], probe: m[2] ?? '' };
}

/**
 * The printed diagnostics of one group and the commands their fixes name. `covers` declares the
 * keys the group prints; printed() refuses an undeclared one and done() a declared one not printed,
 * so the meta-check can trust the declarations.
 */
class Fixes {
  constructor(covers) {
    this.covers = new Set(covers);
    this.seen = new Set();
  }

  /**
   * The diagnostic of `key` in result (about `unit`, or the one `where` picks); its fix is the
   * catalog's text of that variant, given the raise site's other parameters `params`.
   */
  printed(result, key, { unit, where = () => true, params = {} } = {}) {
    const { code, probe } = parseKey(key);
    assert.ok(this.covers.has(key), `${key} is declared in the group's covers`);
    // A refusal about one unit may name it in its message only (no units list).
    const about = (x) => !unit || (x.units ? x.units.includes(unit) : x.message.includes(unit));
    const d = diagnosticsOf(result).find((x) => x.code === code && about(x) && where(x));
    assert.ok(d, `${key}${unit ? ` about ${unit}` : ''} is printed:\n${show(result)}`);
    if (!OWN_FIX.has(code)) {
      const named = unit ?? d.units?.[0];
      const all = { env: ENV, ...(named ? { unit: named } : {}), ...PROBES[probe], ...params };
      assert.equal(d.fix, fixFor(code, all), `the fix of ${key} is the catalog's text of that variant`);
    }
    this.seen.add(key);
    return d;
  }

  /** The commands d's fix names that this version has, with their argv (placeholders filled). */
  commands(d, fill = {}) {
    const named = nylCommands(d.fix);
    assert.ok(named.length > 0, `the fix of ${d.code} names a nyl command: ${d.fix}`);
    return named.filter((c) => !UNBUILT.some((u) => c === u || c.startsWith(`${u} `))).map((c) => ({ command: c, argv: argvOf(c, { ...FILL, ...fill }) }));
  }

  /** The one command d's fix names (asserted), to run. */
  only(d, fill) {
    const cmds = this.commands(d, fill);
    assert.equal(cmds.length, 1, `one runnable command in: ${d.fix}`);
    return cmds[0];
  }

  /** The one command d's fix names that passes `flag` (asserted): the way of a fix that names two. */
  taking(d, flag, fill) {
    const cmds = this.commands(d, fill).filter((c) => c.argv.includes(flag));
    assert.equal(cmds.length, 1, `one runnable command with ${flag} in: ${d.fix}`);
    return cmds[0];
  }

  /** Runs a printed command in cwd; it must be accepted and exit with one of `exits`. */
  async exec(cwd, cmd, exits, { env = {} } = {}) {
    const r = await runNyl(cwd, cmd.argv, { env });
    const refused = diagnosticsOf(r).filter((d) => d.severity === 'error' && NOT_RUNNABLE.has(d.code));
    assert.deepEqual(
      refused.map((d) => d.code),
      [],
      `\`${cmd.command}\` runs as printed:\n${show(r)}`,
    );
    assert.ok(exits.includes(r.code), `\`${cmd.command}\` exits ${exits.join(' or ')}:\n${show(r)}`);
    return r;
  }

  done() {
    assert.deepEqual(
      [...this.covers].filter((k) => !this.seen.has(k)),
      [],
      'every key the group declares was printed',
    );
  }
}

const GROUPS = [];

/** One scenario group: a test that runs body(fixes) and checks what it printed against covers. */
function group(name, covers, body, options = {}) {
  GROUPS.push({ name, covers });
  test(name, options, async () => {
    const fixes = new Fixes(covers);
    await body(fixes);
    fixes.done();
  });
}

// --- projects -----------------------------------------------------------------------------------

/** A project whose environment dev keeps its state in the clone itself (`state` undefined) or in `state`'s repository. */
function project(units, { state, publish, origin, envExtra = '' } = {}) {
  const repository = publish ? `{repoURL: "${state}", publishURL: "${publish}"}` : `{repoURL: "${state}"}`;
  const spec = [state ? `state:\n  repository: ${repository}` : '', envExtra].filter(Boolean).join('\n');
  const yaml = nylYaml(environment(ENV, spec), ...Object.entries(units).map(([name, lines]) => command(name, lines)));
  const dir = makeProject({ 'nyl.yaml': yaml }, origin ? { origin } : {});
  return { dir, yaml };
}

/** A scratch directory with a unit log and a gate that gated units wait for. */
function scratch() {
  const dir = tempDir('nyl-fix-');
  return { log: path.join(dir, 'log'), gate: path.join(dir, 'gate') };
}

/**
 * A Command that appends NAME to log when it runs and -NAME when its teardown: action runs
 * (teardown: false declares none; a string is the teardown's own script).
 */
function logged(log, name, { policy, dependsOn, teardown = `echo -${name} >> ${log}` } = {}) {
  const lines = [policy && `deletionPolicy: ${policy}`, dependsOn && `dependsOn: [${dependsOn.join(', ')}]`, `script: 'echo ${name} >> ${log}'`];
  if (teardown) lines.push(`teardown: {script: '${teardown}'}`);
  return lines.filter(Boolean).join('\n');
}

/**
 * A `script:` value that appends `start NAME` to log, waits while gate does not exist (at most
 * ~30 s, so a broken test cannot hang), then appends `end NAME`. Like hold-helpers' gatedScript,
 * but it looks every 0.2 s: a unit here waits for seconds while nyl commands run beside it, and a
 * `sleep` process every 20 ms was CPU the machine's other tests need.
 */
function gatedScript(log, gate, name = '$NYL_UNIT') {
  return `script: 'echo start ${name} >> ${log}; n=0; while [ ! -e ${gate} ] && [ $n -lt 150 ]; do sleep 0.2; n=$((n+1)); done; echo end ${name} >> ${log}'`;
}

/**
 * Polls fn until it returns a truthy value (returned), up to timeoutMs. Every 100 ms, not every
 * 15 ms: some conditions here read the state repository through several git processes.
 */
async function waitUntil(fn, timeoutMs, what) {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether the state ref `ref` of repo holds a file of unit. */
function unitFile(repo, ref, unit) {
  return git(repo, 'ls-tree', '--name-only', ref, `units/${unit}.yaml`) !== '';
}

/** The lines of log that say a teardown ran (-NAME). */
const teardownsIn = (log) => logLines(log).filter((l) => l.startsWith('-'));

/** `nyl args...` as runNyl runs it, its -o json document held to its schema. */
async function runChecked(cwd, args, env = {}) {
  return nylAsync(cwd, args, { env }).done;
}

/** `nyl args...` that must exit with one of `exits`: the test's own steps, not printed fixes. */
async function step(cwd, args, exits = [0], env = {}) {
  const r = await runChecked(cwd, args, env);
  assert.ok(exits.includes(r.code), `nyl ${args.join(' ')} exits ${exits.join(' or ')}:\n${show(r)}`);
  return r;
}

const status = (cwd, env) => runChecked(cwd, ['status', '-e', ENV, '-o', 'json'], env);

/** A copy of a project whose state lives in the clone: a second world to try another way forward in. */
function fork(dir) {
  const copy = path.join(tempDir('nyl-fork-'), 'project');
  fs.cpSync(dir, copy, { recursive: true });
  return copy;
}

/**
 * A bare state repository that is the project's origin, with a second name (a symlink) as its
 * publishURL: a `remote` location whose local state lives in the clone (a file:// URL alone
 * would be a `path` location, which --local opens directly).
 */
function remoteOrigin() {
  const bare = makeBareRepo();
  const alias = path.join(tempDir('nyl-alias-'), 'alias.git');
  fs.symlinkSync(bare, alias);
  return { bare, url: pathToFileURL(bare).href, aliasURL: pathToFileURL(alias).href };
}

/** A copy of a project and of its state repository `bare` (at `url` in nyl.yaml), pointed at the copy. */
function forkWithState(dir, bare, url = pathToFileURL(bare).href) {
  const copy = fork(dir);
  const copied = path.join(tempDir('nyl-fork-remote-'), 'state.git');
  if (fs.existsSync(bare)) fs.cpSync(bare, copied, { recursive: true });
  else makeBareRepo(copied);
  retarget(copy, url, pathToFileURL(copied).href);
  return { dir: copy, bare: copied };
}

/** Points the project's nyl.yaml from one state repository URL to another, in a commit. */
function retarget(dir, from, to) {
  const file = path.join(dir, 'nyl.yaml');
  fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replaceAll(from, to));
  git(dir, 'commit', '-q', '-am', `state at ${to}`);
}

/** A copy of a project and of its origin (remoteOrigin), pointed at the copy: a world of its own. */
function forkWithOrigin(dir, origin) {
  const { dir: copy, bare } = forkWithState(dir, origin.bare, origin.url);
  const alias = path.join(tempDir('nyl-alias-'), 'alias.git');
  fs.symlinkSync(bare, alias);
  retarget(copy, origin.aliasURL, pathToFileURL(alias).href);
  git(copy, 'remote', 'set-url', 'origin', pathToFileURL(bare).href);
  return copy;
}

/** The run refs of repo. */
function runRefs(repo) {
  return git(repo, 'for-each-ref', '--format=%(refname)', RUNS).split('\n').filter(Boolean);
}

/** Whether a run ref of repo holds a checkpoint of unit. */
function checkpointed(repo, unit) {
  return runRefs(repo).some((ref) => {
    const file = git(repo, 'ls-tree', '-r', '--name-only', ref)
      .split('\n')
      .find((f) => f.endsWith(`/${unit}.yaml`));
    return file !== undefined && /^checkpoint:/m.test(git(repo, 'show', `${ref}:${file}`));
  });
}

/** Every file of a commit of repo: path -> text. */
function filesOf(repo, rev) {
  const names = git(repo, 'ls-tree', '-r', '--name-only', rev).split('\n').filter(Boolean);
  return Object.fromEntries(names.map((n) => [n, `${git(repo, 'cat-file', 'blob', `${rev}:${n}`)}\n`]));
}

/** Commits `change(files)` on top of ref in repo, as a hand edit outside Nyl would. */
function editRef(repo, ref, change) {
  const tip = git(repo, 'rev-parse', ref);
  const commit = commitTree(repo, change(filesOf(repo, tip)), { parents: [tip], message: 'hand edit' });
  git(repo, 'update-ref', ref, commit, tip);
}

/**
 * Moves the lease's holder to another machine, as a runner elsewhere would have written it: a
 * holder of this machine whose process is gone is taken over at once, with no clock consulted.
 */
function holderElsewhere(repo) {
  editRef(repo, LEASE, (files) => ({
    ...files,
    'lease.yaml': files['lease.yaml'].replace(/^(\s+)host: .*$/m, '$1host: ci-runner-elsewhere').replace(/^\s+(boot|started): .*\n/gm, ''),
  }));
}

/** Points ref at a blob: a coordination ref that is not the commit Nyl wrote. */
function refToBlob(repo, ref) {
  const blob = git(repo, 'hash-object', '-w', '--stdin', { input: 'not a commit\n' });
  git(repo, 'update-ref', ref, blob);
}

/**
 * A first reconcile of dir cancelled by SIGTERM while a and b run, after t timed out and f failed:
 * the cancelled run's report (exit 4).
 */
async function cancelWhileRunning(dir, s) {
  await step(dir, ['state', 'init', '-e', ENV]);
  const h = startNyl(dir, ['reconcile', '-e', ENV, '-o', 'json']);
  const running = () => ['start a', 'start b'].every((l) => logLines(s.log).includes(l)) && /\[dev\/t\] failed/.test(h.stderrSoFar());
  await waitUntil(running, 20000, 'a and b running, t timed out');
  h.child.kill('SIGTERM');
  const cancelled = await h.done;
  assert.equal(cancelled.code, 4, show(cancelled));
  return cancelled;
}

/** A project with a gated unit a and a quick unit c, whose first reconcile is killed (SIGKILL) while a runs. */
async function killedWhileARuns() {
  const s = scratch();
  // A short lease: a taker watches an expired one for a renewal interval and the margin (2.6 s here, 130 s for 5m).
  const { dir } = project({ a: gatedScript(s.log, s.gate), c: "script: 'true'" }, { envExtra: 'lease: {duration: 6s}' });
  await step(dir, ['state', 'init', '-e', ENV]);
  const h = startNyl(dir, ['reconcile', '-e', ENV]);
  await waitUntil(() => logLines(s.log).includes('start a'), 20000, 'a running');
  h.child.kill('SIGKILL');
  await h.done;
  openGate(s.gate);
  return dir;
}

let killed;
/**
 * A copy of the killedWhileARuns project (state in the clone, so the copy is a world of its own).
 * Two groups start from that same moment: it is made once, by whichever runs first, and neither
 * touches the original.
 */
async function killedWorld() {
  killed ??= killedWhileARuns();
  return fork(await killed);
}

// --- the scenarios --------------------------------------------------------------------------------

describe('fix texts work as printed', { concurrency: 2 }, () => {
  group(
    'a cancelled first run: status and the run name reconcile before recover, and each then works as printed',
    [
      'NYL-RUN-CANCELLED',
      'NYL-RUN-UNIMPORTED',
      'NYL-UNIT-UNCERTAIN (unimported)',
      'NYL-UNIT-UNCERTAIN',
      'NYL-UNIT-FAILED',
      'NYL-UNIT-FAILED (not retryable)',
      'NYL-UNIT-FAILED (not retryable, unimported)',
      'NYL-UNIT-HELD',
      'NYL-RECOVER-KEY-MISMATCH',
    ],
    async (fx) => {
      const s = scratch();
      const { dir } = project({
        a: gatedScript(s.log, s.gate),
        b: gatedScript(s.log, s.gate),
        t: `timeout: 1s\nscript: '[ -e ${s.gate} ] || sleep 5'`,
        f: `script: 'echo f >> ${s.log}; exit 1'`,
      });
      const cancelled = await cancelWhileRunning(dir, s);
      const run = cancelled.json.run;
      const reconcile = fx.only(fx.printed(cancelled, 'NYL-RUN-CANCELLED'));
      const ofRun = fx.commands(fx.printed(cancelled, 'NYL-UNIT-UNCERTAIN (unimported)', { unit: 'b' }));

      // The regression: status suggested `nyl recover -e dev --unit b --retry`, which refused with
      // NYL-UNIT-UNKNOWN. Its commands run as printed, in order: the first one imports the run
      // (its ref is consumed) and retries f; a and b stay uncertain (manual), t failed.
      const before = await status(dir);
      assert.equal(before.code, 4, show(before));
      const [first, retryB] = fx.commands(fx.printed(before, 'NYL-UNIT-UNCERTAIN (unimported)', { unit: 'b' }));
      const imported = await fx.exec(dir, first, [4]);
      assert.deepEqual(runRefs(dir), [], 'the cancelled run is imported');
      assert.equal(logLines(s.log).filter((l) => l === 'f').length, 2, 'f ran again');

      // Every fix of that moment names the same reconcile first.
      assert.deepEqual(ofRun, [first, retryB], 'the cancelled run names the same two steps');
      assert.deepEqual(
        [reconcile, fx.only(fx.printed(before, 'NYL-RUN-UNIMPORTED')), fx.only(fx.printed(before, 'NYL-UNIT-FAILED', { unit: 'f' }))],
        [first, first, first],
      );
      const [importT, retryT] = fx.commands(fx.printed(before, 'NYL-UNIT-FAILED (not retryable, unimported)', { unit: 't' }));
      assert.deepEqual(importT, first);

      // Printed commands print text: what they did is read from state.
      const recorded = await status(dir);
      assert.deepEqual(
        ['a', 'b', 't'].map((u) => recorded.json.units[u].condition?.run),
        [run, run, run],
        show(recorded),
      );
      assert.deepEqual(fx.commands(fx.printed(imported, 'NYL-UNIT-UNCERTAIN', { unit: 'b' })), [retryB]);
      assert.deepEqual(fx.commands(fx.printed(recorded, 'NYL-UNIT-FAILED (not retryable)', { unit: 't' })), [retryT]);

      // The final reconcile shows their progress: a manual uncertain unit and a timed-out one run only once decided.
      await fx.exec(dir, retryB, [0]);
      await fx.exec(dir, retryT, [0]);

      // A held uncertain unit: --accept refuses, naming resume; resume, then the uncertain fix.
      await step(dir, ['hold', '-e', ENV, '--unit', 'a', '--reason', 'investigating']);
      const mismatch = await step(dir, ['recover', '-e', ENV, '--unit', 'a', '--accept', run, '--reason', 'r', '-o', 'json'], [1]);
      const resume = fx.only(fx.printed(mismatch, 'NYL-RECOVER-KEY-MISMATCH', { unit: 'a' }));
      const held = await status(dir);
      assert.deepEqual(fx.only(fx.printed(held, 'NYL-UNIT-HELD', { unit: 'a' })), resume);
      const retryA = fx.only(fx.printed(held, 'NYL-UNIT-UNCERTAIN', { unit: 'a' }));
      await fx.exec(dir, resume, [0]);
      await fx.exec(dir, retryA, [0]);

      openGate(s.gate);
      const last = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [3]);
      assert.deepEqual(
        ['a', 'b', 't'].map((u) => last.json.units[u].result),
        ['executed', 'executed', 'executed'],
        show(last),
      );
    },
  );

  group(
    'no state yet, then a state repository re-created empty, then deleted state; usage errors and names that do not exist',
    ['NYL-STATE-MISSING', 'NYL-STATE-DIVERGED (init)', 'NYL-STATE-DELETED', 'NYL-RECOVER-NOTHING', 'NYL-UNIT-UNKNOWN', 'NYL-USAGE'],
    async (fx) => {
      const bare = makeBareRepo();
      const { dir } = project({ x: "script: 'true'" }, { state: pathToFileURL(bare).href });
      const missing = await step(dir, ['status', '-e', ENV, '-o', 'json'], [1]);
      const elsewhere = forkWithState(dir, bare);
      const [init, move] = fx.commands(fx.printed(missing, 'NYL-STATE-MISSING'), { '<old-url>': pathToFileURL(bare).href });
      await fx.exec(dir, init, [0]);
      assert.ok(git(bare, 'rev-parse', DESIRED));
      // The state of dev is at the old location (this project's repository): the move brings it over.
      await fx.exec(elsewhere.dir, move, [0]);
      assert.match(git(elsewhere.bare, 'show', `${DESIRED}:state.yaml`), /status: active/);
      assert.match(git(bare, 'show', `${DESIRED}:state.yaml`), /status: moved/);
      fs.rmSync(bare, { recursive: true });
      makeBareRepo(bare);
      await step(dir, ['state', 'init', '-e', ENV, '--fresh', '--reason', 'the old location moved away']);

      const nothing = await step(dir, ['recover', '-e', ENV, '-o', 'json'], [1]);
      const look = fx.only(fx.printed(nothing, 'NYL-RECOVER-NOTHING'));
      const unknown = await step(dir, ['resume', '-e', ENV, '--unit', 'nosuch', '-o', 'json'], [1]);
      assert.deepEqual(fx.only(fx.printed(unknown, 'NYL-UNIT-UNKNOWN')), look);
      const shown = await fx.exec(dir, look, [2]);
      assert.match(shown.stdout, /^x +Command +pending/m, 'status names the units there are');

      for (const [args, words] of [
        [
          ['recover', '-e', ENV, '--retry-all'],
          ['recover', '--help'],
        ],
        [['frobnicate', '-e', ENV], ['--help']],
      ]) {
        const usage = await step(dir, args, [1]);
        const help = fx.only(fx.printed(usage, 'NYL-USAGE'));
        assert.deepEqual(help.argv, words);
        const r = await fx.exec(dir, help, [0]);
        assert.match(r.stdout, /Usage: nyl|Commands/, r.stdout);
      }

      // The repository is re-created empty while the clone's known branches hold the state.
      fs.rmSync(bare, { recursive: true });
      makeBareRepo(bare);
      const diverged = await step(dir, ['state', 'init', '-e', ENV, '-o', 'json'], [1]);
      const [publish, fresh] = fx.commands(fx.printed(diverged, 'NYL-STATE-DIVERGED (init)', { params: { ref: DESIRED } }));
      // Publishing the clone's state there instead, in a copy: the known history continues.
      const published = forkWithState(dir, bare);
      await fx.exec(published.dir, publish, [0]);
      assert.match(git(published.bare, 'show', `${DESIRED}:state.yaml`), /status: active/);
      await fx.exec(dir, fresh, [0]);
      assert.match(git(bare, 'show', `${DESIRED}:state.yaml`), /status: active/);

      // Deleted state: x never ran, so nothing keeps the state from being deleted.
      await step(dir, ['state', 'delete', '-e', ENV, '--reason', 'decommission']);
      const deleted = await step(dir, ['status', '-e', ENV, '-o', 'json'], [1]);
      await fx.exec(dir, fx.only(fx.printed(deleted, 'NYL-STATE-DELETED')), [0]);
      assert.match(git(bare, 'show', `${DESIRED}:state.yaml`), /status: active/, 'the state starts over');
    },
  );

  group('the deleted state of an EnvironmentTemplate instance (a closed preview) starts over as printed', ['NYL-STATE-DELETED (instance)'], async (fx) => {
    const bare = makeBareRepo();
    const url = pathToFileURL(bare).href;
    const template = `apiVersion: nyl.io/v1\nkind: EnvironmentTemplate\nmetadata: {name: previews}\nspec:\n  namePattern: pr-*\n  environment:\n    state: {repository: {repoURL: "${url}"}}`;
    const dir = makeProject({ 'nyl.yaml': nylYaml(template, command('x', "script: 'true'")) });
    await step(dir, ['state', 'init', '-e', 'pr-1']);
    await step(dir, ['state', 'delete', '-e', 'pr-1', '--reason', 'pull request closed']);
    const deleted = await step(dir, ['status', '-e', 'pr-1', '-o', 'json'], [1]);
    const printed = fx.printed(deleted, 'NYL-STATE-DELETED (instance)', { params: { env: 'pr-1' } });
    assert.doesNotMatch(printed.fix, /remove the Environment/, 'an instance has no Environment in source to remove');
    await fx.exec(dir, fx.only(printed), [0]);
    assert.match(git(bare, 'show', 'refs/heads/nyl/pr-1/desired:state.yaml'), /status: active/, 'the state starts over');
  });

  group(
    'a --local run of the origin killed while a unit runs: the way back to online runs, by publishing its work or by discarding it',
    ['NYL-STATE-LOCAL-WORK (left-lease)', 'NYL-STATE-LOCAL-WORK', 'NYL-STATE-LOCAL-WORK (left-evidence)', 'NYL-STATE-DIVERGED', 'NYL-STATE-RESET-DISCARD'],
    async (fx) => {
      const s = scratch();
      const origin = remoteOrigin();
      const units = { first: `${logged(s.log, 'first')}\nrecovery: converge`, a: `dependsOn: [first]\n${gatedScript(s.log, s.gate, 'a')}\nrecovery: converge` };
      const { dir } = project(units, { state: origin.url, publish: origin.aliasURL, origin: origin.url });
      await step(dir, ['state', 'init', '-e', ENV]);
      const remoteBefore = git(origin.bare, 'for-each-ref');
      const run = startNyl(dir, ['reconcile', '-e', ENV, '--local']);
      await waitUntil(() => logLines(s.log).includes('start a'), 15000, 'a runs');
      run.child.kill('SIGKILL');
      await run.done;
      openGate(s.gate);

      const online = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [1]);
      assert.ok(
        (await status(dir)).json.warnings.some((w) => w.code === 'NYL-STATE-LOCAL-WORK'),
        'status warns',
      );
      const [breakLease, recoverRun] = fx.commands(fx.printed(online, 'NYL-STATE-LOCAL-WORK (left-lease)'));
      await fx.exec(dir, breakLease, [0]);
      await fx.exec(dir, recoverRun, [0]);
      const evidence = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [1]);
      await fx.exec(dir, fx.only(fx.printed(evidence, 'NYL-STATE-LOCAL-WORK (left-evidence)', { params: { units: ['a'] } })), [0]);
      assert.deepEqual(
        logLines(s.log).filter((l) => l !== 'end a'),
        ['first', 'start a'],
        'no unit ran again',
      );
      assert.equal(git(origin.bare, 'for-each-ref'), remoteBefore, 'nothing reached the remote');

      const diverged = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [1]);
      const [publish, discardAll] = fx.commands(fx.printed(diverged, 'NYL-STATE-DIVERGED', { params: { ref: DESIRED } }));
      // Publishing the local work, in a copy with its own remote: first's receipt reaches it.
      const published = forkWithOrigin(dir, origin);
      await fx.exec(published, publish, [0]);
      assert.equal((await step(published, ['reconcile', '-e', ENV, '-o', 'json'])).json.units.first.result, 'current', "the local run's receipt was published");
      const discarded = forkWithOrigin(dir, origin);
      await fx.exec(discarded, discardAll, [0]);
      assert.equal(
        (await step(discarded, ['reconcile', '-e', ENV, '-o', 'json'])).json.units.first.result,
        'executed',
        'a discarded receipt runs again online',
      );

      const lose = await step(dir, ['state', 'reset', '-e', ENV, '--local', '-o', 'json'], [1]);
      const [discardFirst, publishToo] = fx.commands(fx.printed(lose, 'NYL-STATE-RESET-DISCARD', { params: { units: ['first'] } }));
      assert.deepEqual(publishToo, publish);
      const localTip = git(dir, 'rev-parse', OBSERVED);
      await fx.exec(dir, discardFirst, [0]);
      assert.equal(git(dir, 'rev-parse', OBSERVED), git(origin.bare, 'rev-parse', OBSERVED), "the clone's branch is the remote's again");
      assert.match(
        git(dir, 'for-each-ref', '--format=%(refname) %(objectname)', 'refs/nyl-discarded/dev/'),
        new RegExp(`heads/nyl/dev/observed ${localTip}`),
        'the discarded tip stays for audit',
      );
      assert.equal(git(origin.bare, 'for-each-ref'), remoteBefore, 'reset pushes nothing');

      // A --local run cancelled before a starts: its run ref stays (ended), its lease does not.
      const marker = path.join(tempDir('nyl-fix-pause-'), 'paused');
      const cancelled = startNyl(dir, ['reconcile', '-e', ENV, '--local'], {
        env: { NYL_FAULT_AT: 'after-started-push@a', NYL_FAULT_ACTION: 'pause', NYL_FAULT_MARKER: marker },
      });
      await waitUntil(() => fs.existsSync(marker), 15000, 'a local run about to start a');
      cancelled.child.kill('SIGTERM');
      await new Promise((r) => setTimeout(r, 200));
      fs.rmSync(marker);
      assert.equal((await cancelled.done).code, 4);
      const runsLeft = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [1]);
      await fx.exec(dir, fx.only(fx.printed(runsLeft, 'NYL-STATE-LOCAL-WORK')), [0, 4]);
      assert.equal(git(dir, 'for-each-ref', 'refs/nyl/dev/runs/'), '', 'the local run was imported');
    },
  );

  group(
    '--local on a remote that is not origin works in its cache repository: refused before one exists, then local receipts there, refused online, discarded or published as printed',
    ['NYL-STATE-DIVERGED (cache)'],
    async (fx) => {
      const s = scratch();
      const origin = remoteOrigin();
      // Not the checkout's origin: read through the cache repository, where --local writes.
      const { dir, yaml } = project({ a: `${logged(s.log, 'a')}\nrecovery: converge` }, { state: origin.aliasURL, publish: origin.url });
      const missing = await step(dir, ['reconcile', '-e', ENV, '--local', '-o', 'json'], [1]);
      assert.deepEqual(
        diagnosticsOf(missing).map((d) => d.code),
        ['NYL-STATE-UNAVAILABLE'],
      );
      // Its fix, an online command, creates the cache repository (no state yet: status exits 1).
      await fx.exec(dir, fx.only(diagnosticsOf(missing)[0]), [1]);
      await step(dir, ['state', 'init', '-e', ENV]);
      const remoteBefore = git(origin.bare, 'for-each-ref');
      assert.equal((await step(dir, ['reconcile', '-e', ENV, '--local', '-o', 'json'])).json.units.a.result, 'executed');
      const cache = cacheRepositoryOf(origin.aliasURL, cliEnv().NYL_CACHE_DIR);
      assert.match(git(cache, 'for-each-ref', 'refs/heads/nyl/dev/'), /refs\/heads\/nyl\/dev\/observed/, "the receipts are on the cache's own branches");
      assert.equal(git(origin.bare, 'for-each-ref'), remoteBefore, 'nothing reached the remote');
      assert.notEqual(git(dir, 'rev-parse', OBSERVED), git(cache, 'rev-parse', OBSERVED), "the clone's branches are untouched");

      const online = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [1]);
      const [publish, discard] = fx.commands(fx.printed(online, 'NYL-STATE-DIVERGED (cache)', { params: { cache, ref: DESIRED } }));
      const plain = await step(dir, ['state', 'reset', '-e', ENV, '--discard-all', '-o', 'json'], [1]);
      assert.deepEqual(
        diagnosticsOf(plain).map((d) => d.code),
        ['NYL-USAGE'],
        'reset moves local refs only: --local is required',
      );
      await fx.exec(dir, discard, [0]);
      // Nothing local is left to discard: both branches of the cache are the remote's again.
      for (const ref of [DESIRED, OBSERVED])
        assert.equal(git(cache, 'rev-parse', ref), git(origin.bare, 'rev-parse', ref), `the cache's ${ref} is the remote's`);
      assert.equal((await step(dir, ['reconcile', '-e', ENV, '-o', 'json'])).json.units.a.result, 'executed', 'the discarded receipt runs online');

      // A changed a runs in a --local run again; this time its receipt is published as printed.
      commitFiles(dir, { 'nyl.yaml': yaml.replace('echo a >>', 'echo a2 >>') });
      assert.equal((await step(dir, ['reconcile', '-e', ENV, '--local', '-o', 'json'])).json.units.a.result, 'executed');
      await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [1]);
      await fx.exec(dir, publish, [0]);
      assert.equal(git(cache, 'rev-parse', OBSERVED), git(origin.bare, 'rev-parse', `${OBSERVED}^2`), "the remote's state continues the cache's branch");
      assert.equal((await step(dir, ['reconcile', '-e', ENV, '-o', 'json'])).json.units.a.result, 'current', "the --local run's receipt was published");
      assert.deepEqual(logLines(s.log), ['a', 'a', 'a2'], 'a2 ran once, in the --local run');
    },
  );

  group('a coordination prefix changed in source before the state moved: refused until the printed move', ['NYL-STATE-MOVED (prefix)'], async (fx) => {
    const s = scratch();
    const bare = makeBareRepo();
    const { dir, yaml } = project({ a: logged(s.log, 'a') }, { state: pathToFileURL(bare).href });
    await step(dir, ['state', 'init', '-e', ENV]);
    await step(dir, ['reconcile', '-e', ENV]);
    fs.writeFileSync(path.join(dir, 'nyl.yaml'), yaml.replace('state:\n', 'state:\n    coordinationRefPrefix: refs/heads/nyl-run/\n'));
    git(dir, 'commit', '-q', '-am', 'the branch prefix');
    const refused = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [1]);
    await fx.exec(dir, fx.only(fx.printed(refused, 'NYL-STATE-MOVED (prefix)')), [0]);
    assert.equal((await step(dir, ['reconcile', '-e', ENV, '-o', 'json'])).json.units.a.result, 'current');
    assert.match(git(bare, 'show', `${DESIRED}:state.yaml`), /coordinationRefPrefix: refs\/heads\/nyl-run\//);
  });

  group(
    "a remote added to a project whose state lived in the clone: moving the clone's state there, or starting over there",
    ['NYL-STATE-MISSING (fromLocal)'],
    async (fx) => {
      const s = scratch();
      const { dir } = project({ a: logged(s.log, 'a') });
      await step(dir, ['state', 'init', '-e', ENV]);
      await step(dir, ['reconcile', '-e', ENV]);
      const other = fork(dir);
      git(dir, 'remote', 'add', 'origin', pathToFileURL(makeBareRepo()).href);
      git(other, 'remote', 'add', 'origin', pathToFileURL(makeBareRepo()).href);
      const missing = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [1]);
      const [move, fresh] = fx.commands(fx.printed(missing, 'NYL-STATE-MISSING (fromLocal)'));
      assert.match(move.command, /state move -e dev --from local/);
      await fx.exec(dir, move, [0]);
      assert.equal((await step(dir, ['reconcile', '-e', ENV, '-o', 'json'])).json.units.a.result, 'current', 'a moved with its receipt');
      await fx.exec(other, fresh, [0]);
      assert.equal((await step(other, ['reconcile', '-e', ENV, '-o', 'json'])).json.units.a.result, 'executed', 'a fresh start runs a again');
    },
  );

  group('a retained tombstone that hold refuses, and a held unit that state forget refuses', ['NYL-HOLD-REFUSED', 'NYL-FORGET-REFUSED (held)'], async (fx) => {
    const s = scratch();
    const { dir } = project({ a: logged(s.log, 'a'), b: logged(s.log, 'b') });
    await step(dir, ['state', 'init', '-e', ENV]);
    await step(dir, ['reconcile', '-e', ENV]);
    // b leaves source and stays as a tombstone (deletionPolicy Retain, the default).
    commitFiles(dir, { 'nyl.yaml': project({ a: logged(s.log, 'a') }).yaml });
    await step(dir, ['reconcile', '-e', ENV]);
    const tombstone = await step(dir, ['hold', '-e', ENV, '--unit', 'b', '--reason', 'incident', '-o', 'json'], [1]);
    const [teardown, forget] = fx.commands(fx.printed(tombstone, 'NYL-HOLD-REFUSED', { unit: 'b' }));
    const other = fork(dir);
    await fx.exec(dir, forget, [0]);
    assert.equal(unitFile(dir, DESIRED, 'b'), false, 'the tombstone is forgotten');
    assert.deepEqual(teardownsIn(s.log), [], 'forget touches no resource');
    await fx.exec(other, teardown, [0]);
    assert.equal(unitFile(other, DESIRED, 'b'), false, 'the tombstone is torn down');
    assert.deepEqual(teardownsIn(s.log), ['-b']);

    await step(dir, ['hold', '-e', ENV, '--unit', 'a', '--reason', 'incident']);
    const held = await step(dir, ['state', 'forget', '-e', ENV, '--unit', 'a', '--reason', 'not needed', '-o', 'json'], [1]);
    const [resume, teardownA] = fx.commands(fx.printed(held, 'NYL-FORGET-REFUSED (held)', { unit: 'a' }));
    await fx.exec(dir, resume, [0]);
    assert.doesNotMatch(git(dir, 'show', `${DESIRED}:units/a.yaml`), /state: held/, 'the hold is lifted: a teardown now applies');
    await fx.exec(dir, teardownA, [0]);
    assert.equal(unitFile(dir, DESIRED, 'a'), false, 'a is torn down');
    assert.deepEqual(teardownsIn(s.log), ['-b', '-a']);
  });

  group(
    'a run that loses its lease while a unit runs: the break, the import, a superseded checkpoint, a late one',
    ['NYL-HOLD-DELIVERED', 'NYL-LEASE-BROKEN', 'NYL-RUN-SUPERSEDED', 'NYL-LEASE-LOST', 'NYL-RUN-LATE-CHECKPOINT'],
    async (fx) => {
      const s = scratch();
      const units = (quick) => ({ slow: gatedScript(s.log, s.gate), quick: `script: '${quick}'`, other: "script: 'true'" });
      const holdOther = ['hold', '-e', ENV, '--unit', 'other', '--reason', 'incident', '-o', 'json'];
      const { dir } = project(units('true'));
      await step(dir, ['state', 'init', '-e', ENV]);
      const h = startNyl(dir, ['reconcile', '-e', ENV, '-o', 'json']);
      await waitUntil(
        () => logLines(s.log).includes('start slow') && checkpointed(dir, 'quick') && checkpointed(dir, 'other'),
        20000,
        'slow running, quick and other checkpointed',
      );
      const run = runRefs(dir)[0].slice(RUNS.length);

      const delivered = await step(dir, holdOther);
      await fx.exec(dir, fx.only(fx.printed(delivered, 'NYL-HOLD-DELIVERED')), [0, 2, 4]);

      // quick's source changes, so the checkpoint the run made is for something quick no longer is.
      commitFiles(dir, { 'nyl.yaml': project(units('echo changed')).yaml });
      await step(dir, ['lease', 'break', '-e', ENV, '--reason', 'the runner looked dead']);
      // Holding again what the dead run was told to hold: refused until the run is imported.
      const broken = await step(dir, holdOther, [2]);
      const imported = await fx.exec(dir, fx.only(fx.printed(broken, 'NYL-LEASE-BROKEN')), [0]);
      assert.match(imported.stdout, /^ {2}leaseBroken:\n(?: {4}.*\n)*? {4}reason: the runner looked dead$/m, show(imported));
      await step(dir, holdOther); // "then run the command again"
      await fx.exec(dir, fx.only(fx.printed(imported, 'NYL-RUN-SUPERSEDED', { unit: 'quick' })), [0]);

      openGate(s.gate);
      const lost = await h.done;
      assert.equal(lost.code, 4, show(lost));
      const next = await fx.exec(dir, fx.only(fx.printed(lost, 'NYL-LEASE-LOST')), [4]);
      assert.deepEqual(runRefs(dir), [], "the lost run's checkpoints are imported");
      // The reader takes the run from the message: `run RUN checkpointed slow ...`.
      const late = fx.printed(next, 'NYL-RUN-LATE-CHECKPOINT', { unit: 'slow' });
      assert.equal(/^run (\S+) checkpointed/.exec(late.message)?.[1], run, late.message);
      await fx.exec(dir, fx.only(late, { '<run>': run }), [0]);
      const done = await step(dir, ['status', '-e', ENV, '-o', 'json'], [2]); // other is held
      assert.equal(done.json.units.slow.lastRun.run, run, 'slow has the receipt of the run that lost its lease');
      assert.equal(done.json.units.quick.state, 'current', 'quick ran again after its retry');
    },
  );

  group(
    "a killed run's lease seen from a clock behind (skew) and ahead (expired); each way forward in its own copy",
    ['NYL-CLOCK-SKEW', 'NYL-LEASE-BROKEN (expired)'],
    async (fx) => {
      const dir = await killedWorld();
      holderElsewhere(dir);
      const behind = { NYL_TEST_NOW: String(Date.now() - 10 * 60_000) };
      const ahead = { NYL_TEST_NOW: String(Date.now() + 60 * 60_000) };

      const skew = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [1], behind);
      const breakIt = fx.only(fx.printed(skew, 'NYL-CLOCK-SKEW'));
      const second = fork(dir);
      await fx.exec(dir, breakIt, [0], { env: behind });
      assert.match(git(dir, 'show', `${LEASE}:lease.yaml`), /reason: "?clock skew/);
      await step(dir, ['reconcile', '-e', ENV], [4], behind); // an importer takes it over

      const expired = await step(second, ['hold', '-e', ENV, '--unit', 'c', '--reason', 'r', '-o', 'json'], [2], ahead);
      const cmds = fx.commands(fx.printed(expired, 'NYL-LEASE-BROKEN (expired)'));
      assert.deepEqual(
        cmds.map((c) => c.argv[0]),
        ['reconcile', 'lease', 'recover'],
      );
      const third = fork(second);
      await fx.exec(second, cmds[0], [4], { env: ahead });
      await fx.exec(third, cmds[1], [0], { env: ahead });
      await fx.exec(third, cmds[2], [0], { env: ahead });
      for (const world of [second, third]) {
        assert.equal(git(world, 'for-each-ref', LEASE), '', 'the lease is taken over and released');
        await step(world, ['hold', '-e', ENV, '--unit', 'c', '--reason', 'r'], [0], ahead); // "then run the command again"
      }
    },
  );

  group(
    'damaged state documents, a damaged signal and a damaged lease',
    [
      'NYL-STATE-CORRUPT (state)',
      'NYL-STATE-CORRUPT (unit)',
      'NYL-STATE-CORRUPT (run)',
      'NYL-STATE-CORRUPT (signal)',
      'NYL-STATE-CORRUPT (signal-set-aside)',
      'NYL-STATE-CORRUPT (lease)',
    ],
    async (fx) => {
      const { dir } = project({ x: "script: 'true'", y: "script: 'true'" });
      await step(dir, ['state', 'init', '-e', ENV]);
      await step(dir, ['reconcile', '-e', ENV]);
      const corrupt = (result, what, document) => fx.only(fx.printed(result, `NYL-STATE-CORRUPT (${what})`, { where: (d) => d.data?.document === document }));

      // A damaged state.yaml leaves status nothing else to show: repaired on its own first.
      editRef(dir, DESIRED, (files) => ({ ...files, 'state.yaml': 'status: [\n' }));
      const recover = corrupt(await step(dir, ['status', '-e', ENV, '-o', 'json'], [1]), 'state', 'state');
      await fx.exec(dir, recover, [0]);
      assert.match(git(dir, 'show', `${DESIRED}:state.yaml`), /status: active/);

      editRef(dir, DESIRED, (files) => ({ ...files, 'units/x.yaml': `${files['units/x.yaml']}uid: again\n` }));
      refToBlob(dir, `${RUNS}01a00000-0000-7000-8000-000000000001`);
      refToBlob(dir, 'refs/nyl/dev/signals/01a00000-0000-7000-8000-000000000002/01a00000-0000-7000-8000-000000000003');
      const damaged = await step(dir, ['status', '-e', ENV, '-o', 'json'], [1]);
      const repairs = [corrupt(damaged, 'unit', 'desired-unit'), corrupt(damaged, 'run', 'run'), corrupt(damaged, 'signal', 'signal')];
      for (const r of repairs) assert.deepEqual(r, recover, 'every repair names the same recover');
      const repaired = await fx.exec(dir, recover, [0]);
      const hold = fx.only(fx.printed(repaired, 'NYL-STATE-CORRUPT (signal-set-aside)'), { '<unit>': 'y' });
      await fx.exec(dir, hold, [0]);
      const clean = await status(dir);
      assert.deepEqual(clean.json.errors, [], show(clean));
      assert.ok(clean.json.units.y.hold, 'y is held again');

      refToBlob(dir, LEASE);
      const lease = await step(dir, ['status', '-e', ENV, '-o', 'json'], [1, 4]); // x is uncertain since its repair: 4 wins
      const [breakIt, importer, reconcile] = fx.commands(fx.printed(lease, 'NYL-STATE-CORRUPT (lease)', { where: (d) => d.data?.document === 'lease' }));
      await fx.exec(dir, breakIt, [0]);
      const other = fork(dir);
      await fx.exec(dir, importer, [0]);
      await fx.exec(other, reconcile, [4]); // x, uncertain since its repair, is manual
      for (const world of [dir, other]) assert.equal(git(world, 'for-each-ref', LEASE), '', 'the broken lease is taken over and released');
    },
  );

  group(
    'a killed run whose lease was broken keeps the state from being deleted: each import the refusal names works as printed',
    ['NYL-STATE-DELETE-INCARNATIONS (runs)'],
    async (fx) => {
      const dir = await killedWorld();
      await step(dir, ['lease', 'break', '-e', ENV, '--reason', 'the runner was killed']);
      const deleteIt = ['state', 'delete', '-e', ENV, '--reason', 'decommission', '-o', 'json'];
      const refused = await step(dir, deleteIt, [1]);
      const [reconcile, recover] = fx.commands(fx.printed(refused, 'NYL-STATE-DELETE-INCARNATIONS (runs)'));
      assert.deepEqual(
        [reconcile.argv, recover.argv],
        [
          ['reconcile', '-e', ENV],
          ['recover', '-e', ENV],
        ],
      );
      const other = fork(dir);
      await fx.exec(dir, recover, [0]);
      await fx.exec(other, reconcile, [4]); // a, started by the killed run, is uncertain (manual)
      for (const world of [dir, other]) {
        assert.deepEqual(runRefs(world), [], 'the run is imported');
        // "then delete the state again": what is left are the incarnations the run created.
        const again = await step(world, deleteIt, [1]);
        assert.ok(
          again.json.errors.every((d) => d.code === 'NYL-STATE-DELETE-INCARNATIONS' && d.units?.includes('a')),
          show(again),
        );
      }
    },
  );

  group(
    'units leave source under each deletion policy: a release, teardowns that wait for --allow-teardown, one without teardown:, one a tombstone cites',
    ['NYL-UNIT-RELEASED', 'NYL-TEARDOWN-PENDING (needs-allow-teardown)', 'NYL-TEARDOWN-INCOMPLETE', 'NYL-TEARDOWN-HAS-DEPENDENTS (dependents)'],
    async (fx) => {
      const s = scratch();
      const td = { policy: 'Teardown' };
      const units = {
        rel: logged(s.log, 'rel', { policy: 'Release' }),
        td: logged(s.log, 'td', td),
        bare: logged(s.log, 'bare', { ...td, teardown: false }),
        base: logged(s.log, 'base', td),
        user: logged(s.log, 'user', { dependsOn: ['base'] }),
        keep: logged(s.log, 'keep'),
      };
      const { dir } = project(units);
      await step(dir, ['state', 'init', '-e', ENV]);
      await step(dir, ['reconcile', '-e', ENV]);
      commitFiles(dir, { 'nyl.yaml': project({ keep: units.keep }).yaml });
      const left = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [2]);

      await fx.exec(dir, fx.only(fx.printed(left, 'NYL-UNIT-RELEASED', { unit: 'rel' })), [0]);
      assert.equal(unitFile(dir, OBSERVED, 'rel'), false, 'the released record is dropped');

      const allow = fx.only(fx.printed(left, 'NYL-TEARDOWN-PENDING (needs-allow-teardown)', { unit: 'td' }));
      for (const u of ['bare', 'base']) assert.deepEqual(fx.only(fx.printed(left, 'NYL-TEARDOWN-PENDING (needs-allow-teardown)', { unit: u })), allow);
      assert.deepEqual(teardownsIn(s.log), [], 'nothing is torn down without --allow-teardown');
      const started = await fx.exec(dir, allow, [3]); // bare cannot claim its removal
      assert.deepEqual(teardownsIn(s.log), ['-td'], 'td is torn down; base waits for the tombstone user');
      assert.equal(unitFile(dir, DESIRED, 'td'), false);

      const incomplete = fx.taking(fx.printed(started, 'NYL-TEARDOWN-INCOMPLETE', { unit: 'bare' }), '--allow-incomplete');
      const forgetUser = fx.only(fx.printed(started, 'NYL-TEARDOWN-HAS-DEPENDENTS (dependents)', { unit: 'base', params: { dependents: ['user'] } }));
      await fx.exec(dir, incomplete, [2]); // base still waits for --allow-teardown
      assert.equal(unitFile(dir, DESIRED, 'bare'), false, 'bare is removed without a claim of removal');
      await fx.exec(dir, forgetUser, [0]);
      assert.equal(unitFile(dir, DESIRED, 'user'), false, 'the tombstone is dropped');
      // "drop the tombstones first": then the teardown goes on with --allow-teardown, as before.
      await step(dir, ['reconcile', '-e', ENV, '--allow-teardown']);
      assert.deepEqual(teardownsIn(s.log), ['-td', '-base']);
      assert.equal(unitFile(dir, DESIRED, 'base'), false);
    },
  );

  group(
    'teardown requests: forget refuses an active unit, a unit others depend on waits for them, a Command without teardown: cannot claim its removal',
    ['NYL-FORGET-REFUSED', 'NYL-TEARDOWN-PENDING (dependents)', 'NYL-TEARDOWN-INCOMPLETE (teardown)'],
    async (fx) => {
      const s = scratch();
      const { dir } = project({
        db: logged(s.log, 'db'),
        app: logged(s.log, 'app', { dependsOn: ['db'] }),
        x: logged(s.log, 'x', { teardown: false }),
        y: logged(s.log, 'y'),
      });
      await step(dir, ['state', 'init', '-e', ENV]);
      await step(dir, ['reconcile', '-e', ENV]);

      const active = await step(dir, ['state', 'forget', '-e', ENV, '--unit', 'y', '--reason', 'not needed', '-o', 'json'], [1]);
      await fx.exec(dir, fx.only(fx.printed(active, 'NYL-FORGET-REFUSED', { unit: 'y' })), [0]);
      assert.deepEqual(teardownsIn(s.log), ['-y']);
      assert.equal(unitFile(dir, DESIRED, 'y'), false, 'y is torn down');

      const waits = await step(dir, ['teardown', '-e', ENV, '--unit', 'db', '-o', 'json'], [2]);
      assert.equal(waits.json.units.db.result, 'pending-teardown', show(waits));
      const app = fx.only(fx.printed(waits, 'NYL-TEARDOWN-PENDING (dependents)', { unit: 'db', params: { dependents: ['app'] } }));
      await fx.exec(dir, app, [0]);
      assert.deepEqual(teardownsIn(s.log), ['-y', '-app', '-db'], 'app, then the db whose request waited for it');
      for (const u of ['app', 'db']) assert.equal(unitFile(dir, DESIRED, u), false, `${u} is torn down`);

      const bare = await step(dir, ['teardown', '-e', ENV, '--unit', 'x', '-o', 'json'], [3]);
      await fx.exec(dir, fx.taking(fx.printed(bare, 'NYL-TEARDOWN-INCOMPLETE (teardown)', { unit: 'x' }), '--allow-incomplete'), [0]);
      assert.equal(unitFile(dir, DESIRED, 'x'), false, 'x is removed without a claim of removal');
    },
  );

  group(
    'a retained tombstone keeps the state from being deleted: each way the refusal names works as printed, each in its own copy',
    ['NYL-STATE-DELETE-INCARNATIONS'],
    async (fx) => {
      const s = scratch();
      const { dir } = project({ a: logged(s.log, 'a') });
      await step(dir, ['state', 'init', '-e', ENV]);
      await step(dir, ['reconcile', '-e', ENV]);
      commitFiles(dir, { 'nyl.yaml': project({}).yaml });
      const kept = await step(dir, ['reconcile', '-e', ENV, '-o', 'json']);
      assert.equal(kept.json.units.a.result, 'retained', show(kept));
      const deleteIt = ['state', 'delete', '-e', ENV, '--reason', 'decommission', '-o', 'json'];
      const refused = await step(dir, deleteIt, [1]);
      const [all, teardown, forget] = fx.commands(fx.printed(refused, 'NYL-STATE-DELETE-INCARNATIONS', { unit: 'a', params: { forgettable: ['a'] } }));
      assert.deepEqual(
        [all, teardown, forget].map((c) => c.argv.slice(0, 2)),
        [
          ['state', 'delete'],
          ['teardown', '-e'],
          ['state', 'forget'],
        ],
      );
      const second = fork(dir);
      const third = fork(dir);
      await fx.exec(dir, all, [0]);
      assert.deepEqual(teardownsIn(s.log), ['-a'], 'the tombstone is torn down, then the state deleted');
      await fx.exec(second, teardown, [0]);
      assert.deepEqual(teardownsIn(s.log), ['-a', '-a'], 'the tombstone is torn down in the second copy too');
      await fx.exec(third, forget, [0]);
      assert.deepEqual(teardownsIn(s.log), ['-a', '-a'], 'forget touches no resource');
      for (const world of [second, third]) await step(world, deleteIt);
      for (const world of [dir, second, third]) assert.match(git(world, 'show', `${DESIRED}:state.yaml`), /status: deleted/);
    },
  );

  group('state delete --teardown: a teardown that fails and one that times out', ['NYL-STATE-DELETE-INCARNATIONS (failed)'], async (fx) => {
    const s = scratch();
    const { dir } = project({
      f: `script: 'true'\nteardown: {script: '[ -e ${s.gate} ] && echo -f >> ${s.log}'}`,
      t: `timeout: 1s\nscript: 'true'\nteardown: {script: '[ -e ${s.gate} ] || sleep 5; echo -t >> ${s.log}'}`,
    });
    await step(dir, ['state', 'init', '-e', ENV]);
    await step(dir, ['reconcile', '-e', ENV]);
    const failed = await step(dir, ['state', 'delete', '-e', ENV, '--teardown', '--reason', 'decommission', '-o', 'json'], [1]);
    assert.deepEqual(
      ['f', 't'].map((u) => failed.json.details.teardown.units[u].result),
      ['failed', 'failed'],
      show(failed),
    );
    // Two units failed: the fix names both, with a recover for each; the reader picks t's, whose teardown timed out.
    const both = fx.printed(failed, 'NYL-STATE-DELETE-INCARNATIONS (failed)', {
      where: (d) => [...d.units].sort().join() === 'f,t',
      params: { unit: undefined, units: ['f', 't'] },
    });
    const [again, recoverF, recover, incomplete] = fx.commands(both);
    assert.deepEqual(
      [again.argv.slice(0, 3), recoverF.argv.slice(0, 5), recover.argv.slice(0, 5), incomplete.argv.slice(0, 5)],
      [
        ['state', 'delete', '-e'],
        ['recover', '-e', ENV, '--unit', 'f'],
        ['recover', '-e', ENV, '--unit', 't'],
        ['state', 'delete', '-e', ENV, '--teardown'],
      ],
    );

    // The cause is fixed. t timed out, so its teardown runs again only after recover; f's runs again as it is.
    openGate(s.gate);
    const other = fork(dir);
    await fx.exec(dir, recover, [0]);
    await fx.exec(dir, again, [0]);
    assert.deepEqual(teardownsIn(s.log).sort(), ['-f', '-t']);
    assert.match(git(dir, 'show', `${DESIRED}:state.yaml`), /status: deleted/);

    // In a copy, the deletion alone first: f goes, t still needs recover, and the same fix says so about t.
    const retried = await fx.exec(other, again, [1]);
    assert.deepEqual(teardownsIn(s.log).sort(), ['-f', '-f', '-t']);
    assert.equal(unitFile(other, DESIRED, 'f'), false, 'f is torn down');
    const onlyT = fx.commands(fx.printed(retried, 'NYL-STATE-DELETE-INCARNATIONS (failed)', { unit: 't' }));
    assert.deepEqual(
      onlyT.map((c) => c.argv),
      [again.argv, recover.argv, incomplete.argv],
    );
    await fx.exec(other, recover, [0]);
    await fx.exec(other, again, [0]);
    assert.deepEqual(teardownsIn(s.log).sort(), ['-f', '-f', '-t', '-t']);
    assert.match(git(other, 'show', `${DESIRED}:state.yaml`), /status: deleted/);
  });

  group(
    'state delete --teardown of Commands without teardown:: refused before any teardown, its one fix deletes',
    ['NYL-STATE-DELETE-INCOMPLETE'],
    async (fx) => {
      const s = scratch();
      const { dir } = project({
        a: logged(s.log, 'a', { teardown: false }),
        b: logged(s.log, 'b', { teardown: false, dependsOn: ['a'] }),
        c: logged(s.log, 'c'),
      });
      await step(dir, ['state', 'init', '-e', ENV]);
      await step(dir, ['reconcile', '-e', ENV]);
      const refused = await step(dir, ['state', 'delete', '-e', ENV, '--teardown', '--allow-dependents', '--reason', 'decommission', '-o', 'json'], [1]);
      const d = fx.printed(refused, 'NYL-STATE-DELETE-INCOMPLETE', {
        params: { unit: undefined, units: ['a', 'b'], listed: 'a, b', again: '--allow-dependents' },
      });
      assert.deepEqual(d.units, ['a', 'b']);
      assert.deepEqual(teardownsIn(s.log), [], 'nothing torn down');
      const r = await fx.exec(dir, fx.taking(d, '--allow-incomplete'), [0]);
      assert.deepEqual(teardownsIn(s.log), ['-c']);
      assert.match(r.stdout, /removed:\n    - a\n    - b\n    - c\n/, show(r));
      assert.match(git(dir, 'show', `${DESIRED}:state.yaml`), /status: deleted/);
    },
  );

  group('teardown --cancel of a teardown that started: its fixes pause it or finish it', ['NYL-TEARDOWN-STARTED'], async (fx) => {
    const s = scratch();
    const { dir } = project({ a: logged(s.log, 'a', { teardown: `[ -e ${s.gate} ] && echo -a >> ${s.log}` }) });
    await step(dir, ['state', 'init', '-e', ENV]);
    await step(dir, ['reconcile', '-e', ENV]);
    await step(dir, ['teardown', '-e', ENV, '--unit', 'a', '--reason', 'by mistake'], [3]);
    const refused = await step(dir, ['teardown', '-e', ENV, '--cancel', '--unit', 'a', '-o', 'json'], [1]);
    const [hold, finish] = fx.commands(fx.printed(refused, 'NYL-TEARDOWN-STARTED', { unit: 'a', params: { why: 'deleting' } }));
    assert.deepEqual([hold.argv.slice(0, 1), finish.argv.slice(0, 1)], [['hold'], ['teardown']]);
    const other = fork(dir);
    await fx.exec(dir, hold, [0]);
    assert.deepEqual(teardownsIn(s.log), [], 'paused: nothing torn down');
    openGate(s.gate);
    await fx.exec(other, finish, [0]);
    assert.deepEqual(teardownsIn(s.log), ['-a']);
  });

  group('state delete --teardown: a held unit it waits for', ['NYL-STATE-DELETE-WAITING', 'NYL-UNIT-HELD'], async (fx) => {
    const s = scratch();
    const { dir } = project({ a: logged(s.log, 'a'), h: logged(s.log, 'h') });
    await step(dir, ['state', 'init', '-e', ENV]);
    await step(dir, ['reconcile', '-e', ENV]);
    await step(dir, ['hold', '-e', ENV, '--unit', 'h', '--reason', 'incident']);
    const waiting = await step(dir, ['state', 'delete', '-e', ENV, '--teardown', '--reason', 'decommission', '-o', 'json'], [2]);
    assert.deepEqual(teardownsIn(s.log), ['-a']);
    const again = fx.only(fx.printed(waiting, 'NYL-STATE-DELETE-WAITING', { unit: 'h' }));
    // "the teardown report (details.teardown) says what each unit waits for": h is held.
    const resume = fx.only(fx.printed({ ...waiting, json: waiting.json.details.teardown }, 'NYL-UNIT-HELD', { unit: 'h' }));
    await fx.exec(dir, resume, [0]);
    await fx.exec(dir, again, [0]);
    assert.deepEqual(teardownsIn(s.log), ['-a', '-h']);
    assert.match(git(dir, 'show', `${DESIRED}:state.yaml`), /status: deleted/);
  });

  group(
    'a Command that becomes an OciImage: --unit does no lifecycle work, and the old incarnation waits for --allow-teardown',
    ['NYL-TEARDOWN-PENDING (lifecycle-excluded)', 'NYL-UNIT-KIND-CHANGE (waitsForTeardown)', 'NYL-TEARDOWN-PENDING (needs-allow-teardown)'],
    async (fx) => {
      const s = scratch();
      const { dir } = project({ k: logged(s.log, 'k', { policy: 'Teardown' }), a: logged(s.log, 'a') });
      await step(dir, ['state', 'init', '-e', ENV]);
      await step(dir, ['reconcile', '-e', ENV]);
      const image = `apiVersion: nyl.io/v1\nkind: OciImage\nmetadata: {name: k}\nspec:\n  image: busybox@sha256:${'0'.repeat(64)}\n  deletionPolicy: Teardown`;
      commitFiles(dir, { 'nyl.yaml': nylYaml(environment(ENV), image, command('a', logged(s.log, 'a'))) });

      const only = await step(dir, ['reconcile', '-e', ENV, '--unit', 'k', '-o', 'json'], [2]);
      const whole = fx.only(fx.printed(only, 'NYL-TEARDOWN-PENDING (lifecycle-excluded)', { unit: 'k' }));
      const waits = await fx.exec(dir, whole, [2]);
      const allow = fx.only(fx.printed(waits, 'NYL-UNIT-KIND-CHANGE (waitsForTeardown)', { unit: 'k' }));
      assert.deepEqual(fx.only(fx.printed(waits, 'NYL-TEARDOWN-PENDING (needs-allow-teardown)', { unit: 'k' })), allow);
      assert.deepEqual(teardownsIn(s.log), []);

      const r = await fx.exec(dir, allow, [3]); // the new incarnation: its image is not on this machine
      assert.deepEqual(teardownsIn(s.log), ['-k'], "the old Command's teardown ran");
      assert.match(r.stdout, /^k +OciImage +failed /m, show(r));
    },
  );

  group('a state repository that goes away while a unit runs and comes back', ['NYL-RUN-UNRECORDED'], async (fx) => {
    const s = scratch();
    const bare = makeBareRepo();
    const { dir } = project({ a: gatedScript(s.log, s.gate) }, { state: pathToFileURL(bare).href, envExtra: 'lease: {duration: 4s}' });
    await step(dir, ['state', 'init', '-e', ENV]);
    const h = startNyl(dir, ['reconcile', '-e', ENV, '-o', 'json']);
    await waitUntil(() => logLines(s.log).includes('start a'), 20000, 'a running');
    const away = `${bare}.away`;
    fs.renameSync(bare, away);
    openGate(s.gate);
    const r = await h.done;
    fs.renameSync(away, bare);
    assert.equal(r.code, 4, show(r));
    // The run's retries outlast its 4 s lease, so "after the lease's deadline" holds already.
    const [reconcile, look] = fx.commands(fx.printed(r, 'NYL-RUN-UNRECORDED'));
    await fx.exec(dir, reconcile, [4]);
    assert.deepEqual(runRefs(bare), [], "the run's records are imported");
    const after = await fx.exec(dir, look, [4]);
    assert.match(after.stdout, /^a +Command +uncertain/m, 'a started without a recorded result: uncertain, not run again');
    assert.deepEqual(
      logLines(s.log).filter((l) => l.startsWith('start')),
      ['start a'],
    );
  });
});

describe('sensitive outputs', () => {
  const keyOf = (n) => Buffer.alloc(32, n).toString('base64');
  const producer = (log) => `script: 'echo s >> ${log}; printf "{\\"token\\": {\\"value\\": \\"t0k3n-value\\", \\"sensitive\\": true}}" > "$NYL_OUTPUTS"'`;
  const consumer = (log, version) => `env: {TOKEN: "\${{ units.s.outputs.token }}", V: "${version}"}\nscript: 'echo c >> ${log}'`;

  group('a sensitive output without a key, and a sealed value no configured key opens', ['NYL-SECRETS-KEY-MISSING', 'NYL-SECRET-UNAVAILABLE'], async (fx) => {
    const s = scratch();
    const { dir } = project({ s: producer(s.log), c: consumer(s.log, '1') });
    await step(dir, ['state', 'init', '-e', ENV]);
    const missing = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [3]);
    const withKey = fx.only(fx.printed(missing, 'NYL-SECRETS-KEY-MISSING', { unit: 's' }));
    await fx.exec(dir, withKey, [0], { env: { NYL_SECRETS_KEY: keyOf(1) } });
    assert.deepEqual(logLines(s.log), ['s', 's', 'c']);

    commitFiles(dir, { 'nyl.yaml': nylYaml(environment(ENV), command('s', producer(s.log)), command('c', consumer(s.log, '2'))) });
    const lost = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [3], { NYL_SECRETS_KEY: keyOf(2) });
    // The fix names the producer of the value the consumer could not open.
    const rotated = fx.only(fx.printed(lost, 'NYL-SECRET-UNAVAILABLE', { unit: 'c', params: { producer: 's' } }));
    await fx.exec(dir, rotated, [0], { env: { NYL_SECRETS_KEY: `${keyOf(2)},${keyOf(1)}` } });
    assert.deepEqual(logLines(s.log).slice(-1), ['c'], 'the consumer ran once the old key opened the seal');
  });

  group(
    'a rotation: a reseal with a key that opens nothing names the key it needs; the printed reseal reseals with it, the printed reconcile runs the consumer once, and the printed --reapply records a new value',
    ['NYL-RESEAL-UNOPENED', 'NYL-RESEAL-CONSUMERS'],
    async (fx) => {
      const s = scratch();
      // converge: a --reapply runs it at once (a manual unit would wait for --approve, as its own fix says).
      const { dir } = project({ s: `recovery: converge\n${producer(s.log)}`, c: consumer(s.log, '1') });
      await step(dir, ['state', 'init', '-e', ENV]);
      await step(dir, ['reconcile', '-e', ENV], [0], { NYL_SECRETS_KEY: keyOf(1) });
      const refused = await step(dir, ['state', 'reseal', '-e', ENV, '-o', 'json'], [1], { NYL_SECRETS_KEY: keyOf(2) });
      const keyId = createHash('sha256').update(Buffer.alloc(32, 1)).digest('hex').slice(0, 16);
      const [reseal, reapply] = fx.commands(fx.printed(refused, 'NYL-RESEAL-UNOPENED', { unit: 's', params: { output: 'token', keyId } }));
      assert.deepEqual(
        [reseal.argv, reapply.argv.slice(0, 6)],
        [
          ['state', 'reseal', '-e', ENV],
          ['reconcile', '-e', ENV, '--unit', 's', '--reapply'],
        ],
      );

      // The key is lost: only a new value helps (in a copy of this world).
      const lost = fork(dir);
      const reapplied = await fx.exec(lost, reapply, [0], { env: { NYL_SECRETS_KEY: keyOf(2) } });
      assert.equal(reapplied.code, 0);
      assert.equal(logLines(s.log).filter((l) => l === 's').length, 2, 's executed again and recorded its value under the new key');

      const resealed = await fx.exec(dir, reseal, [0], { env: { NYL_SECRETS_KEY: `${keyOf(2)},${keyOf(1)}` } });
      const reconcile = fx.only(fx.printed(resealed, 'NYL-RESEAL-CONSUMERS', { unit: 'c', params: { units: ['c'] } }));
      const before = logLines(s.log).length;
      await fx.exec(dir, reconcile, [0], { env: { NYL_SECRETS_KEY: keyOf(2) } });
      assert.deepEqual(logLines(s.log).slice(before), ['c'], 'the consumer ran once, with the new key alone');
    },
  );
  group(
    'a reseal while a cancelled run waits for its import: the printed reconcile imports its old-key seal, then the printed reseal reaches it',
    ['NYL-RESEAL-RUNS-UNIMPORTED'],
    async (fx) => {
      const s = scratch();
      // converge: the import runs g again at once (a manual unit would wait for recover).
      const { dir } = project({ s: producer(s.log), g: `${gatedScript(s.log, s.gate)}\nrecovery: converge` });
      await step(dir, ['state', 'init', '-e', ENV]);
      const h = startNyl(dir, ['reconcile', '-e', ENV], { env: { NYL_SECRETS_KEY: keyOf(1) } });
      await waitUntil(() => logLines(s.log).includes('start g') && checkpointed(dir, 's'), 20000, "g running, s's receipt checkpointed");
      h.child.kill('SIGTERM');
      assert.equal((await h.done).code, 4);
      openGate(s.gate);

      const rotating = { NYL_SECRETS_KEY: `${keyOf(2)},${keyOf(1)}` };
      const refused = await step(dir, ['state', 'reseal', '-e', ENV, '-o', 'json'], [1], rotating);
      const [importRuns, recover, reseal] = fx.commands(fx.printed(refused, 'NYL-RESEAL-RUNS-UNIMPORTED'));
      assert.deepEqual(
        [importRuns.argv, recover.argv, reseal.argv],
        [
          ['reconcile', '-e', ENV],
          ['recover', '-e', ENV],
          ['state', 'reseal', '-e', ENV],
        ],
      );
      await fx.exec(dir, importRuns, [0], { env: rotating });
      assert.deepEqual(runRefs(dir), [], 'the cancelled run is imported');
      await fx.exec(dir, reseal, [0], { env: rotating });
      const clean = await step(dir, ['state', 'reseal', '-e', ENV, '-o', 'json'], [0], { NYL_SECRETS_KEY: keyOf(2) });
      assert.equal(clean.json.result, 'unchanged', 'every seal, the imported one too, opens with the new key alone');
    },
  );
});

describe('Terraform states', { skip: SKIP_NO_TERRAFORM }, () => {
  /** Every nyl run of these groups: the test settings of terraform (test/support/terraform.mjs). */
  const TF = terraformEnv();

  /** A root module: a local backend, one terraform_data resource whose creation appends `created` to log, and a sensitive output. */
  const moduleTf = (log) =>
    `terraform {\n  backend "local" {}\n}\n\nresource "terraform_data" "x" {\n  input = "x"\n  provisioner "local-exec" {\n    command = "echo created >> ${log}"\n  }\n}\n\noutput "password" {\n  value     = "pw-kept-in-the-backend"\n  sensitive = true\n}\n`;
  /** A Terraform unit of module infra/NAME whose local backend keeps its state at `tfstate`. */
  const tfUnit = (name, tfstate) =>
    `apiVersion: nyl.io/v1\nkind: Terraform\nmetadata: {name: ${name}}\nspec:\n  module: infra/${name}\n  backendConfig: {path: "${tfstate}"}`;

  /** A project (state in the clone) with Terraform unit `app` at `tfstate`, and more unit documents. */
  function tfProject(s, tfstate, ...more) {
    return makeProject({ 'nyl.yaml': nylYaml(environment(ENV), tfUnit('app', tfstate), ...more), 'infra/app/main.tf': moduleTf(s.log) });
  }

  /**
   * A scratch log, the state file of `app` beside it and the project (tfProject), with more unit
   * documents made from the scratch; `reconciled`: state init and a first reconcile done.
   */
  async function tfWorld({ more = () => [], reconciled = true } = {}) {
    const s = scratch();
    const tfstate = path.join(path.dirname(s.log), 'app.tfstate');
    const dir = tfProject(s, tfstate, ...more(s));
    if (reconciled) {
      await step(dir, ['state', 'init', '-e', ENV], [0], TF);
      await step(dir, ['reconcile', '-e', ENV], [0], TF);
    }
    return { s, tfstate, dir };
  }

  group(
    'a lost Terraform state: verify, status and the drifted row name the --reapply that creates it again; a moved backend path fails the unit, and the printed --reapply creates it there',
    ['NYL-BACKEND-STATE-LOST (observed)', 'NYL-BACKEND-STATE-LOST'],
    async (fx) => {
      const { s, tfstate, dir } = await tfWorld();
      fs.rmSync(tfstate);

      const verified = await step(dir, ['verify', '-e', ENV, '-o', 'json'], [2], TF);
      const printed = fx.commands(fx.printed(verified, 'NYL-BACKEND-STATE-LOST (observed)', { unit: 'app' }));
      const [verify, reapply] = printed;
      assert.deepEqual(
        [verify.argv, reapply.argv],
        [
          ['verify', '-e', ENV, '--unit', 'app'],
          ['reconcile', '-e', ENV, '--unit', 'app', '--reapply', '--reason', FILL['<why>']],
        ],
      );
      assert.deepEqual(
        fx.commands(fx.printed(await step(dir, ['status', '-e', ENV, '-o', 'json'], [2], TF), 'NYL-BACKEND-STATE-LOST (observed)', { unit: 'app' })),
        printed,
      );
      const drifted = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [2], TF);
      assert.deepEqual(fx.commands(fx.printed(drifted, 'NYL-BACKEND-STATE-LOST (observed)', { unit: 'app' })), printed);
      assert.deepEqual(logLines(s.log), ['created'], 'nothing ran before the operator said so');
      // The printed verify checks again: still lost (exit 2), nothing created.
      await fx.exec(dir, verify, [2], { env: TF });
      await fx.exec(dir, reapply, [0], { env: TF });
      assert.deepEqual(logLines(s.log), ['created', 'created'], 'created again');
      await step(dir, ['verify', '-e', ENV], [0], TF);

      // The backend moves to an empty location: the unit fails, and waits for an acknowledgement.
      const moved = path.join(path.dirname(s.log), 'moved.tfstate');
      commitFiles(dir, { 'nyl.yaml': nylYaml(environment(ENV), tfUnit('app', moved)) }, 'app: another state path');
      const failed = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [3], TF);
      const [reconcileFirst, reapplyThere] = fx.commands(fx.printed(failed, 'NYL-BACKEND-STATE-LOST', { unit: 'app' }));
      assert.deepEqual(
        [reconcileFirst.argv, reapplyThere.argv],
        [
          ['reconcile', '-e', ENV],
          ['reconcile', '-e', ENV, '--unit', 'app', '--reapply', '--reason', FILL['<why>']],
        ],
      );
      assert.equal(fs.existsSync(moved), false, 'nothing was created at the new path');
      // The printed reconcile alone tries again, and refuses again.
      await fx.exec(dir, reconcileFirst, [3], { env: TF });
      assert.equal(fs.existsSync(moved), false);
      // Its resources are gone too (as far as this test is concerned): the operator's reason, and they are created there.
      const r = await fx.exec(dir, reapplyThere, [0], { env: TF });
      assert.match(r.stdout, /^app +Terraform +executed/m, show(r));
      assert.ok(fs.existsSync(moved));
      assert.deepEqual(logLines(s.log), ['created', 'created', 'created']);
    },
  );

  group(
    'a teardown of a unit whose state is gone: the printed recover --retry acknowledges it, then the printed teardown removes the unit',
    ['NYL-BACKEND-STATE-LOST (failed teardown)'],
    async (fx) => {
      const { s, tfstate, dir } = await tfWorld();
      fs.rmSync(tfstate);
      const refused = await step(dir, ['teardown', '-e', ENV, '--unit', 'app', '-o', 'json'], [3], TF);
      assert.equal(refused.json.units.app.code, 'NYL-BACKEND-STATE-LOST', show(refused));
      const [retry, teardown] = fx.commands(fx.printed(refused, 'NYL-BACKEND-STATE-LOST (failed teardown)', { unit: 'app' }));
      assert.deepEqual(
        [retry.argv.slice(0, 6), teardown.argv],
        [
          ['recover', '-e', ENV, '--unit', 'app', '--retry'],
          ['teardown', '-e', ENV, '--unit', 'app'],
        ],
      );
      assert.deepEqual(
        fx.commands(fx.printed(await step(dir, ['status', '-e', ENV, '-o', 'json'], [3], TF), 'NYL-BACKEND-STATE-LOST (failed teardown)', { unit: 'app' })),
        [retry, teardown],
      );
      await fx.exec(dir, retry, [0], { env: TF });
      const r = await fx.exec(dir, teardown, [0], { env: TF });
      assert.match(r.stdout, /^app +Terraform +removed/m, show(r));
    },
  );

  // The fix's first way forward: the refusal is retried by every run, so putting the state back is enough.
  group(
    'a moved backend path whose state file is put back, as the fix of the failure says first: the printed reconcile runs the unit again',
    ['NYL-BACKEND-STATE-LOST'],
    async (fx) => {
      const { s, tfstate, dir } = await tfWorld();
      const moved = path.join(path.dirname(s.log), 'moved.tfstate');
      commitFiles(dir, { 'nyl.yaml': nylYaml(environment(ENV), tfUnit('app', moved)) }, 'app: another state path');
      const failed = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [3], TF);
      const [reconcileFirst] = fx.commands(fx.printed(failed, 'NYL-BACKEND-STATE-LOST', { unit: 'app' }));
      // "or put the state file back ..., then `nyl reconcile -e dev`"
      fs.copyFileSync(tfstate, moved);
      const r = await fx.exec(dir, reconcileFirst, [0], { env: TF });
      assert.match(r.stdout, /^app +Terraform +executed/m, show(r));
      assert.deepEqual(logLines(s.log), ['created'], 'the state that was put back holds the resource: nothing is created again');
    },
  );

  group('a state that already holds resources no receipt of the unit recorded: the printed --reapply takes it over', ['NYL-BACKEND-SHARED'], async (fx) => {
    const { s, tfstate, dir } = await tfWorld({ reconciled: false });
    // Made outside Nyl: terraform applied in a copy of the module, to the same state file.
    const byHand = path.join(path.dirname(s.log), 'by-hand');
    fs.cpSync(path.join(dir, 'infra/app'), byHand, { recursive: true });
    assert.equal(terraform(byHand, ['init', '-input=false', `-backend-config=path=${tfstate}`]).status, 0);
    assert.equal(terraform(byHand, ['apply', '-auto-approve', '-input=false']).status, 0);
    const lineage = JSON.parse(fs.readFileSync(tfstate, 'utf8')).lineage;
    await step(dir, ['state', 'init', '-e', ENV], [0], TF);

    const refused = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [3], TF);
    assert.equal(refused.json.units.app.code, 'NYL-BACKEND-SHARED', show(refused));
    const [reconcile, takeOver] = fx.commands(fx.printed(refused, 'NYL-BACKEND-SHARED', { unit: 'app' }));
    assert.deepEqual(
      [reconcile.argv, takeOver.argv],
      [
        ['reconcile', '-e', ENV],
        ['reconcile', '-e', ENV, '--unit', 'app', '--reapply', '--reason', FILL['<why>']],
      ],
    );
    await fx.exec(dir, reconcile, [3], { env: TF });
    const r = await fx.exec(dir, takeOver, [0], { env: TF });
    assert.match(r.stdout, /^app +Terraform +executed/m, show(r));
    assert.match(git(dir, 'show', `${OBSERVED}:units/app.yaml`), new RegExp(`lineage: ${lineage}`), 'app took the state over');
    assert.deepEqual(logLines(s.log), ['created'], 'and created nothing new');
  });

  group(
    "a consumer of a Terraform producer's sensitive output whose state was deleted: the printed --reapply of the producer, then reconcile, runs the consumer",
    ['NYL-SECRET-UNAVAILABLE (backend)'],
    async (fx) => {
      const consumer = (log, version) => command('c', `env: {PW: "\${{ units.app.outputs.password }}", V: "${version}"}\nscript: 'echo consumed >> ${log}'`);
      const { s, tfstate, dir } = await tfWorld({ more: (sc) => [consumer(sc.log, '1')] });
      assert.deepEqual(logLines(s.log), ['created', 'consumed']);

      // The consumer must run again (its key changed); the producer's backend no longer holds the value.
      commitFiles(dir, { 'nyl.yaml': nylYaml(environment(ENV), tfUnit('app', tfstate), consumer(s.log, '2')) }, 'c: version 2');
      fs.rmSync(tfstate);
      const unavailable = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [3], TF);
      assert.deepEqual([unavailable.json.units.app.result, unavailable.json.units.c.result], ['current', 'failed'], show(unavailable));
      const [reapply, reconcile] = fx.commands(fx.printed(unavailable, 'NYL-SECRET-UNAVAILABLE (backend)', { unit: 'c', params: { producer: 'app' } }));
      assert.deepEqual(
        [reapply.argv.slice(0, 6), reconcile.argv],
        [
          ['reconcile', '-e', ENV, '--unit', 'app', '--reapply'],
          ['reconcile', '-e', ENV],
        ],
      );
      await fx.exec(dir, reapply, [0], { env: TF });
      assert.deepEqual(logLines(s.log), ['created', 'consumed', 'created'], 'the producer created it again');
      await fx.exec(dir, reconcile, [0], { env: TF });
      assert.deepEqual(logLines(s.log), ['created', 'consumed', 'created', 'consumed'], 'the consumer ran with the value read back');
    },
  );
  group(
    'a Terraform output whose digest an old key made: reseal leaves it, and the printed --reapply digests it again with the new key',
    ['NYL-RESEAL-KEPT'],
    async (fx) => {
      const keyOf = (n) => Buffer.alloc(32, n).toString('base64');
      const { s, dir } = await tfWorld({ reconciled: false });
      await step(dir, ['state', 'init', '-e', ENV], [0], TF);
      await step(dir, ['reconcile', '-e', ENV], [0], { ...TF, NYL_SECRETS_KEY: keyOf(1) });
      const rotating = { ...TF, NYL_SECRETS_KEY: `${keyOf(2)},${keyOf(1)}` };
      const resealed = await step(dir, ['state', 'reseal', '-e', ENV, '-o', 'json'], [0], rotating);
      assert.equal(resealed.json.result, 'unchanged', show(resealed));
      const reapply = fx.only(fx.printed(resealed, 'NYL-RESEAL-KEPT', { unit: 'app', params: { units: ['app'] } }));
      await fx.exec(dir, reapply, [0], { env: rotating });
      assert.deepEqual(logLines(s.log), ['created'], 'an apply without changes creates nothing');
      const clean = await step(dir, ['state', 'reseal', '-e', ENV, '-o', 'json'], [0], { ...TF, NYL_SECRETS_KEY: keyOf(2) });
      assert.deepEqual([clean.json.result, clean.json.details.kept], ['unchanged', []], show(clean));
    },
  );
});

const podman = await podmanAvailable();

describe('drift', () => {
  group('a drift check that fails: once what it reports is fixed, the printed verify checks the unit again', ['NYL-DRIFT-CHECK-FAILED'], async (fx) => {
    const s = scratch();
    const { dir } = project({ site: `script: 'true'\ncheck: {script: 'test -e ${s.gate} || exit 3'}` });
    await step(dir, ['state', 'init', '-e', ENV]);
    await step(dir, ['reconcile', '-e', ENV]);
    const failed = await step(dir, ['verify', '-e', ENV, '-o', 'json'], [1]);
    const again = fx.only(fx.printed(failed, 'NYL-DRIFT-CHECK-FAILED', { unit: 'site' }));
    openGate(s.gate);
    const r = await fx.exec(dir, again, [0]);
    assert.match(r.stdout, /^site +Command +in-sync$/m, show(r));
  });

  group('an uncommitted edit to nyl.yaml: the printed plan --worktree shows it', ['NYL-SOURCE-UNCOMMITTED'], async (fx) => {
    const { dir, yaml } = project({ site: "script: 'echo v1'" });
    await step(dir, ['state', 'init', '-e', ENV]);
    await step(dir, ['reconcile', '-e', ENV]);
    fs.writeFileSync(path.join(dir, 'nyl.yaml'), yaml.replace("echo v1'", "echo v2'"));
    const planned = await step(dir, ['plan', '-e', ENV, '-o', 'json'], [0]);
    const printed = fx.printed(planned, 'NYL-SOURCE-UNCOMMITTED', { params: { rerun: 'plan', paths: ['nyl.yaml'] } });
    const r = await fx.exec(dir, fx.only(printed), [2]);
    assert.match(r.stdout, /^site +Command +execute/m, `the working nyl.yaml is what it plans: ${show(r)}`);
  });
});

/** Runs every printed command of d that this version has; each must exit with one of its `exits` (by command word). */
async function runPrinted(fx, dir, d, exits, { fill, env } = {}) {
  const results = [];
  for (const cmd of fx.commands(d, fill)) results.push(await fx.exec(dir, cmd, exits[cmd.argv[0]] ?? [0], { env }));
  return results;
}

describe('approvals and drift', () => {
  group(
    'a unit awaiting approval, a reapply of a manual unit, a digest that does not match: the printed plan and reconcile run',
    ['NYL-UNIT-AWAITING-APPROVAL', 'NYL-UNIT-AWAITING-APPROVAL (reapply)', 'NYL-APPROVAL-DIGEST-MISMATCH'],
    async (fx) => {
      const { dir } = project({
        gate: "script: 'true'\napproval: {required: true}",
        db: "script: 'true'\nrecovery: manual",
        strict: "script: 'true'\napproval: {required: true, requireDigest: true}",
      });
      await step(dir, ['state', 'init', '-e', ENV]);
      const waiting = await step(dir, ['reconcile', '-e', ENV, '--approve', 'strict=sha256:' + '0'.repeat(64), '-o', 'json'], [2]);
      const gate = fx.printed(waiting, 'NYL-UNIT-AWAITING-APPROVAL', { unit: 'gate' });
      const mismatch = fx.printed(waiting, 'NYL-APPROVAL-DIGEST-MISMATCH', { unit: 'strict', params: { digest: waiting.json.units.strict.approval.digest } });
      // Run from CI: the CI user is the approver on record.
      await runPrinted(fx, dir, gate, { plan: [2], reconcile: [2] }, { env: { GITHUB_ACTOR: 'octocat' } });
      const body = commitBody(git(dir, 'log', '-1', '--format=%B', 'refs/heads/nyl/dev/observed'));
      assert.deepEqual([body.units.gate.result, body.units.gate.approval.by, body.units.gate.approval.source], ['executed', ['octocat'], 'github']);
      await runPrinted(fx, dir, mismatch, { plan: [0, 2] });
      assert.equal(commitBody(git(dir, 'log', '-1', '--format=%B', OBSERVED)).units.strict.result, 'executed', 'the printed digest applied it');
      const reapply = await step(dir, ['reconcile', '-e', ENV, '--unit', 'db', '--reapply', '--reason', 'rotate', '-o', 'json'], [2]);
      await runPrinted(fx, dir, fx.printed(reapply, 'NYL-UNIT-AWAITING-APPROVAL (reapply)', { unit: 'db' }), { plan: [0, 2] });
    },
  );

  group(
    'drift found by verify: the printed reconcile repairs it, with an approval for a manual unit, or with --reapply under driftRepair: manual',
    ['NYL-UNIT-DRIFTED', 'NYL-UNIT-DRIFTED (repairConverge)', 'NYL-UNIT-DRIFTED (repairApprove)'],
    async (fx) => {
      const s = scratch();
      const marked = (name) => `script: 'touch ${s.gate}-${name}'\ncheck: {script: 'test -e ${s.gate}-${name} || exit 1'}`;
      const { dir } = project({ site: `${marked('site')}\nrecovery: converge`, db: `${marked('db')}\nrecovery: manual` });
      await step(dir, ['state', 'init', '-e', ENV]);
      await step(dir, ['reconcile', '-e', ENV]);
      for (const n of ['site', 'db']) fs.rmSync(`${s.gate}-${n}`);
      const drifted = await step(dir, ['verify', '-e', ENV, '-o', 'json'], [2]);
      const seen = (await status(dir)).json.units;
      assert.deepEqual(
        [seen.site.state, seen.site.drift.status, seen.site.driftHistory, seen.db.state],
        ['drifted', 'drifted', undefined, 'awaiting-approval'],
      );
      await runPrinted(fx, dir, fx.printed(drifted, 'NYL-UNIT-DRIFTED (repairConverge)', { unit: 'site' }), { reconcile: [2] });
      await runPrinted(fx, dir, fx.printed(drifted, 'NYL-UNIT-DRIFTED (repairApprove)', { unit: 'db' }), { plan: [2] });
      assert.ok(fs.existsSync(`${s.gate}-site`) && fs.existsSync(`${s.gate}-db`), 'both repaired');
      assert.equal((await status(dir)).json.units.site.driftHistory[0].status, 'drifted', 'the observation of the old receipt is kept');

      const manual = project({ site: `${marked('m')}\nrecovery: converge` }, { envExtra: 'driftRepair: manual' });
      await step(manual.dir, ['state', 'init', '-e', ENV]);
      await step(manual.dir, ['reconcile', '-e', ENV]);
      fs.rmSync(`${s.gate}-m`);
      const stays = await step(manual.dir, ['verify', '-e', ENV, '-o', 'json'], [2]);
      await runPrinted(fx, manual.dir, fx.printed(stays, 'NYL-UNIT-DRIFTED', { unit: 'site' }), {});
      assert.ok(fs.existsSync(`${s.gate}-m`), 'reapplied');
    },
  );

  group(
    'state restore after a bad hand edit: a cancelled run is imported first as printed, then the restore resurrects a, and the printed --reapply runs it again',
    ['NYL-RESTORE-RUNS-UNIMPORTED', 'NYL-RESTORE-INCARNATIONS (resurrected)'],
    async (fx) => {
      const s = scratch();
      // recovery: converge, so that the printed --reapply needs no approval (a manual unit's names --approve next).
      const { dir } = project({ a: `${gatedScript(s.log, s.gate)}\nrecovery: converge`, b: "script: 'true'" });
      await step(dir, ['state', 'init', '-e', ENV]);
      openGate(s.gate);
      await step(dir, ['reconcile', '-e', ENV]);
      const c1 = git(dir, 'rev-parse', DESIRED);
      for (const ref of [DESIRED, OBSERVED]) editRef(dir, ref, (files) => Object.fromEntries(Object.entries(files).filter(([f]) => f !== 'units/a.yaml')));
      fs.rmSync(s.gate);
      const h = startNyl(dir, ['reconcile', '-e', ENV]);
      await waitUntil(() => logLines(s.log).filter((l) => l === 'start a').length === 2, 20000, 'a running again');
      h.child.kill('SIGTERM');
      assert.equal((await h.done).code, 4);
      openGate(s.gate);

      const refused = await step(dir, ['state', 'restore', '-e', ENV, '--to', c1, '--reason', 'undo the hand edit', '-o', 'json'], [1]);
      const [importRuns] = fx.commands(fx.printed(refused, 'NYL-RESTORE-RUNS-UNIMPORTED'));
      await fx.exec(dir, importRuns, [0, 4]);
      assert.deepEqual(runRefs(dir), [], 'the cancelled run is imported');

      const restored = await step(dir, ['state', 'restore', '-e', ENV, '--to', c1, '--reason', 'undo the hand edit', '-o', 'json']);
      const starts = logLines(s.log).filter((l) => l === 'start a').length;
      await fx.exec(
        dir,
        fx.only(
          fx.printed(restored, 'NYL-RESTORE-INCARNATIONS (resurrected)', { unit: 'a', where: (d) => d.data?.uid === restored.json.details.resurrected.a }),
        ),
        [0],
      );
      assert.equal(logLines(s.log).filter((l) => l === 'start a').length, starts + 1, 'a ran again');
    },
  );

  group('a manual unit in a --local run: the printed --local reconcile with --approve runs it', ['NYL-UNIT-AWAITING-APPROVAL (local)'], async (fx) => {
    const { dir } = project({ db: "script: 'true'\nrecovery: manual" });
    await step(dir, ['state', 'init', '-e', ENV]);
    const waiting = await step(dir, ['reconcile', '-e', ENV, '--local', '-o', 'json'], [2]);
    await runPrinted(fx, dir, fx.printed(waiting, 'NYL-UNIT-AWAITING-APPROVAL (local)', { unit: 'db' }), { plan: [0, 2] });
    assert.equal(commitBody(git(dir, 'log', '-1', '--format=%B', OBSERVED)).units.db.result, 'executed', 'the printed --approve applied it');
  });
});

describe('images', () => {
  group(
    'an OciImage unit whose image is not on this machine: once it is present, the printed reconcile runs it',
    ['NYL-IMAGE-UNRESOLVED'],
    async (fx) => {
      const tag = `localhost/nyl-fix-texts-${process.pid}:1`;
      const unit = `apiVersion: nyl.io/v1\nkind: OciImage\nmetadata: {name: img}\nspec:\n  image: ${tag}\n  command: [/bin/true]`;
      const dir = makeProject({ 'nyl.yaml': nylYaml(environment(ENV), unit) });
      await step(dir, ['state', 'init', '-e', ENV]);
      const missing = await step(dir, ['reconcile', '-e', ENV, '-o', 'json'], [3]);
      assert.equal(missing.json.units.img.code, 'NYL-IMAGE-UNRESOLVED', show(missing));
      assert.match(missing.json.units.img.detail, /is not present locally/);
      const again = fx.only(fx.printed(missing, 'NYL-IMAGE-UNRESOLVED', { unit: 'img' }));
      // What an operator does with the `podman pull` the reason names: here, the test image under the unit's tag.
      assert.equal((await sh(['podman', 'tag', TEST_IMAGE, tag])).code, 0);
      try {
        const r = await fx.exec(dir, again, [0]);
        assert.match(r.stdout, /^img +OciImage +executed/m, show(r));
      } finally {
        await sh(['podman', 'untag', TEST_IMAGE, tag]);
      }
    },
    { skip: podman.ok ? false : podman.reason },
  );
});

// --- the meta-check -------------------------------------------------------------------------------

/** Every variant key of the catalog whose fix names a nyl command: `CODE` and `CODE (probe)` for texts that differ. */
function keysNamingCommands() {
  const keys = [];
  for (const code of Object.keys(CATALOG)) {
    const texts = new Set();
    for (const [probe, params] of Object.entries(PROBES)) {
      const text = fixFor(code, { env: ENV, unit: 'u', ...params });
      if (texts.has(text) || !COMMAND_WORDS.test(text)) continue;
      texts.add(text);
      keys.push(probe ? `${code} (${probe})` : code);
    }
  }
  return keys;
}

/** The nyl commands a fix names outside backticks: a reader cannot tell where such a command ends. */
function bareCommands(text) {
  return COMMAND_WORDS.test(text.replace(/`[^`]*`/g, '')) ? [text] : [];
}

test('every catalog fix that names a nyl command has a scenario here, or a skip with its reason', () => {
  const required = keysNamingCommands();
  const covered = new Set(GROUPS.flatMap((g) => g.covers));
  assert.deepEqual(
    required.filter((k) => !covered.has(k) && !(k in SKIPPED)),
    [],
    'variants without a scenario',
  );
  assert.deepEqual(
    [...covered, ...Object.keys(SKIPPED)].filter((k) => !required.includes(k)),
    [],
    'scenarios or skips of variants that name no command',
  );
  assert.deepEqual(
    Object.keys(SKIPPED).filter((k) => covered.has(k)),
    [],
    'a skipped variant has a scenario: drop the skip',
  );
  const runnable = required.filter((k) => !(k in SKIPPED));
  assert.deepEqual(
    runnable.flatMap((k) => bareCommands(fixFor(parseKey(k).code, { env: ENV, unit: 'u', ...PROBES[parseKey(k).probe] }))),
    [],
    'commands named outside backticks',
  );
});
