#!/usr/bin/env node
// Test entry point: node test/run.mjs [subdir...] [--node-test-option...]
//
// Finds every *.test.mjs under test/ (or only under the given subdirectories of test/, e.g.
// `unit`), the slowest first and then by path (see SLOW_FIRST), keeps those whose path contains
// $NYL_TEST_FILTER when it is set, and runs them with `node --test --test-concurrency=3`
// ($NYL_TEST_CONCURRENCY files at once if set), with TMPDIR on /dev/shm when the caller set none and it has room (see testTmpdir). Three files
// at once on a 2-core machine: many end-to-end tests spend seconds waiting (for a lease to
// expire, a remote to time out), and a third file keeps the cores busy meanwhile. Why this
// script: Node 20's --test does not expand glob patterns. Arguments starting with "--" are passed
// on to node (e.g. --test-reporter=spec, --test-name-pattern=lease). Exits with node's exit code.

import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const testRoot = path.dirname(fileURLToPath(import.meta.url));
const repoRoot = path.dirname(testRoot);

function findTests(dir) {
  const found = [];
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name.startsWith('.')) continue;
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) found.push(...findTests(full));
    else if (entry.isFile() && entry.name.endsWith('.test.mjs')) found.push(full);
  }
  return found;
}

const args = process.argv.slice(2);
const nodeOptions = args.filter((a) => a.startsWith('--'));
const subdirs = args.filter((a) => !a.startsWith('--'));

const roots =
  subdirs.length === 0
    ? [testRoot]
    : subdirs.map((s) => {
        const dir = path.resolve(testRoot, s.replace(/^test[\\/]/, ''));
        if (!dir.startsWith(testRoot) || !fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
          process.stderr.write(`test/run.mjs: no such test directory: ${s} (looked for ${path.relative(repoRoot, dir)})\n`);
          process.exit(2);
        }
        return dir;
      });

/**
 * The files that take longest, measured on this machine (`.ci/run`, 2 cores), slowest first. They
 * start first: with three files at once, a long file that starts late (the protocol and unit
 * files sort last) runs on alone while the other slots stand idle, which cost the suite about
 * 30 s. Keep it roughly current; a file missing here only starts in path order.
 */
const SLOW_FIRST = [
  'test/e2e/fix-texts.test.mjs',
  'test/conformance/driver-terraform.test.mjs',
  'test/e2e/reconcile-remotes.test.mjs',
  'test/e2e/terraform-real.test.mjs',
  'test/e2e/teardown-command.test.mjs',
  'test/e2e/crash-races.test.mjs',
  'test/protocol/crash-points.test.mjs',
  'test/e2e/signals-cancel.test.mjs',
  'test/e2e/network-faults.test.mjs',
  'test/e2e/recover-unit.test.mjs',
  'test/e2e/newcomer-walk.test.mjs',
  'test/e2e/hold-delivery.test.mjs',
  'test/unit/cli-exit.test.mjs',
  'test/e2e/state-move.test.mjs',
  'test/e2e/lifecycle-policies.test.mjs',
  'test/e2e/silent-remote.test.mjs',
  'test/e2e/drivers-flow.test.mjs',
  'test/unit/terraform-parts.test.mjs',
];

function slowestFirst(a, b) {
  const rank = (f) => {
    const i = SLOW_FIRST.indexOf(f.split(path.sep).join('/'));
    return i < 0 ? SLOW_FIRST.length : i;
  };
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

const filter = process.env.NYL_TEST_FILTER;
const files = [...new Set(roots.flatMap(findTests))]
  .map((f) => path.relative(repoRoot, f))
  .filter((f) => !filter || f.includes(filter) || path.join(repoRoot, f).includes(filter))
  .sort(slowestFirst);

if (files.length === 0) {
  process.stderr.write(
    `test/run.mjs: no *.test.mjs files under ${roots.map((r) => path.relative(repoRoot, r) || '.').join(', ')}` +
      `${filter ? ` matching NYL_TEST_FILTER=${filter}` : ''}\n`,
  );
  process.exit(1);
}

/**
 * Where the tests' repositories and scratch directories go: the tests create thousands of small
 * Git repositories and commits, and on a memory file system (/dev/shm, when it has room) the suite
 * spends far less time in the kernel than on disk. A TMPDIR the caller set is kept.
 */
function testTmpdir() {
  if (process.env.TMPDIR) return undefined;
  try {
    const fsStats = fs.statfsSync('/dev/shm');
    if (fsStats.bavail * fsStats.bsize < 2 * 1024 ** 3) return undefined;
    const dir = fs.mkdtempSync('/dev/shm/nyl-tests-');
    // Tests run hooks and tools from their directories: a noexec mount will not do.
    const probe = path.join(dir, 'exec-probe');
    fs.writeFileSync(probe, '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    if (spawnSync(probe).status === 0) return dir;
    fs.rmSync(dir, { recursive: true, force: true });
    return undefined;
  } catch {
    return undefined;
  }
}

const tmpdir = testTmpdir();
const concurrency = process.env.NYL_TEST_CONCURRENCY || '3';
const child = spawn(process.execPath, ['--test', `--test-concurrency=${concurrency}`, ...nodeOptions, ...files], {
  cwd: repoRoot,
  stdio: 'inherit',
  env: tmpdir ? { ...process.env, TMPDIR: tmpdir } : process.env,
});
// Ctrl-C reaches the child through the terminal's process group: wait for it to report.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => {
  if (tmpdir) fs.rmSync(tmpdir, { recursive: true, force: true });
  process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0));
});
