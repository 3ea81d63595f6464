// 9. drivers: what the Terraform and OciImage drivers cost beyond the tools.
//   (A) Terraform, against the real `terraform` on PATH (skipped with a note when there is none).
//       10 Terraform units of one environment, all the same trivial HCL module (a local backend,
//       `variable "name"`, one `terraform_data` with `input = var.name`, an output of the
//       resource and a computed output `length(var.name)`), each with its own local backend at
//       an absolute path (`backendConfig: {path}`). Both sides get the same environment:
//       TF_IN_AUTOMATION=1, CHECKPOINT_DISABLE=1, TF_CLI_CONFIG_FILE=/dev/null.
//       1. Ratio to plain Terraform: the first `nyl reconcile -e dev --concurrency C` (fresh
//          state repository, fresh tfstate, fresh NYL_CACHE_DIR: `state init` ran with another
//          one) beside plain `terraform init -input=false` then `terraform apply -auto-approve
//          -input=false -var name=...` run from node for each module in a fresh copy of the module
//          with its own backend path, C at once; C = 1 and 4. Ratio = nyl / plain, per repetition
//          (the two run back to back, in alternating order), median over the repetitions.
//       2. Terraform processes per unit, by subcommand, in a separate counting run (never in the
//          timed ones): a `terraform` shim first on PATH logs the unit (NYL_UNIT), the subcommand,
//          its start and end and exit code, around the real terraform. Counted: the first
//          reconcile (everything executes), a reconcile after one unit's variable changed, the
//          no-op reconcile, and a verify. The same log gives the time between a unit's tool calls
//          (end of one to the start of the next) and Nyl's own time around them, at concurrency 1.
//       3. `nyl verify -e dev -o json` right after the first reconcile at concurrency 1: wall, exit
//          code and the verdicts of `details.units` (all 10 must be `in-sync`, exit 0); wrong
//          verdicts are reported, never a crash.
//       4. The no-op reconcile right after the first reconcile at concurrency 4.
//   (B) OciImage: 8 OciImage units of the offline busybox test image (`podman run ... true`),
//       beside 8 `podman run` of the same image with the driver's flags, 4 at once. Overhead per
//       unit = (reconcile - baseline) / 8: it includes the prepare phase (`podman image inspect`
//       pins the image). Skipped with a note when podman cannot run containers here.
import { accessSync, chmodSync, constants, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { AUTHOR_ARGS, childrenCpuMs, cpuMedian, exec, git, makeProject, median, nowMs, nyl, repeat, reps, retryKilled, summary, tempDir } from '../lib.mjs';

export const id = 'drivers';
export const title = 'What the Terraform driver (real terraform) and the OciImage driver (podman) cost beyond the tools';

const TF_UNITS = 10;
const OCI_UNITS = 8;
const CONCURRENCY = 4;
const CHANGED = 3; // the unit whose variable the counting run changes
const PODMAN_FLAGS = ['--rm', '--pull=never', '--network=none', '--runtime', 'runc', '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];
const IMAGE = 'localhost/nyl-test-busybox:1';

const MODULE_TF = `terraform {
  backend "local" {}
}

variable "name" {
  type = string
}

resource "terraform_data" "d" {
  input = var.name
}

output "greeting" {
  value = "hello \${terraform_data.d.output}"
}

# Computed from a variable only: known at plan time, stored in the state's outputs.
output "name_length" {
  value = length(var.name)
}
`;

/** What both sides give terraform (this machine's own TF_CLI_CONFIG_FILE names a missing file). */
const TF_ENV = { TF_IN_AUTOMATION: '1', CHECKPOINT_DISABLE: '1', TF_CLI_CONFIG_FILE: '/dev/null' };

/** The first executable `name` on PATH, or undefined. */
function onPath(name) {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    const file = join(dir, name);
    try {
      if (!statSync(file).isFile()) continue;
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      /* not here */
    }
  }
  return undefined;
}

function unitName(n) {
  return `tf${n}`;
}

/** nyl.yaml of the Terraform units; `names` overrides a unit's `name` variable. */
function terraformYaml(p, names = {}) {
  const env = { apiVersion: 'nyl.io/v1', kind: 'Environment', metadata: { name: 'dev' }, spec: { state: { repository: { repoURL: p.stateUrl } } } };
  const docs = [JSON.stringify(env)];
  for (let n = 0; n < TF_UNITS; n++) {
    const spec = { module: 'infra/app', variables: { name: names[n] ?? `u${n}` }, backendConfig: { path: join(p.base, 'tfstate', `u${n}.tfstate`) } };
    docs.push(JSON.stringify({ apiVersion: 'nyl.io/v1', kind: 'Terraform', metadata: { name: unitName(n) }, spec }));
  }
  return `${docs.join('\n---\n')}\n`;
}

/**
 * A project of the Terraform units, `state init` done with its own cache directory, so that the
 * first reconcile starts with an empty NYL_CACHE_DIR (p.cache) as on a fresh CI runner.
 */
async function terraformProject(label, extraEnv) {
  const p = await makeProject({ units: 0, label });
  mkdirSync(join(p.src, 'infra/app'), { recursive: true });
  writeFileSync(join(p.src, 'infra/app/main.tf'), MODULE_TF);
  writeFileSync(join(p.src, 'nyl.yaml'), terraformYaml(p));
  await git(p.src, ['add', '-A']);
  await git(p.src, ['commit', '-q', '-m', 'terraform units']);
  await nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS], { extraEnv: { ...extraEnv, NYL_CACHE_DIR: join(p.base, 'cache-init') } });
  return p;
}

