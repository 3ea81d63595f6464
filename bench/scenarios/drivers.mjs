// 9. drivers: Nyl's own cost per unit of the Terraform and OciImage drivers, beyond the tools.
//   (A) Terraform: 16 independent Terraform units, each a module with a terraform_data resource
//       and an output, a local backend at its own absolute path, run by the Terraform stand-in
//       of the test support (first on PATH). Measured: the first `nyl reconcile` (every unit
//       runs init, plan -out, show -json, apply of the plan, output -json), and the baseline: the
//       same five commands per unit run directly from node, in a copy of the module, 4 units at
//       once (the engine's concurrency). Overhead per unit = (reconcile - baseline) / 16: the
//       scratch copy, the variables file, the process plumbing, the plan digest, the receipt,
//       and Nyl's fixed cost (start, lease, pushes) shared out; also as CPU time, which other load
//       on the machine disturbs less than wall time. Then the no-op reconcile.
//   (B) OciImage: 8 OciImage units of the offline busybox test image (`podman run ... true`),
//       beside 8 `podman run` of the same image with the driver's flags, 4 at once. Overhead per
//       unit = (reconcile - baseline) / 8: it includes the prepare phase (`podman image inspect`
//       pins the image). Skipped with a note when podman cannot run containers here.
import { cpSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AUTHOR_ARGS, ROOT, childrenCpuMs, exec, git, makeProject, nowMs, nyl, repeat, reps, summary } from '../lib.mjs';

export const id = 'drivers';
export const title = "Nyl's overhead per unit beyond the tool: Terraform (the stand-in) and OciImage (podman)";

const TF_UNITS = 16;
const OCI_UNITS = 8;
const CONCURRENCY = 4;
const STANDIN_BIN = join(ROOT, 'test/support/tf-standin/bin');
const PODMAN_FLAGS = ['--rm', '--pull=never', '--network=none', '--runtime', 'runc', '--ulimit', 'nofile=4096:4096', '--ulimit', 'nproc=4096:4096'];
const IMAGE = 'localhost/nyl-test-busybox:1';

const MODULE = {
  terraform: { backend: { local: {} } },
  variable: { name: { type: 'string' } },
  resource: { terraform_data: { d: { input: '${var.name}' } } },
  output: { greeting: { value: 'hello ${terraform_data.d.output}' } },
};

const toolEnv = (extra = {}) => ({ ...process.env, PATH: `${STANDIN_BIN}:${process.env.PATH}`, TF_IN_AUTOMATION: '1', ...extra });

/** A project of Terraform units, each with its own backend file under base/tfstate. */
async function terraformProject() {
  const p = await makeProject({ units: 0, label: 'drivers-tf' });
  mkdirSync(join(p.src, 'infra/app'), { recursive: true });
  writeFileSync(join(p.src, 'infra/app/main.tf.json'), JSON.stringify(MODULE));
  const docs = [];
  for (let n = 0; n < TF_UNITS; n++) {
    const spec = { module: 'infra/app', variables: { name: `u${n}` }, backendConfig: { path: join(p.base, 'tfstate', `u${n}.tfstate`) } };
    docs.push(JSON.stringify({ apiVersion: 'nyl.io/v1', kind: 'Terraform', metadata: { name: `tf${n}` }, spec }));
  }
  const env = JSON.stringify({ apiVersion: 'nyl.io/v1', kind: 'Environment', metadata: { name: 'dev' }, spec: { state: { repository: { repoURL: p.stateUrl } } } });
  writeFileSync(join(p.src, 'nyl.yaml'), `${[env, ...docs].join('\n---\n')}\n`);
  await git(p.src, ['add', '-A']);
  await git(p.src, ['commit', '-q', '-m', 'terraform units']);
  return p;
}

