// Acceptance test of the security issue "a known secret and a known key never leak".
//
// One scenario plants a known secret (`s3cr3t-` and random hex) and a known sealing key (32 random
// bytes, as NYL_SECRETS_KEY) and runs units of every driver with them, through the built CLI:
//
// - vault, a Command whose sensitive output token holds the secret (read from a file outside every
//   searched place); later it runs again (its input file changed), prints its own secret and fails;
// - dump, a Command that gets the token through env, echoes it and its whole environment (`env`)
//   and fails: what it printed lands in its failure record; later it is retried, in text output;
// - tfsink, a Terraform unit that gets the token as a variable (TF_VAR_token) and echoes it (a
//   local-exec provisioner, and a plain output holding it); tfvault, a Terraform unit with a
//   `sensitive = true` output holding the secret, and tfdump, a Command consumer of it (both
//   modules use terraform_data only, with a local backend at an absolute path outside the searched
//   places: the state file holds the secret by design);
// - oci, an OciImage consumer that gets the token through env and prints `env`, and fails;
// - sleeper, a Command that sleeps while it holds the token in its env; Nyl is killed (SIGKILL)
//   mid-run, the lease broken, and the next run imports the dead run.
//
// Meanwhile every process's command line is polled (every 20 ms, test/support/leak-search.mjs).
// Afterwards the searches cover every object of the state repository (and of the project's clone,
// and of the cache repositories under NYL_CACHE_DIR), every line the CLI printed (every command's
// stdout and stderr: reconciles, state init, lease break, and status, show, log and outputs in
// text and JSON), every file under --unit-log-dir, under NYL_CACHE_DIR and under the CLI's own
// TMPDIR. The needles: the secret and the key, each plain and in base64 (the key also as its raw
// bytes). The test asserts no hit, listing every hit where it is. The web view is out of scope.
//
// A second test: the digests state records of sensitive values (sensitiveOutputs of receipts and
// checkpoints, reads.secrets of desired documents) must not be what anyone can compute from a
// guessed value without the key: `sha256:` and the SHA-256 of the value's canonical JSON (as
// src/project/execution-key.ts makes it), nor the SHA-256 of the raw string.
//
// Without terraform, or without podman and the test image, those units are left out of the
// scenario, and the tests that check they ran are skipped, saying why.

