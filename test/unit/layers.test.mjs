// The layers of src/ depend downwards only (README, "Source layout"):
// cli -> operations -> {project, plan, run, state, lease, report} -> {drivers, git, exec} -> errors.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const SRC = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'src');

/** For each folder, the folders of src/ its files may import (besides itself). */
const ALLOWED = {
  errors: [],
  exec: [],
  git: ['exec', 'errors'],
  util: ['exec', 'git'],
  drivers: ['exec', 'util', 'errors', 'project'],
  project: ['errors', 'git', 'util', 'drivers'],
  report: ['errors', 'plan'],
  state: ['errors', 'git', 'project', 'util'],
  lease: ['errors', 'git', 'state', 'util'],
  plan: ['errors', 'drivers', 'project', 'state'],
  run: ['errors', 'git', 'exec', 'drivers', 'lease', 'plan', 'project', 'state', 'util'],
  operations: ['errors', 'git', 'exec', 'drivers', 'lease', 'plan', 'project', 'report', 'run', 'state', 'util'],
  cli: ['errors', 'git', 'exec', 'operations', 'report', 'util'],
};

function importsOf(file) {
  const text = fs.readFileSync(file, 'utf8');
  return [...text.matchAll(/from '\.\.\/([a-z-]+)\//g), ...text.matchAll(/import\('\.\.\/([a-z-]+)\//g), ...text.matchAll(/require\('\.\.\/([a-z-]+)\//g)].map((m) => m[1]);
}

test('every folder of src/ imports only the folders below it', () => {
  const problems = [];
  for (const dir of fs.readdirSync(SRC)) {
    const allowed = ALLOWED[dir];
    assert.ok(allowed, `src/${dir} has no layer in this test: add it to ALLOWED`);
    for (const name of fs.readdirSync(path.join(SRC, dir)).filter((f) => f.endsWith('.ts'))) {
      for (const target of importsOf(path.join(SRC, dir, name))) {
        if (target !== dir && !allowed.includes(target)) problems.push(`src/${dir}/${name} imports src/${target}`);
      }
    }
  }
  assert.deepEqual(problems, []);
});

test('only src/exec starts processes', () => {
  const offenders = [];
  for (const dir of fs.readdirSync(SRC)) {
    for (const name of fs.readdirSync(path.join(SRC, dir)).filter((f) => f.endsWith('.ts'))) {
      if (dir === 'exec') continue;
      if (/^import (?!type ).*from 'node:child_process'/m.test(fs.readFileSync(path.join(SRC, dir, name), 'utf8'))) offenders.push(`${dir}/${name}`);
    }
  }
  assert.deepEqual(offenders, []);
});
