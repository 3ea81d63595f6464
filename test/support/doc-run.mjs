// Runs a Markdown page's examples (test/support/doc-blocks.mjs reads them) in one bash session in a
// scratch home directory, with `nyl` on PATH from a given tree's bin/nyl. Shared by the tutorial's
// test (test/e2e/doc-examples.test.mjs, this repository) and the newcomer's walk
// (test/e2e/newcomer-walk.test.mjs, a fresh clone of it).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { hermeticEnv, tempDir } from './git-fixtures.mjs';
import { docScript, docSteps, outputMismatch } from './doc-blocks.mjs';

/**
 * Runs `page` of the tree at `root` with root's bin/nyl; returns { steps, skipped, outputs, codes,
 * status, stderr, home }: the steps as read, each command's output and exit code (undefined when
 * it did not run), and the script's exit status.
 */
export function runPage(root, page) {
  const { steps, skipped } = docSteps(fs.readFileSync(path.join(root, page), 'utf8'));
  const home = tempDir('nyl-doc-home-');
  const out = tempDir('nyl-doc-out-');
  const bin = tempDir('nyl-doc-bin-');
  fs.symlinkSync(path.join(root, 'bin', 'nyl'), path.join(bin, 'nyl'));
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

/**
 * Asserts that every command of a page's run exited 0 (or was followed by `echo $?`) and printed
 * what the page shows; `page` names it in the messages. Returns how many outputs were compared.
 */
export function assertPageRan(page, { steps, outputs, codes, status, stderr, home }) {
  const failed = codes.findIndex((c, i) => c !== undefined && c !== '0' && steps[i + 1]?.command.trim() !== 'echo $?');
  if (status !== 0) {
    const at = failed >= 0 ? failed : codes.findIndex((c) => c === undefined);
    assert.fail(`${page}:${steps[at]?.line}: \`${steps[at]?.command}\` exited ${codes[at]} (script exit ${status})\n${outputs[at] ?? ''}${stderr}`);
  }
  for (const [i, step] of steps.entries()) {
    if (step.expected === undefined) continue;
    const mismatch = outputMismatch(step.expected, outputs[i].split('\n'), home);
    assert.equal(mismatch, undefined, `${page}:${step.line}: \`${step.command}\` printed:\n${outputs[i]}\n${mismatch}`);
  }
  return steps.filter((s) => s.expected !== undefined && s.expected.length > 0).length;
}