/** The units of a reconcile's text report with the given result. */
function unitsWith(stdout, result) {
  return [...stdout.matchAll(new RegExp(`^(tf\\d+)\\s+Terraform\\s+${result}\\b`, 'gm'))].map((m) => m[1]);
}

async function reconcile(p, args, extraEnv) {
  return nyl(p, ['reconcile', '-e', 'dev', ...args, ...AUTHOR_ARGS], { extraEnv });
}

/** The first reconcile of a new fixture at `concurrency`, checked: every unit executed. */
async function firstReconcile(p, concurrency, extraEnv) {
  const r = await reconcile(p, ['--concurrency', String(concurrency)], extraEnv);
  const executed = unitsWith(r.stdout, 'executed').length;
  if (executed !== TF_UNITS) throw new Error(`the reconcile executed ${executed} of ${TF_UNITS} Terraform units\n${r.stdout}\n${r.stderr.slice(-2000)}`);
  return r;
}

/** `nyl verify -e dev -o json`: wall, exit code and the verdicts; never throws on a wrong verdict. */
async function verifyUnits(p, extraEnv) {
  const r = await nyl(p, ['verify', '-e', 'dev', '-o', 'json', ...AUTHOR_ARGS], { extraEnv, check: false });
  const verdicts = {};
  let problem;
  try {
    const units = JSON.parse(r.stdout).details?.units ?? {};
    for (let n = 0; n < TF_UNITS; n++) verdicts[unitName(n)] = units[unitName(n)]?.drift ?? 'missing';
  } catch {
    problem = `verify printed no JSON report (exit ${r.code}): ${r.stderr.slice(-500)}`;
  }
  const inSync = Object.values(verdicts).filter((v) => v === 'in-sync').length;
  return { ms: r.ms, cpuMs: r.cpuMs, code: r.code, verdicts, inSync, problem };
}

/** Runs `unit(i)` for i < count, `limit` at once; resolves with the wall time. */
async function pool(count, limit, unit) {
  const began = nowMs();
  let next = 0;
  const worker = async () => {
    while (next < count) await unit(next++);
  };
  await Promise.all(Array.from({ length: Math.min(limit, count) }, worker));
  return nowMs() - began;
}

/**
 * Plain terraform: for each module, a fresh copy of it (made before the clock starts) in a new
 * directory with its own backend path, `init` then `apply -auto-approve`, `concurrency` modules at once.
 */
