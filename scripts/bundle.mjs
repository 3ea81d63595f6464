#!/usr/bin/env node
// Bundles the CLI into one file, dist/nyl.cjs, which bin/nyl runs, and writes V8's code cache for
// it, dist/nyl.cjs.cache (bin/load-bundle.cjs): `npm run build` calls it after tsc. Why: a
// command's start-up was mostly Node resolving, reading and compiling about 200 small modules
// (src/ compiled one file per module, and the yaml package). Measured on `nyl status` of a small
// project: 0.30 s CPU from dist/cli/main.js, 0.25 s from the bundle, 0.21 s with its code cache.
// The per-module build in dist/ stays: the in-process tests import its modules one by one. Lazy
// `require()` and `import()` of the sources stay lazy in the bundle: a module is evaluated when
// first asked for, as before.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { build } from 'esbuild';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.dirname(path.dirname(fileURLToPath(import.meta.url)));

await build({
  entryPoints: [path.join(root, 'src', 'cli', 'main.ts')],
  outfile: path.join(root, 'dist', 'nyl.cjs'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  // Names stay as written: stack traces of NYL-INTERNAL name the functions of src/.
  keepNames: true,
  legalComments: 'none',
  logLevel: 'warning',
});

/**
 * The code cache: V8 stores the functions a process compiled, so the build runs the commands a
 * pipeline runs most (state init, reconcile, status, plan), each in a process of its own that
 * loads the cache so far and writes it back with what it compiled, on a scratch project whose
 * state is a scratch repository. Best effort: without git, or if a command fails, the cache holds
 * what ran, and an empty one is no worse than none.
 */
function warmCodeCache() {
  const scratch = mkdtempSync(path.join(tmpdir(), 'nyl-code-cache-'));
  try {
    const project = path.join(scratch, 'project');
    const state = path.join(scratch, 'state.git');
    mkdirSync(project);
    const yaml = [
      `apiVersion: nyl.io/v1\nkind: Environment\nmetadata: {name: dev}\nspec:\n  state: {repository: {repoURL: "${pathToFileURL(state).href}"}}`,
      'apiVersion: nyl.io/v1\nkind: Command\nmetadata: {name: a}\nspec:\n  run: ["true"]',
      'apiVersion: nyl.io/v1\nkind: Command\nmetadata: {name: b}\nspec:\n  dependsOn: [a]\n  script: "true"',
    ].join('\n---\n');
    writeFileSync(path.join(project, 'nyl.yaml'), `${yaml}\n`);
    const git = (cwd, ...args) => execFileSync('git', args, { cwd, stdio: 'ignore' });
    git(scratch, 'init', '-q', '--bare', state);
    git(project, 'init', '-q');
    git(project, 'add', 'nyl.yaml');
    git(project, '-c', 'user.name=Build', '-c', 'user.email=build@localhost', 'commit', '-q', '-m', 'code cache');
    const author = ['--author', 'Build <build@localhost>'];
    const commands = [
      ['state', 'init', '-e', 'dev', ...author],
      ['reconcile', '-e', 'dev', ...author],
      ['status', '-e', 'dev'],
      ['plan', '-e', 'dev'],
      ['--help'],
    ];
    const loader = path.join(root, 'bin', 'load-bundle.cjs');
    for (const argv of commands) {
      const run = `const b = require(${JSON.stringify(loader)}).loadBundle(); b.exports.main(${JSON.stringify(argv)}).then(() => b.writeCache())`;
      execFileSync(process.execPath, ['-e', run], { cwd: project, stdio: 'ignore', env: { ...process.env, NYL_CACHE_DIR: path.join(scratch, 'cache') } });
    }
  } catch {
    // best effort (see above)
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

warmCodeCache();
