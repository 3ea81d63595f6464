// The tutorial runs: every ```sh and ```console block of docs/tutorial.md, in order, in one bash
// session in a scratch home directory (the state in a bare repository there: no network), with
// the built `nyl` on PATH. A command that fails, or whose shown output no longer matches what it
// prints in its stable parts, fails the test (conventions: docs/tutorial.md, "How this page is
// tested"; the reader and matcher: test/support/doc-blocks.mjs; the runner:
// test/support/doc-run.mjs, which test/e2e/newcomer-walk.test.mjs runs on a fresh clone too).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cleanupAll } from '../support/git-fixtures.mjs';
import { assertPageRan, runPage } from '../support/doc-run.mjs';

const ROOT = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

after(cleanupAll);

test('docs/tutorial.md: every shell example runs, and its shown output matches', () => {
  const started = Date.now();
  const run = runPage(ROOT, 'docs/tutorial.md');
  assert.ok(run.steps.length >= 20, `the tutorial's examples were found (${run.steps.length} steps)`);
  assert.deepEqual(run.skipped, [], 'the tutorial says that none of its blocks is skipped');
  const checked = assertPageRan('docs/tutorial.md', run);
  process.stdout.write(`# docs/tutorial.md: ${run.steps.length} commands run, ${checked} outputs compared, ${Date.now() - started} ms\n`);
});