async function plainTerraform(concurrency) {
  const root = tempDir(`drivers-plain-c${concurrency}`);
  const env = { ...process.env, ...TF_ENV };
  const dirs = [];
  for (let n = 0; n < TF_UNITS; n++) {
    const dir = join(root, `u${n}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'main.tf'), MODULE_TF);
    dirs.push(dir);
  }
  const calls = { init: [], apply: [] };
  const tf = async (dir, args) => {
    const r = await exec(['terraform', ...args], { cwd: dir, env, check: false });
    if (r.code !== 0) throw new Error(`plain terraform ${args.join(' ')} exited ${r.code} in ${dir}: ${r.stderr}${r.stdout}`.slice(0, 3000));
    calls[args[0]].push(r.ms);
  };
  const cpuBefore = childrenCpuMs();
  const ms = await pool(TF_UNITS, concurrency, async (n) => {
    await tf(dirs[n], ['init', '-input=false', `-backend-config=path=${join(root, 'state', `u${n}.tfstate`)}`]);
    await tf(dirs[n], ['apply', '-auto-approve', '-input=false', '-var', `name=u${n}`]);
  });
  const cpuAfter = childrenCpuMs();
  return { ms, cpuMs: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore, calls };
}

/**
 * One repetition: for C = 1 and 4, plain terraform and the first reconcile of a new fixture back
 * to back (order alternating between repetitions); then verify on the C = 1 fixture and the no-op
 * reconcile on the C = 4 fixture.
 */
async function terraformOnce(i) {
  const out = {};
  for (const c of [1, CONCURRENCY]) {
    const measure = () =>
      retryKilled(`drivers terraform c=${c}`, async () => {
        const p = await terraformProject(`drivers-tf-c${c}`, TF_ENV);
        const first = await firstReconcile(p, c, TF_ENV);
        return { p, first };
      });
    let nylRun;
    let plain;
    if (i % 2 === 0) {
      nylRun = await measure();
      plain = await plainTerraform(c);
    } else {
      plain = await plainTerraform(c);
      nylRun = await measure();
    }
    const { p, first } = nylRun;
    out[c] = {
      nyl: first.ms,
      nylCpu: first.cpuMs,
      plain: plain.ms,
      plainCpu: plain.cpuMs,
      ratio: first.ms / plain.ms,
      pushes: first.stats?.pushes,
      plainCalls: plain.calls,
    };
    if (c === 1) out.verify = await verifyUnits(p, TF_ENV);
    else {
      const noop = await reconcile(p, [], TF_ENV);
      const executed = unitsWith(noop.stdout, 'executed');
      if (executed.length) throw new Error(`the no-op reconcile executed ${executed.join(', ')}\n${noop.stdout}`);
      out.noop = { ms: noop.ms, cpuMs: noop.cpuMs };
    }
  }
  return out;
}

// ---------------------------------------------------------------- counting run (the shim)

const shQuote = (s) => `'${s.replace(/'/g, `'\\''`)}'`;

/**
 * A `terraform` in shimDir that runs the real one and then appends one line to log: the unit
 * (NYL_UNIT, which the driver sets), the subcommand, its start and end (ns since the epoch) and its
 * exit code. Used in the counting run only: it costs a shell and two `date` per call.
 */
function writeShim(shimDir, real, log) {
  mkdirSync(shimDir, { recursive: true });
  const file = join(shimDir, 'terraform');
  writeFileSync(
    file,
    [
      '#!/bin/sh',
      '# nyl bench: logs each terraform call (unit, subcommand, start, end, exit code) around the real one.',
      's=$(date +%s%N)',
      `${shQuote(real)} "$@"`,
      'rc=$?',
      `printf '%s %s %s %s %s\\n' "\${NYL_UNIT:--}" "\${1:--}" "$s" "$(date +%s%N)" "$rc" >> ${shQuote(log)}`,
      'exit $rc',
      '',
    ].join('\n'),
  );
  chmodSync(file, 0o755);
}

function readCalls(log) {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [unit, sub, start, end, rc] = line.split(' ');
      return { unit, sub, start: Number(BigInt(start) / 1000n) / 1000, end: Number(BigInt(end) / 1000n) / 1000, rc: Number(rc) };
    })
    .sort((a, b) => a.start - b.start);
}

const SUB_ORDER = ['init', 'plan', 'show', 'apply', 'output', 'state', 'destroy', 'version'];

/** {sub: count} of calls, ordered as a unit runs them. */
function bySub(calls) {
  const counts = {};
  for (const c of calls) counts[c.sub] = (counts[c.sub] ?? 0) + 1;
  const rank = (s) => (SUB_ORDER.includes(s) ? SUB_ORDER.indexOf(s) : SUB_ORDER.length);
  return Object.fromEntries(Object.entries(counts).sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b)));
}

/** "init 1, plan 1, ... = 5" of counts divided by `per`. */
function fmtCounts(counts, per = 1) {
  const entries = Object.entries(counts);
  if (!entries.length) return 'none';
  const n = (v) => (Number.isInteger(v / per) ? String(v / per) : (v / per).toFixed(1));
  const total = entries.reduce((s, [, v]) => s + v, 0);
  return `${entries.map(([k, v]) => `${k} ${n(v)}`).join(', ')} = ${n(total)}`;
}

