/**
 * Materializes a source commit as plain files, so tools run against exactly the committed
 * source (never the working tree). Trees are immutable per commit and cached: a second run of
 * the same commit reuses the directory. Written to a temporary name and renamed, so a crash
 * never leaves a half-written tree behind under the final name.
 */
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Git } from './git';
import { GitError } from './git';

export async function materializeCommit(git: Git, repoDir: string, commit: string, cacheDir: string): Promise<string> {
  const dest = join(cacheDir, 'source', commit);
  if (existsSync(dest)) return dest;
  mkdirSync(join(cacheDir, 'source'), { recursive: true });
  const tmp = `${dest}.tmp-${process.pid}-${Date.now()}`;
  mkdirSync(tmp, { recursive: true });
  const archive = await git.run(repoDir, ['archive', '--format=tar', commit]);
  if (archive.code !== 0) throw new GitError(archive, repoDir);
  const untar = await git.runner.run(['tar', '-x', '-f', '-', '-C', tmp], { input: archive.stdout });
  if (untar.code !== 0) {
    rmSync(tmp, { recursive: true, force: true });
    throw new Error(`tar could not unpack ${commit}: ${untar.stderr.toString().trim()}`);
  }
  try {
    renameSync(tmp, dest);
  } catch {
    // Another run materialized the same commit first; theirs is identical.
    rmSync(tmp, { recursive: true, force: true });
  }
  return dest;
}