import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { canonicalJson } from '../../dist/project/execution-key.js';
import { nyl, nylAsync, waitForFile } from '../support/cli.mjs';
import { cleanupAll, git, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { commitFiles, stateRepo } from '../support/reconcile-helpers.mjs';
import { TEST_IMAGE, podmanAvailable } from '../support/oci-images.mjs';
import { SKIP_NO_TERRAFORM, terraformEnv } from '../support/terraform.mjs';
import { groupEnds } from '../support/proc.mjs';
import {
  formatHits,
  gitDirsUnder,
  gitObjects,
  objectPlacer,
  makeNeedles,
  searchGitRepo,
  searchText,
  searchTree,
  startCmdlinePoller,
} from '../support/leak-search.mjs';

after(cleanupAll);

const SECRET = `s3cr3t-${randomBytes(16).toString('hex')}`;
const KEY_BYTES = randomBytes(32);
const KEY = KEY_BYTES.toString('base64');
const NEEDLES = makeNeedles([
  { name: 'secret', text: SECRET },
  { name: 'key', text: KEY, raw: KEY_BYTES },
]);

const WITH_TERRAFORM = !SKIP_NO_TERRAFORM;
const podman = await podmanAvailable();
const WITH_OCI = podman.ok;

const doc = (kind, name, spec) => ({ apiVersion: 'nyl.io/v1', kind, metadata: { name }, spec });
const yamlOf = (docs) => `${docs.map((d) => JSON.stringify(d)).join('\n---\n')}\n`;

/** A module that gets the token as a variable (not declared sensitive) and echoes it: a local-exec provisioner, and a plain output. */
const TFSINK = {
  terraform: { backend: { local: {} } },
  variable: { token: { type: 'string' } },
  resource: {
    terraform_data: {
      sink: { input: 'sink', provisioner: [{ 'local-exec': { command: 'echo "tfsink: token=$TOKEN"', environment: { TOKEN: '${var.token}' } } }] },
    },
  },
  output: { echo: { value: '${var.token}' } },
};

/** A module whose `sensitive = true` output holds the secret (read from a file whose path is a plain variable). */
const TFVAULT = {
  terraform: { backend: { local: {} } },
  variable: { secret_file: { type: 'string' } },
  resource: { terraform_data: { vault: { input: 'vault' } } },
  output: { token: { value: '${trimspace(file(var.secret_file))}', sensitive: true } },
};

/** The units of the scenario; `sleeper` only once the killed run comes. */
function unitsOf(w, { sleeper = false } = {}) {
  const token = '${{ units.vault.outputs.token }}';
  const units = [
    doc('Command', 'vault', {
      inputs: ['vault.round'],
      script: [
        `printf '{"token": {"value": "%s", "sensitive": true}}' "$(cat '${w.secretFile}')" > "$NYL_OUTPUTS"`,
        `if [ "$(cat vault.round)" != 1 ]; then echo "vault: my token is $(cat '${w.secretFile}')"; exit 1; fi`,
      ].join('\n'),
    }),
    doc('Command', 'dump', { env: { TOKEN: token }, script: 'echo "dump: token=$TOKEN"\nenv\nexit 1' }),
  ];
  if (WITH_TERRAFORM) {
    units.push(
      doc('Terraform', 'tfsink', { module: 'infra/tfsink', variables: { token }, backendConfig: { path: path.join(w.fixtures, 'tfsink.tfstate') } }),
      doc('Terraform', 'tfvault', {
        module: 'infra/tfvault',
        variables: { secret_file: w.secretFile },
        backendConfig: { path: path.join(w.fixtures, 'tfvault.tfstate') },
      }),
      doc('Command', 'tfdump', {
        env: { TOKEN: '${{ units.tfvault.outputs.token }}' },
        script: 'echo "tfdump: token=$TOKEN"\nprintf \'{"url": "https://user:%s@example.com"}\' "$TOKEN" > "$NYL_OUTPUTS"',
      }),
    );
  }
  if (WITH_OCI) {
    units.push(doc('OciImage', 'oci', { image: TEST_IMAGE, env: { TOKEN: token }, command: ['sh', '-c', 'echo "oci: token=$TOKEN"; env; exit 1'] }));
  }
  if (sleeper) {
    units.push(
      doc('Command', 'sleeper', {
        env: { TOKEN: token },
        script: `echo $$ > '${w.sleeperPid}.tmp'\nmv '${w.sleeperPid}.tmp' '${w.sleeperPid}'\necho "sleeper: holding $TOKEN"\nsleep 30`,
      }),
    );
  }
  return units;
}

function nylYaml(w, opts) {
  return yamlOf([doc('Environment', 'dev', { state: { repository: { repoURL: w.url } } }), ...unitsOf(w, opts)]);
}

const shown = (r) => `exit ${r.code}${r.signal ? ` (${r.signal})` : ''}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`;

/** Results by unit of a JSON report. */
const resultsOf = (r) => Object.fromEntries(Object.entries(r.json?.units ?? {}).map(([n, u]) => [n, u.result]));

/**
 * Runs the whole scenario once (both tests share it): every command the CLI ran, with what it
 * printed; the places to search; the poller's findings.
 */
let scenario;
function theScenario() {
  scenario ??= runScenario();
  return scenario;
}

async function runScenario() {
  const began = Date.now();
  const w = {
    fixtures: tempDir('nyl-leak-fixtures-'),
    tmp: tempDir('nyl-leak-tmpdir-'),
    cache: tempDir('nyl-leak-cache-'),
    logs: tempDir('nyl-leak-unit-logs-'),
    ...stateRepo(),
    printed: [],
    results: {},
  };
  w.secretFile = path.join(w.fixtures, 'secret');
  w.sleeperPid = path.join(w.fixtures, 'sleeper.pid');
  fs.writeFileSync(w.secretFile, `${SECRET}\n`, { mode: 0o600 });
  const files = { 'nyl.yaml': nylYaml(w), 'vault.round': '1\n' };
  if (WITH_TERRAFORM)
    Object.assign(files, { 'infra/tfsink/main.tf.json': JSON.stringify(TFSINK, null, 2), 'infra/tfvault/main.tf.json': JSON.stringify(TFVAULT, null, 2) });
  w.project = makeProject(files);

  const env = terraformEnv({ NYL_SECRETS_KEY: KEY, TMPDIR: w.tmp, NYL_CACHE_DIR: w.cache });
  const keep = (args, r) => {
    w.printed.push({ label: `nyl ${args.join(' ')} (stdout)`, text: r.stdout }, { label: `nyl ${args.join(' ')} (stderr)`, text: r.stderr });
    return r;
  };
  const cli = (args, codes = [0]) => {
    const r = keep(args, nyl(w.project, args, { env }));
    assert.ok(codes.includes(r.code), `nyl ${args.join(' ')}: expected exit ${codes.join('|')}, got ${shown(r)}`);
    return r;
  };
  const logDir = ['--unit-log-dir', w.logs];

  const poller = startCmdlinePoller(NEEDLES, { intervalMs: 20 });
  let sleeperGroup;
  let killed;
  try {
    cli(['state', 'init', '-e', 'dev']);

    // Every unit once: vault seals its token; its consumers get it; dump and oci fail.
    const first = cli(['reconcile', '-e', 'dev', '-o', 'json', ...logDir], [3]);
    const expected = { vault: 'executed', dump: 'failed' };
    if (WITH_TERRAFORM) Object.assign(expected, { tfsink: 'executed', tfvault: 'executed', tfdump: 'executed' });
    if (WITH_OCI) expected.oci = 'failed';
    assert.deepEqual(resultsOf(first), expected, shown(first));
    w.results.first = first;

    // A run killed (SIGKILL) while sleeper holds the token; the next run imports it.
    commitFiles(w.project, { 'nyl.yaml': nylYaml(w, { sleeper: true }) }, 'add sleeper');
    const killedArgs = ['reconcile', '-e', 'dev', '--unit', 'sleeper', ...logDir];
    killed = nylAsync(w.project, killedArgs, { env });
    const started = await Promise.race([
      waitForFile(w.sleeperPid, 30_000).then(
        () => 'started',
        () => 'not started within 30 s',
      ),
      killed.done.then(
        () => 'the run ended first',
        () => 'the run ended first',
      ),
    ]);
    assert.equal(started, 'started', 'sleeper runs');
    sleeperGroup = Number(fs.readFileSync(w.sleeperPid, 'utf8'));
    await new Promise((r) => setTimeout(r, 200));
    killed.child.kill('SIGKILL');
    const dead = keep(killedArgs, await killed.done);
    assert.equal(dead.signal, 'SIGKILL', shown(dead));
    assert.ok(await groupEnds(sleeperGroup, 10_000), `sleeper's process group ${sleeperGroup} still runs after nyl died`);
    sleeperGroup = undefined;
    cli(['lease', 'break', '-e', 'dev', '--reason', 'the runner was killed']);
    const takeover = cli(['reconcile', '-e', 'dev', '--unit', 'sleeper', '-o', 'json', ...logDir], [4]);
    assert.equal(takeover.json.units.sleeper.result, 'recovered', shown(takeover));
    w.results.takeover = takeover;

    // dump retried, in text: its failure in the table and the report's lines.
    const retried = cli(['reconcile', '-e', 'dev', '--unit', 'dump', ...logDir], [3]);
    assert.match(retried.stdout, /^dump +Command +failed/m, shown(retried));

    // vault runs again (its input changed), prints its own token and fails.
    commitFiles(w.project, { 'vault.round': '2\n' }, 'vault: round 2');
    const again = cli(['reconcile', '-e', 'dev', '--unit', 'vault', '-o', 'json', ...logDir], [3]);
    assert.equal(again.json.units.vault.result, 'failed', shown(again));
    w.results.again = again;

    // Everything an operator reads, in text and in JSON.
    const units = unitsOf(w, { sleeper: true }).map((u) => u.metadata.name);
    for (const output of [[], ['-o', 'json']]) {
      cli(['status', '-e', 'dev', ...output], [0, 2, 3, 4]);
      for (const unit of units) cli(['show', '-e', 'dev', '--unit', unit, ...output]);
      cli(['log', '-e', 'dev', '-n', '0', ...output]);
      cli(['outputs', '-e', 'dev', ...output]);
      cli(['outputs', '-e', 'dev', '--unit', 'vault', ...output]);
    }
  } finally {
    if (killed && killed.child.exitCode === null && killed.child.signalCode === null) {
      killed.child.kill('SIGKILL');
      await killed.done.catch(() => {});
    }
    if (sleeperGroup) {
      try {
        process.kill(-sleeperGroup, 'SIGKILL');
      } catch {
        /* gone */
      }
    }
    w.polled = await poller.stop();
  }
  w.runMs = Date.now() - began;
  return w;
}

/** Every hit of the needles in the places the scenario left. */
function searchEverything(w) {
  const hits = [...w.polled.hits];
  for (const { label, text } of w.printed) hits.push(...searchText(label, text, NEEDLES));
  const repos = [
    [w.bare, 'state repository'],
    [w.project, "project's clone"],
    ...gitDirsUnder(w.cache).map((r) => [r, `cache repository ${r}`]),
    ...gitDirsUnder(w.tmp).map((r) => [r, `repository in TMPDIR ${r}`]),
  ];
  let objects = 0;
  for (const [repo, label] of repos) {
    const found = searchGitRepo(repo, NEEDLES, { label });
    hits.push(...found.hits);
    objects += found.objects;
  }
  const trees = { 'unit log': w.logs, 'NYL_CACHE_DIR file': w.cache, 'TMPDIR file': w.tmp };
  const skipped = [];
  const searched = [`${objects} Git objects of ${repos.length} repositories`];
  for (const [where, dir] of Object.entries(trees)) {
    const found = searchTree(dir, NEEDLES, { where });
    hits.push(...found.hits);
    skipped.push(...found.skipped);
    searched.push(`${found.files} ${where}(s)`);
  }
  return { hits, skipped, searched };
}

test('a known secret and a known key never leak: no process command line, state object, printed line, unit log, cache or TMPDIR file holds them, plain or in base64', async (t) => {
  const w = await theScenario();
  const { hits, skipped, searched } = searchEverything(w);
  t.diagnostic(
    `scenario ${w.runMs} ms; ${w.polled.scans} scans of /proc (${w.polled.processes} processes seen); the output of ${w.printed.length / 2} commands, ${searched.join(', ')} searched`,
  );
  if (!WITH_TERRAFORM) t.diagnostic(`Terraform units left out: ${SKIP_NO_TERRAFORM}`);
  if (!WITH_OCI) t.diagnostic(`OciImage unit left out: ${podman.reason}`);
  if (skipped.length > 0) t.diagnostic(`not searched (unreadable): ${skipped.join(', ')}`);
  assert.ok(fs.readdirSync(path.join(w.logs, 'dev')).length > 0, 'the unit logs were written');
  assert.equal(hits.length, 0, formatHits(hits));
});

test('the scenario ran its Terraform units: tfsink got the token as TF_VAR_token, tfvault recorded a sensitive output, tfdump consumed it', {
  skip: SKIP_NO_TERRAFORM,
}, async () => {
  const w = await theScenario();
  const observed = (unit) => parseYaml(git(w.bare, 'show', `refs/heads/nyl/dev/observed:units/${unit}.yaml`));
  assert.deepEqual(Object.keys(observed('tfvault').receipt.sensitiveOutputs ?? {}), ['token']);
  assert.deepEqual(
    Object.keys(observed('tfsink').receipt.sensitiveOutputs ?? {}),
    ['echo'],
    'a plain output holding the token it was given is recorded sensitive',
  );
  assert.deepEqual(Object.keys(observed('tfdump').receipt.sensitiveOutputs ?? {}), ['url']);
  assert.match(w.results.first.stderr, /\[dev\/tfsink\].*tfsink: token=/, 'the provisioner echoed the token');
});

test('the scenario ran its OciImage unit: the container printed its env and failed', { skip: WITH_OCI ? false : podman.reason }, async () => {
  const w = await theScenario();
  assert.match(w.results.first.stderr, /\[dev\/oci\] oci: token=/);
  assert.match(w.results.first.json.units.oci.detail, /container exited with code 1/);
});

/**
 * Every digest of a sensitive value that state records, in every version of every document (the
 * branches' history, and the checkpoints of run refs since deleted): [{digest, where}]. A digest
 * is any 64-hex-digit text in a record of sensitiveOutputs (receipts, checkpoints) or of
 * reads.secrets (desired documents), whatever its field is called (sha256 today).
 */
function recordedDigests(repo) {
  const out = [];
  const objects = gitObjects(repo);
  const place = objectPlacer(repo, objects);
  const digestsIn = (record, pointer, where) => {
    if (record === null || typeof record !== 'object') return;
    for (const [k, v] of Object.entries(record)) {
      if (typeof v === 'string' && /[0-9a-f]{64}/.test(v)) out.push({ digest: v, where: `${pointer}/${k} of ${where}` });
      else if (typeof v === 'object') digestsIn(v, `${pointer}/${k}`, where);
    }
  };
  for (const { oid, type, body } of objects) {
    if (type !== 'blob') continue;
    let parsed;
    try {
      parsed = parseYaml(body.toString('utf8'));
    } catch {
      continue;
    }
    const walk = (node, pointer) => {
      if (node === null || typeof node !== 'object') return;
      if (!Array.isArray(node)) {
        if (node.sensitiveOutputs && typeof node.sensitiveOutputs === 'object') {
          for (const [name, rec] of Object.entries(node.sensitiveOutputs)) digestsIn(rec, `${pointer}/sensitiveOutputs/${name}`, place(oid, type));
        }
        if (Array.isArray(node.reads?.secrets)) {
          for (const [i, rec] of node.reads.secrets.entries()) digestsIn(rec, `${pointer}/reads/secrets/${i} (${rec?.unit}.${rec?.output})`, place(oid, type));
        }
      }
      for (const [k, v] of Object.entries(node)) walk(v, `${pointer}/${k}`);
    };
    walk(parsed, '');
  }
  return out;
}

test('a digest in state cannot be reproduced without the key: no recorded digest is the unkeyed sha256 of the secret (canonical JSON or raw)', async () => {
  const w = await theScenario();
  const digests = recordedDigests(w.bare);
  // The receipt of vault (and, with terraform, of tfvault, tfsink and tfdump) and the reads of every consumer.
  assert.ok(
    digests.some((d) => d.where.includes('/sensitiveOutputs/token')),
    `a receipt records vault's token: ${JSON.stringify(digests)}`,
  );
  assert.ok(
    digests.some((d) => d.where.includes('/reads/secrets/')),
    `a desired document records a consumer's read: ${JSON.stringify(digests)}`,
  );
  // The values state holds digests of, as anyone who guesses them could hash them.
  const values = [SECRET];
  if (WITH_TERRAFORM) values.push(`https://user:${SECRET}@example.com`);
  const hex = (text) => createHash('sha256').update(text, 'utf8').digest('hex');
  const guesses = new Map();
  for (const v of values) {
    guesses.set(hex(canonicalJson(v)), `sha256 of the canonical JSON of ${v === SECRET ? 'the secret' : 'the URL holding the secret'}`);
    guesses.set(hex(v), `sha256 of the raw string of ${v === SECRET ? 'the secret' : 'the URL holding the secret'}`);
  }
  const hexOf = (digest) => /[0-9a-f]{64}/.exec(digest)[0];
  const reproduced = digests.filter((d) => guesses.has(hexOf(d.digest))).map((d) => `  ${d.digest} = ${guesses.get(hexOf(d.digest))}, at ${d.where}`);
  assert.equal(
    reproduced.length,
    0,
    `${reproduced.length} of ${digests.length} recorded digest(s) are unkeyed hashes of a guessable value:\n${reproduced.join('\n')}`,
  );
});