/**
 * Where a sequential (concurrency 1) command's time goes, from the shim's log: time inside
 * terraform, Nyl's time before the first call and after the last, and the gaps between calls
 * (within a unit, and from one unit's last call to the next unit's first).
 */
function timeline(calls, startedMs, endedMs) {
  if (!calls.length) return undefined;
  const inTool = calls.reduce((s, c) => s + (c.end - c.start), 0);
  const within = [];
  const between = [];
  for (let k = 1; k < calls.length; k++) (calls[k].unit === calls[k - 1].unit ? within : between).push(calls[k].start - calls[k - 1].end);
  return {
    wall: endedMs - startedMs,
    inTool,
    lead: calls[0].start - startedMs,
    tail: endedMs - calls[calls.length - 1].end,
    within: within.length ? summary(within) : undefined,
    between: between.length ? summary(between) : undefined,
    perCall: summary(calls.map((c) => c.end - c.start)),
    perSub: Object.fromEntries(Object.keys(bySub(calls)).map((sub) => [sub, median(calls.filter((c) => c.sub === sub).map((c) => c.end - c.start))])),
  };
}

/** The counting run: first reconcile, one changed unit, no-op, verify; each with the shim's log. */
async function countingRun(real) {
  const p = await terraformProject('drivers-tf-count', TF_ENV);
  const log = join(p.base, 'terraform-calls.log');
  writeShim(join(p.base, 'shim'), real, log);
  const env = { ...TF_ENV, PATH: `${join(p.base, 'shim')}${delimiter}${process.env.PATH}` };
  const phase = async (fn) => {
    writeFileSync(log, '');
    const started = Date.now();
    const r = await fn();
    const ended = Date.now();
    const calls = readCalls(log);
    return { r, calls, started, ended };
  };
  const first = await phase(() => firstReconcile(p, 1, env));
  writeFileSync(join(p.src, 'nyl.yaml'), terraformYaml(p, { [CHANGED]: `u${CHANGED}-changed` }));
  await git(p.src, ['commit', '-q', '-a', '-m', `change ${unitName(CHANGED)}`]);
  const changed = await phase(() => reconcile(p, ['--concurrency', '1'], env));
  const changedExecuted = unitsWith(changed.r.stdout, 'executed');
  const noop = await phase(() => reconcile(p, ['--concurrency', '1'], env));
  const noopExecuted = unitsWith(noop.r.stdout, 'executed');
  const verify = await phase(() => verifyUnits(p, env));
  const failedCalls = [first, changed, noop, verify].flatMap((ph) => ph.calls.filter((c) => c.rc !== 0 && !(c.sub === 'plan' && c.rc === 2)));
  return {
    first: { counts: bySub(first.calls), timeline: timeline(first.calls, first.started, first.ended) },
    changed: {
      executed: changedExecuted,
      counts: bySub(changed.calls.filter((c) => c.unit === unitName(CHANGED))),
      others: bySub(changed.calls.filter((c) => c.unit !== unitName(CHANGED))),
      timeline: timeline(changed.calls, changed.started, changed.ended),
    },
    noop: { executed: noopExecuted, counts: bySub(noop.calls), wall: noop.ended - noop.started },
    verify: { counts: bySub(verify.calls), code: verify.r.code, inSync: verify.r.inSync },
    failedCalls: failedCalls.map((c) => `${c.unit} ${c.sub} exit ${c.rc}`),
  };
}

// ---------------------------------------------------------------- (A)

function total(counts) {
  return Object.values(counts).reduce((s, v) => s + v, 0);
}

function verdictText(verdicts) {
  const counts = {};
  for (const v of Object.values(verdicts)) counts[v] = (counts[v] ?? 0) + 1;
  return (
    Object.entries(counts)
      .map(([k, v]) => `${v} ${k}`)
      .join(', ') || 'none'
  );
}

