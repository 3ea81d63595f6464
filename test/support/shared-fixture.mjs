// One fixture built once per test file and put back for every test that asks for it: a project,
// its state repository and its scratch directory, built by real nyl runs the first time, then
// copied back from a saved copy at the same paths (the project's nyl.yaml names the state
// repository and the log by absolute path, so the copy must live where the original did).
//
// Only for tests that run one after another (the default of node:test inside a file): the next
// call takes the paths over, so a test must be done with its fixture before the next one starts.
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from './git-fixtures.mjs';

/**
 * build() -> ctx with absolute directories among `keys` (default: dir, project, bare). Returns a
 * function that gives a fresh copy of what build() left: the first call builds, later calls put the
 * directories back as they were when build() returned (timestamps kept, so Git sees a clean
 * worktree without re-reading it). extra: whatever build() returned besides the ctx is returned as is.
 */
export function sharedFixture(build, keys = ['dir', 'project', 'bare']) {
  let built;
  let saved;
  return () => {
    if (!built) {
      built = build();
      const ctx = built.ctx ?? built;
      saved = tempDir('nyl-fixture-');
      for (const [i, key] of keys.entries()) {
        if (ctx[key] && fs.existsSync(ctx[key])) fs.cpSync(ctx[key], path.join(saved, String(i)), { recursive: true, preserveTimestamps: true });
      }
      return built;
    }
    const ctx = built.ctx ?? built;
    for (const [i, key] of keys.entries()) {
      if (!ctx[key]) continue;
      fs.rmSync(ctx[key], { recursive: true, force: true });
      const copy = path.join(saved, String(i));
      if (fs.existsSync(copy)) fs.cpSync(copy, ctx[key], { recursive: true, preserveTimestamps: true });
    }
    return built;
  };
}
