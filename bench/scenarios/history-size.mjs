// 13. history-size: how much a reviewer reads (issue 16). The example project examples/shop goes
// through the same 20 operations (state init, reconciles after source changes, a hold and its
// resume, reapplies, verify, a failure and its fix); measured: the size of
// `git log -p` of the desired and the observed branch afterwards, in lines and bytes.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AUTHOR_ARGS, bareRepo, exec, fileUrl, git, gitEnv, nyl, tempDir } from '../lib.mjs';

export const id = 'history-size';
export const title = 'git log -p of both state branches after 20 operations on examples/shop';

const SHOP = join(fileURLToPath(new URL('../../examples/shop', import.meta.url)));

async function shop() {
  const base = tempDir('shop');
  const src = join(base, 'src');
  const statePath = await bareRepo(join(base, 'state.git'));
  await exec(['cp', '-R', SHOP, src]);
  const yaml = readFileSync(join(src, 'nyl.yaml'), 'utf8').replace('STATE_REPO_URL', fileUrl(statePath));
  writeFileSync(join(src, 'nyl.yaml'), yaml);
  await git(src, ['init', '-q', '-b', 'main']);
  await git(src, ['config', 'user.name', 'Bench']);
  await git(src, ['config', 'user.email', 'bench@example.com']);
  await git(src, ['add', '-A']);
  await git(src, ['commit', '-q', '-m', 'shop']);
  return { base, src, statePath, cache: join(base, 'cache') };
}

/** Commits a change of nyl.yaml: `from` replaced by `to`. */
async function change(p, from, to) {
  const file = join(p.src, 'nyl.yaml');
  const text = readFileSync(file, 'utf8');
  if (!text.includes(from)) throw new Error(`nyl.yaml has no ${from}`);
  writeFileSync(file, text.replace(from, to));
  await git(p.src, ['commit', '-q', '-am', `${from} -> ${to}`]);
}

/** The 20 operations, each a nyl command (some after a source change); exit codes 0-3 accepted. */
async function twentyOperations(p) {
  const run = (args) => nyl(p, [...args, ...AUTHOR_ARGS], { check: false });
  const steps = [
    () => run(['state', 'init', '-e', 'dev']),
    () => run(['reconcile', '-e', 'dev']),
    async () => (await change(p, 'replicas: 1', 'replicas: 2'), run(['reconcile', '-e', 'dev'])),
    () => run(['hold', '-e', 'dev', '--unit', 'database', '--reason', 'incident 42']),
    async () => (await change(p, 'region: local-1', 'region: local-2'), run(['reconcile', '-e', 'dev'])),
    () => run(['resume', '-e', 'dev', '--unit', 'database', '--reason', 'incident 42 resolved']),
    () => run(['reconcile', '-e', 'dev']),
    () => run(['reconcile', '-e', 'dev', '--unit', 'migrate', '--reapply', '--reason', 'replay migrations']),
    () => run(['verify', '-e', 'dev']),
    () => run(['reconcile', '-e', 'dev', '--unit', 'smoke-test', '--reapply', '--reason', 'flaky']),
    () => run(['reconcile', '-e', 'dev']),
    // migrate fails (a migration script error), then is fixed and retried.
    async () => (await change(p, 'echo "migrating $DATABASE_URL"', 'echo "migrating $DATABASE_URL"; exit 1'), run(['reconcile', '-e', 'dev'])),
    async () => (await change(p, 'echo "migrating $DATABASE_URL"; exit 1', 'echo "migrating $DATABASE_URL (v2)"'), run(['reconcile', '-e', 'dev'])),
    async () => (await change(p, 'replicas: 2', 'replicas: 3'), run(['reconcile', '-e', 'dev'])),
    async () => (await change(p, 'duration: 2m', 'duration: 3m'), run(['reconcile', '-e', 'dev'])),
    async () => (await change(p, 'replicas: 3', 'replicas: 4'), run(['reconcile', '-e', 'dev'])),
    () => run(['reconcile', '-e', 'dev', '--unit', 'cache', '--reapply', '--reason', 'warm the cache']),
    async () => (await change(p, 'region: local-2', 'region: local-3'), run(['reconcile', '-e', 'dev'])),
    () => run(['verify', '-e', 'dev']),
    async () => (await change(p, 'replicas: 4', 'replicas: 5'), run(['reconcile', '-e', 'dev'])),
  ];
  const codes = [];
  for (const step of steps) {
    const r = await step();
    if (r.code > 3 || r.code === 1) throw new Error(`operation ${codes.length + 1} exited ${r.code}: ${r.stderr.slice(-2000)}`);
    codes.push(r.code);
  }
  return codes;
}

async function logSize(p, branch) {
  const r = await exec(['git', '--git-dir', p.statePath, 'log', '-p', branch], { env: gitEnv() });
  return {
    lines: r.stdout.split('\n').length,
    bytes: Buffer.byteLength(r.stdout),
    commits: Number((await exec(['git', '--git-dir', p.statePath, 'rev-list', '--count', branch], { env: gitEnv() })).stdout.trim()),
  };
}

export async function run() {
  const p = await shop();
  const codes = await twentyOperations(p);
  const desired = await logSize(p, 'refs/heads/nyl/dev/desired');
  const observed = await logSize(p, 'refs/heads/nyl/dev/observed');
  return {
    metrics: [
      { name: 'git log -p desired: lines', value: desired.lines, unit: 'count' },
      { name: 'git log -p desired: KB', value: Math.round(desired.bytes / 1024), unit: 'count' },
      { name: 'git log -p observed: lines', value: observed.lines, unit: 'count' },
      { name: 'git log -p observed: KB', value: Math.round(observed.bytes / 1024), unit: 'count' },
      { name: 'both branches: lines', value: desired.lines + observed.lines, unit: 'count' },
    ],
    notes: [`exit codes of the 20 operations: ${codes.join(' ')}; commits: desired ${desired.commits}, observed ${observed.commits}`],
    details: { desired, observed, codes },
  };
}