async function terraformPart(metrics, notes, details) {
  const real = onPath('terraform');
  if (!real) {
    notes.push('Terraform (A) skipped: no `terraform` on PATH (install Terraform, e.g. v1.11.4; only its built-in provider is used, no network)');
    return;
  }
  const version = (await exec([real, 'version'], { env: { ...process.env, ...TF_ENV }, check: false })).stdout.split('\n')[0];
  const tf = await repeat(reps(3, 1), terraformOnce);
  const counted = await retryKilled('drivers terraform counting run', () => countingRun(real));
  details.terraform = { binary: real, version, repetitions: tf, counted };
  const c1 = 1;
  const c4 = CONCURRENCY;
  for (const c of [c1, c4]) {
    const nylS = summary(tf.map((r) => r[c].nyl));
    const plainS = summary(tf.map((r) => r[c].plain));
    const ratioS = summary(tf.map((r) => r[c].ratio));
    const how = c === 1 ? 'one at a time' : `${c} at once`;
    metrics.push(
      {
        name: `Terraform c=${c}: first nyl reconcile of ${TF_UNITS} units`,
        value: nylS.median,
        cpu: cpuMedian(tf.map((r) => ({ cpuMs: r[c].nylCpu }))),
        unit: 'ms',
        spread: nylS,
      },
      {
        name: `Terraform c=${c}: plain init + apply x${TF_UNITS}, ${how}`,
        value: plainS.median,
        cpu: cpuMedian(tf.map((r) => ({ cpuMs: r[c].plainCpu }))),
        unit: 'ms',
        spread: plainS,
      },
      { name: `Terraform c=${c}: ratio nyl / plain`, value: ratioS.median, unit: 'x', target: { op: '<=', value: 1.3 }, spread: ratioS },
    );
  }
  const { first, changed, noop, verify } = counted;
  metrics.push(
    { name: 'Terraform processes per unit: first reconcile', value: total(first.counts) / TF_UNITS, unit: '' },
    { name: `Terraform processes: one changed unit's reconcile (changed unit)`, value: total(changed.counts), unit: '' },
    { name: 'Terraform processes: the same, each unchanged unit', value: total(changed.others) / (TF_UNITS - 1), unit: '' },
    { name: 'Terraform processes per unit: no-op reconcile', value: total(noop.counts) / TF_UNITS, unit: '' },
  );
  const ver = summary(tf.map((r) => r.verify.ms));
  const codes = tf.map((r) => r.verify.code);
  metrics.push(
    { name: `Terraform: nyl verify of ${TF_UNITS} clean units`, value: ver.median, cpu: cpuMedian(tf.map((r) => r.verify)), unit: 'ms', spread: ver },
    { name: 'Terraform: verify exit code (worst of the runs)', value: Math.max(...codes.map((c) => c ?? 99)), unit: '', target: { op: '<=', value: 0 } },
    {
      name: `Terraform: verify units not in-sync (of ${TF_UNITS}, worst)`,
      value: Math.max(...tf.map((r) => TF_UNITS - r.verify.inSync)),
      unit: '',
      target: { op: '<=', value: 0 },
    },
  );
  const noopS = summary(tf.map((r) => r.noop.ms));
  metrics.push({
    name: `Terraform: no-op reconcile of ${TF_UNITS} units`,
    value: noopS.median,
    cpu: cpuMedian(tf.map((r) => r.noop)),
    unit: 'ms',
    spread: noopS,
  });
  const t = first.timeline;
  if (t) {
    metrics.push({ name: 'Terraform c=1: Nyl time per unit outside terraform (counting run)', value: (t.wall - t.inTool) / TF_UNITS, unit: 'ms' });
  }

  const ms = (v) => (v === undefined ? '-' : `${v.toFixed(0)} ms`);
  notes.push(
    `Terraform (A): ${version} at ${real}; ${tf.length} repetition(s); env ${Object.entries(TF_ENV)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')} on both sides`,
    `Terraform ratios per repetition: c=1 ${tf.map((r) => r[1].ratio.toFixed(2)).join(', ')}; c=${c4} ${tf.map((r) => r[c4].ratio.toFixed(2)).join(', ')}`,
    `Terraform processes per unit, first reconcile: ${fmtCounts(first.counts, TF_UNITS)} (plain terraform: init 1, apply 1 = 2)`,
    `Terraform processes, reconcile after ${unitName(CHANGED)}'s variable changed: executed ${changed.executed.join(', ') || 'none'}; ${unitName(CHANGED)}: ${fmtCounts(changed.counts)}; the ${TF_UNITS - 1} others: ${fmtCounts(changed.others)} in all`,
    `Terraform processes, no-op reconcile: ${fmtCounts(noop.counts)} in all (executed: ${noop.executed.join(', ') || 'none'})`,
    `Terraform processes per unit, verify: ${fmtCounts(verify.counts, TF_UNITS)} (exit ${verify.code}, ${verify.inSync} in-sync)`,
    `Terraform verify per repetition: exit ${codes.join(', ')}; verdicts ${tf.map((r) => verdictText(r.verify.verdicts)).join(' | ')}${
      tf.some((r) => r.verify.problem)
        ? `; ${tf
            .map((r) => r.verify.problem)
            .filter(Boolean)
            .join('; ')}`
        : ''
    }`,
  );
  for (const [label, tl] of [
    ['first reconcile', first.timeline],
    ['changed-unit reconcile', changed.timeline],
  ]) {
    if (!tl) continue;
    notes.push(
      `Terraform timeline of the ${label} at c=1 (shim run): wall ${ms(tl.wall)}, inside terraform ${ms(tl.inTool)} (per call median ${ms(tl.perCall.median)}), nyl start to first call ${ms(tl.lead)}, last call to exit ${ms(tl.tail)}` +
        (tl.within
          ? `, gap between a unit's calls median ${tl.within.median.toFixed(1)} ms (${tl.within.min.toFixed(1)}-${tl.within.max.toFixed(1)}, n ${tl.within.n})`
          : '') +
        (tl.between
          ? `, from one unit's last call to the next unit's first median ${tl.between.median.toFixed(1)} ms (${tl.between.min.toFixed(1)}-${tl.between.max.toFixed(1)})`
          : '') +
        `; median per call: ${Object.entries(tl.perSub)
          .map(([k, v]) => `${k} ${ms(v)}`)
          .join(', ')} (gaps and calls include the shim's sh and two date processes)`,
    );
  }
  const plainCalls = (sub) => median(tf.flatMap((r) => r[c1].plainCalls[sub]));
  notes.push(`Terraform plain, c=1 (timed runs): median per call init ${ms(plainCalls('init'))}, apply ${ms(plainCalls('apply'))}`);
  if (counted.failedCalls.length) notes.push(`Terraform calls that failed in the counting run: ${counted.failedCalls.join('; ')}`);
}