/** The five commands of one unit, run directly in a copy of the module: what the stand-in itself costs. */
async function directUnit(base, n) {
  const dir = join(base, 'direct', `u${n}`);
  cpSync(join(base, 'src/infra/app'), dir, { recursive: true });
  writeFileSync(join(dir, 'vars.tfvars.json'), JSON.stringify({ name: `u${n}` }));
  const env = toolEnv({ TF_DATA_DIR: join(dir, '.data') });
  const run = (args, ok = [0]) => exec(['terraform', ...args], { cwd: dir, env, check: false }).then((r) => {
    if (!ok.includes(r.code)) throw new Error(`terraform ${args.join(' ')} exited ${r.code}: ${r.stderr}`);
  });
  await run(['init', '-input=false', '-no-color', `-backend-config=path=${join(dir, 'state.tfstate')}`]);
  await run(['plan', '-input=false', '-no-color', '-out=plan', '-detailed-exitcode', '-var-file=vars.tfvars.json'], [0, 2]);
  await run(['show', '-json', 'plan']);
  await run(['apply', '-input=false', '-no-color', 'plan']);
  await run(['output', '-json']);
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

async function terraformOnce(i) {
  const p = await terraformProject();
  await nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS], { extraEnv: { PATH: toolEnv().PATH } });
  const cpuBefore = childrenCpuMs();
  const direct = await pool(TF_UNITS, CONCURRENCY, (n) => directUnit(p.base, `${i}-${n}`));
  const directCpu = childrenCpuMs() - cpuBefore;
  const first = await nyl(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS], { extraEnv: { PATH: toolEnv().PATH } });
  const executed = (first.stdout.match(/^tf\d+\s+Terraform\s+executed\b/gm) ?? []).length;
  if (executed !== TF_UNITS) throw new Error(`the reconcile executed ${executed} of ${TF_UNITS} Terraform units\n${first.stdout}\n${first.stderr.slice(-2000)}`);
  const noop = await nyl(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS], { extraEnv: { PATH: toolEnv().PATH } });
  return { direct, directCpu, first: first.ms, firstCpu: first.cpuMs, noop: noop.ms, pushes: first.stats?.pushes };
}

/** Can podman run the test image here? */
async function podmanReady() {
  const r = await exec(['podman', 'run', ...PODMAN_FLAGS, IMAGE, 'true'], { check: false }).catch(() => ({ code: -1 }));
  return r.code === 0;
}

async function ociOnce() {
  const p = await makeProject({ units: 0, label: 'drivers-oci' });
  const docs = Array.from({ length: OCI_UNITS }, (_, n) => JSON.stringify({ apiVersion: 'nyl.io/v1', kind: 'OciImage', metadata: { name: `img${n}` }, spec: { image: IMAGE, command: ['true'] } }));
  const env = JSON.stringify({ apiVersion: 'nyl.io/v1', kind: 'Environment', metadata: { name: 'dev' }, spec: { state: { repository: { repoURL: p.stateUrl } } } });
  writeFileSync(join(p.src, 'nyl.yaml'), `${[env, ...docs].join('\n---\n')}\n`);
  await git(p.src, ['commit', '-q', '-a', '-m', 'oci units']);
  await nyl(p, ['state', 'init', '-e', 'dev', ...AUTHOR_ARGS]);
  const direct = await pool(OCI_UNITS, CONCURRENCY, () => exec(['podman', 'run', ...PODMAN_FLAGS, IMAGE, 'true']));
  const first = await nyl(p, ['reconcile', '-e', 'dev', ...AUTHOR_ARGS]);
  return { direct, first: first.ms };
}

export async function run() {
  const tf = await repeat(reps(3, 1), terraformOnce);
  const tfDirect = summary(tf.map((r) => r.direct));
  const tfFirst = summary(tf.map((r) => r.first));
  const tfOverhead = summary(tf.map((r) => (r.first - r.direct) / TF_UNITS));
  const metrics = [
    { name: `Terraform: reconcile of ${TF_UNITS} units (stand-in)`, value: tfFirst.median, unit: 'ms', spread: tfFirst },
    { name: `Terraform: the same commands run directly, ${CONCURRENCY} at once`, value: tfDirect.median, unit: 'ms', spread: tfDirect },
    { name: 'Terraform: Nyl overhead per unit (wall)', value: tfOverhead.median, unit: 'ms', target: { op: '<', value: 30 }, spread: tfOverhead },
    { name: 'Terraform: Nyl overhead per unit (cpu)', value: summary(tf.map((r) => (r.firstCpu - r.directCpu) / TF_UNITS)).median, unit: 'ms' },
    { name: `Terraform: no-op reconcile of ${TF_UNITS} units`, value: summary(tf.map((r) => r.noop)).median, unit: 'ms' },
  ];
  const notes = [`${tf.length} fixture(s); pushes of the first reconcile: ${tf.map((r) => r.pushes).join(', ')}`];
  if (await podmanReady()) {
    const oci = await repeat(reps(3, 1), ociOnce);
    const ociOverhead = summary(oci.map((r) => (r.first - r.direct) / OCI_UNITS));
    metrics.push(
      { name: `OciImage: reconcile of ${OCI_UNITS} units`, value: summary(oci.map((r) => r.first)).median, unit: 'ms' },
      { name: `OciImage: ${OCI_UNITS} podman run, ${CONCURRENCY} at once`, value: summary(oci.map((r) => r.direct)).median, unit: 'ms' },
      { name: 'OciImage: Nyl overhead per unit (prepare included)', value: ociOverhead.median, unit: 'ms', spread: ociOverhead },
    );
  } else notes.push(`OciImage skipped: podman cannot run ${IMAGE} here (build it with the test support first)`);
  return { metrics, notes };
}
