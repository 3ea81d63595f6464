// The real `terraform` outlives Nyl's death long enough to save its state (issue 29, item 5).
// Nyl is SIGKILLed while `terraform apply` creates a resource (a `local-exec` provisioner that
// sleeps): its tool gets SIGTERM, interrupts the provisioner, and writes the resource (tainted)
// into its state before it exits. Before, the watchdog SIGKILLed it at once, and with a SIGTERM
// alone it died writing to Nyl's closed output pipe: either way the tfstate lost the resource, and
// the next run would have created it a second time.
// Real processes: the built CLI, terraform on PATH (skipped without it), a local backend at an
// absolute path, a bare state repository over file://.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { cleanupAll, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { nyl, nylAsync, waitForFile } from '../support/cli.mjs';
import { stateRepo } from '../support/reconcile-helpers.mjs';
import { isRunning } from '../support/proc.mjs';

after(cleanupAll);

const terraform = spawnSync('terraform', ['version'], { encoding: 'utf8' });
const SKIP = terraform.status === 0 ? false : 'terraform is not on PATH: the real tool is what this test is about';

/** A resource whose creation takes 5 s: it touches $NYL_TEST_STARTED first, so the test knows the apply runs. */
const MODULE = `terraform {
  backend "local" {}
}

resource "terraform_data" "slow" {
  provisioner "local-exec" {
    command = "touch \\"$NYL_TEST_STARTED\\" && sleep 5"
  }
}
`;

const doc = (kind, name, spec) => JSON.stringify({ apiVersion: 'nyl.io/v1', kind, metadata: { name }, spec });

/** The local backend's lock file of a state file: `.NAME.lock.info` beside it. */
const lockFile = (tfstate) => path.join(path.dirname(tfstate), `.${path.basename(tfstate)}.lock.info`);

/** The running processes whose environment holds NAME=VALUE (Linux /proc): this test's terraform and what it started. */
function processesWith(name, value) {
  const wanted = `${name}=${value}`;
  return fs
    .readdirSync('/proc')
    .filter((e) => /^\d+$/.test(e))
    .map(Number)
    .filter((pid) => {
      try {
        return isRunning(pid) && fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0').includes(wanted);
      } catch {
        return false;
      }
    });
}

async function until(what, predicate, timeoutMs) {
  for (const end = Date.now() + timeoutMs; !predicate(); await new Promise((r) => setTimeout(r, 50))) {
    assert.ok(Date.now() < end, `timed out waiting until ${what}`);
  }
}

test('nyl SIGKILLed during terraform apply: terraform gets SIGTERM and saves the resource it was creating in its state', {
  skip: SKIP,
  timeout: 120_000,
}, async () => {
  const dir = tempDir('nyl-tf-death-');
  const tfstate = path.join(dir, 'net.tfstate');
  const started = path.join(dir, 'started');
  const state = stateRepo();
  const yaml = [
    doc('Environment', 'dev', { state: { repository: { repoURL: state.url } } }),
    doc('Terraform', 'net', { module: 'infra/net', backendConfig: { path: tfstate }, terminationGracePeriod: '20s' }),
  ].join('\n---\n');
  const project = makeProject({ 'nyl.yaml': `${yaml}\n`, 'infra/net/main.tf': MODULE });
  // This machine's environment may name a CLI configuration that does not exist.
  const env = { TF_CLI_CONFIG_FILE: '/dev/null', NYL_TEST_STARTED: started };
  const init = nyl(project, ['state', 'init', '-e', 'dev'], { env });
  assert.equal(init.code, 0, init.stderr);

  const run = nylAsync(project, ['reconcile', '-e', 'dev'], { env });
  await Promise.race([
    waitForFile(started, 60_000),
    run.done.then((r) => assert.fail(`reconcile ended before the apply ran: exit ${r.code}\n${r.stdout}\n${r.stderr}`)),
  ]);
  const tools = processesWith('NYL_TEST_STARTED', started);
  assert.ok(tools.length > 0, 'terraform applies');
  run.child.kill('SIGKILL');
  const killed = await run.done;
  assert.equal(killed.signal, 'SIGKILL');

  // Terraform stops the provisioner, saves its state and exits well within its 20 s grace.
  await until(`terraform and its children (${tools.join(', ')}) exited`, () => processesWith('NYL_TEST_STARTED', started).length === 0, 25_000);
  // An empty file is what terraform leaves when it is killed before it saved anything.
  const text = fs.existsSync(tfstate) ? fs.readFileSync(tfstate, 'utf8') : '';
  const saved = text === '' ? {} : JSON.parse(text);
  const resources = (saved.resources ?? []).map((r) => `${r.type}.${r.name}`);
  assert.deepEqual(resources, ['terraform_data.slow'], `the tfstate lists the resource terraform was creating: ${JSON.stringify(saved)}`);
  assert.equal(fs.existsSync(lockFile(tfstate)), false, 'terraform released its state lock');
});