// ---------------------------------------------------------------- (B) OciImage

/** Can podman run the test image here? */
async function podmanReady() {
  const r = await exec(['podman', 'run', ...PODMAN_FLAGS, IMAGE, 'true'], { check: false }).catch(() => ({ code: -1 }));
  return r.code === 0;
}

async function ociOnce() {
  const p = await makeProject({ units: 0, label: 'drivers-oci' });
  const docs = Array.from({ length: OCI_UNITS }, (_, n) =>
    JSON.stringify({ apiVersion: 'nyl.io/v1', kind: 'OciImage', metadata: { name: `img${n}` }, spec: { image: IMAGE, command: ['true'] } }),
  );
  const env = JSON.stringify({
    apiVersion: 'nyl.io/v1',
    kind: 'Environment',
    metadata: { name: 'dev' },
    spec: { state: { repository: { repoURL: p.stateUrl } } },
  });
  writeFileSync(join(p.src, 'nyl.yaml'), `${[env, ...docs].join('\n---\n')}\n`);
  await git(p.src, ['commit', '-q', '-a', '-m', 'oci units']);
  await nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS]);
  const direct = await pool(OCI_UNITS, CONCURRENCY, () => exec(['podman', 'run', ...PODMAN_FLAGS, IMAGE, 'true']));
  const first = await nyl(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS]);
  return { direct, first: first.ms };
}

export async function run() {
  const metrics = [];
  const notes = [];
  const details = {};
  await terraformPart(metrics, notes, details);
  if (await podmanReady()) {
    const oci = await repeat(reps(3, 1), ociOnce);
    const ociOverhead = summary(oci.map((r) => (r.first - r.direct) / OCI_UNITS));
    metrics.push(
      { name: `OciImage: reconcile of ${OCI_UNITS} units`, value: summary(oci.map((r) => r.first)).median, unit: 'ms' },
      { name: `OciImage: ${OCI_UNITS} podman run, ${CONCURRENCY} at once`, value: summary(oci.map((r) => r.direct)).median, unit: 'ms' },
      { name: 'OciImage: Nyl overhead per unit (prepare included)', value: ociOverhead.median, unit: 'ms', spread: ociOverhead },
    );
  } else notes.push(`OciImage skipped: podman cannot run ${IMAGE} here (build it with the test support first)`);
  return { metrics, notes, details };
}
