// The tutorial runs: every ```sh and ```console block of docs/tutorial.md, in order, in one bash
// session in a scratch home directory (the state in a bare repository there: no network), with
// the built `nyl` on PATH. A command that fails, or whose shown output no longer matches what it
// prints in its stable parts, fails the test (conventions: docs/tutorial.md, "How this page is
// tested"; the reader and matcher: test/support/doc-blocks.mjs).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanupAll, hermeticEnv, tempDir } from '../support/git-fixtures.mjs';
import { docScript, docSteps, outputMismatch } from '../support/doc-blocks.mjs';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

after(cleanupAll);

/** Runs a page's examples; returns { steps, outputs, codes, status }. */
function runPage(page) {
  const { steps, skipped } = docSteps(fs.readFileSync(path.join(ROOT, page), 'utf8'));
  const home = tempDir('nyl-doc-home-');
  const out = tempDir('nyl-doc-out-');
  const bin = tempDir('nyl-doc-bin-');
  fs.symlinkSync(path.join(ROOT, 'bin', 'nyl'), path.join(bin, 'nyl'));
  // The tutorial sets its own identity with git config; the fixed dates of hermeticEnv stay, but a
  // commit identity from the environment would hide a missing `git config` step.
  const env = hermeticEnv({
    HOME: home,
    PATH: `${bin}:${process.env.PATH}`,
    NYL_CACHE_DIR: path.join(out, 'cache'),
    GIT_AUTHOR_NAME: undefined,
    GIT_AUTHOR_EMAIL: undefined,
    GIT_COMMITTER_NAME: undefined,
    GIT_COMMITTER_EMAIL: undefined,
    EMAIL: undefined,
    NO_COLOR: '1',
  });
  fs.writeFileSync(path.join(out, 'script.sh'), docScript(steps, out));
  const r = spawnSync('bash', [path.join(out, 'script.sh')], { cwd: home, env, encoding: 'utf8', timeout: 60_000 });
  const read = (i, ext) => {
    const file = path.join(out, `${i}.${ext}`);
    return fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : undefined;
  };
  const outputs = steps.map((_, i) => read(i, 'out'));
  const codes = steps.map((_, i) => read(i, 'rc')?.trim());
  return { steps, skipped, outputs, codes, status: r.status, stderr: r.stderr, home };
}

test('docs/tutorial.md: every shell example runs, and its shown output matches', () => {
  const started = Date.now();
  const { steps, skipped, outputs, codes, status, stderr, home } = runPage('docs/tutorial.md');
  assert.ok(steps.length >= 20, `the tutorial's examples were found (${steps.length} steps)`);
  assert.deepEqual(skipped, [], 'the tutorial says that none of its blocks is skipped');
  const failed = codes.findIndex((c, i) => c !== undefined && c !== '0' && steps[i + 1]?.command.trim() !== 'echo $?');
  if (status !== 0) {
    const at = failed >= 0 ? failed : codes.findIndex((c) => c === undefined);
    assert.fail(`docs/tutorial.md:${steps[at]?.line}: \`${steps[at]?.command}\` exited ${codes[at]} (script exit ${status})\n${outputs[at] ?? ''}${stderr}`);
  }
  for (const [i, step] of steps.entries()) {
    if (step.expected === undefined) continue;
    const mismatch = outputMismatch(step.expected, outputs[i].split('\n'), home);
    assert.equal(mismatch, undefined, `docs/tutorial.md:${step.line}: \`${step.command}\` printed:\n${outputs[i]}\n${mismatch}`);
  }
  const checked = steps.filter((s) => s.expected !== undefined && s.expected.length > 0).length;
  process.stdout.write(`# docs/tutorial.md: ${steps.length} commands run, ${checked} outputs compared, ${Date.now() - started} ms\n`);
});
