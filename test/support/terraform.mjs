// The real `terraform` for tests: where it is, the environment every test gives it, OpenTofu's
// binary name (a shim that runs terraform, since `tofu` cannot be installed here), a module whose
// apply runs long enough to be interrupted, and a Terraform `http` backend served from memory, so
// that a backend other than `local` (read with `state pull`) is tested without a network.
//
// Tests that need terraform skip with SKIP_NO_TERRAFORM when it is missing; .ci/run prints
// `terraform version`, so a CI log says which it was.

import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.dirname(fileURLToPath(import.meta.url));

/** The directory of the `tofu` shim: put it first on PATH, or name its file in spec.binary. */
export const TOFU_SHIM_DIR = path.join(here, 'tofu-shim');
export const TOFU_SHIM = path.join(TOFU_SHIM_DIR, 'tofu');

/** The real terraform on PATH, or undefined. */
export const TERRAFORM = (() => {
  const found = spawnSync('sh', ['-c', 'command -v terraform'], { encoding: 'utf8' });
  return found.status === 0 ? found.stdout.trim() : undefined;
})();

/** The skip option of a test that needs the real terraform. */
export const SKIP_NO_TERRAFORM = TERRAFORM ? false : 'no terraform on PATH (CI prints `terraform version`)';

/**
 * One plugin cache for every test process (only the built-in provider is used offline, but a
 * module that names another finds the same cache), and no CLI configuration: this machine's
 * environment points TF_CLI_CONFIG_FILE at a file that does not exist, which makes terraform warn.
 */
const PLUGIN_CACHE = path.join(os.tmpdir(), 'nyl-test-terraform-plugins');
fs.mkdirSync(PLUGIN_CACHE, { recursive: true });

export function terraformEnv(extra = {}) {
  return {
    TF_CLI_CONFIG_FILE: '/dev/null',
    TF_PLUGIN_CACHE_DIR: PLUGIN_CACHE,
    CHECKPOINT_DISABLE: '1',
    ...(TERRAFORM ? { NYL_TEST_TERRAFORM: TERRAFORM } : {}),
    ...extra,
  };
}

/** Runs terraform directly (for a test's own setup: holding a lock, editing state). */
export function terraform(cwd, args, env = {}) {
  return spawnSync(TERRAFORM, args, { cwd, env: { ...process.env, ...terraformEnv(), ...env }, encoding: 'utf8' });
}

/** A resource whose creation runs `command` (a local-exec provisioner): an apply that takes as long as it does. */
export function provisioned(command) {
  return { input: 'slow', provisioner: [{ 'local-exec': { command } }] };
}

/**
 * Terraform's `http` backend served from memory on 127.0.0.1: GET returns the state (404 when
 * there is none), POST stores it, LOCK/UNLOCK hold the lock. Resolves { address, states, close }.
 */
export async function httpStateServer() {
  const states = new Map();
  const locks = new Map();
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (c) => (body += c));
    req.on('end', () => {
      const key = new URL(req.url, 'http://x').pathname;
      if (req.method === 'GET') return states.has(key) ? res.end(states.get(key)) : ((res.statusCode = 404), res.end());
      if (req.method === 'POST') return (states.set(key, body), res.end());
      if (req.method === 'DELETE') return (states.delete(key), res.end());
      if (req.method === 'LOCK') {
        if (locks.has(key)) return ((res.statusCode = 423), res.end(locks.get(key)));
        return (locks.set(key, body), res.end());
      }
      if (req.method === 'UNLOCK') return (locks.delete(key), res.end());
      res.statusCode = 405;
      res.end();
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  return { address: (name) => `http://127.0.0.1:${port}/${name}`, states, close: () => new Promise((r) => server.close(r)) };
}
