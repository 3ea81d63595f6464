#!/usr/bin/env node
// Test entry point: node test/run.mjs [subdir...] [--node-test-option...]
//
// Finds every *.test.mjs under test/ (or only under the given subdirectories of test/, e.g.
// `unit`), sorted by path, keeps those whose path contains $NYL_TEST_FILTER when it is set, and
// runs them with `node --test --test-concurrency=2`. Why this script: Node 20's --test does not
// expand glob patterns. Arguments starting with "--" are passed on to node (e.g.
// --test-reporter=spec, --test-name-pattern=lease). Exits with node's exit code.

import { spawn } from 'node:child_process';
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

const roots = subdirs.length === 0 ? [testRoot] : subdirs.map((s) => {
  const dir = path.resolve(testRoot, s.replace(/^test[\\/]/, ''));
  if (!dir.startsWith(testRoot) || !fs.existsSync(dir) || !fs.statSync(dir).isDirectory()) {
    process.stderr.write(`test/run.mjs: no such test directory: ${s} (looked for ${path.relative(repoRoot, dir)})\n`);
    process.exit(2);
  }
  return dir;
});

const filter = process.env.NYL_TEST_FILTER;
const files = [...new Set(roots.flatMap(findTests))]
  .map((f) => path.relative(repoRoot, f))
  .filter((f) => !filter || f.includes(filter) || path.join(repoRoot, f).includes(filter))
  .sort();

if (files.length === 0) {
  process.stderr.write(`test/run.mjs: no *.test.mjs files under ${roots.map((r) => path.relative(repoRoot, r) || '.').join(', ')}`
    + `${filter ? ` matching NYL_TEST_FILTER=${filter}` : ''}\n`);
  process.exit(1);
}

const child = spawn(process.execPath, ['--test', '--test-concurrency=2', ...nodeOptions, ...files], {
  cwd: repoRoot,
  stdio: 'inherit',
});
// Ctrl-C reaches the child through the terminal's process group: wait for it to report.
process.on('SIGINT', () => {});
process.on('SIGTERM', () => child.kill('SIGTERM'));
child.on('exit', (code, signal) => {
  process.exit(code ?? 128 + (os.constants.signals[signal] ?? 0));
});
