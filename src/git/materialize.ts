/**
 * Materializes a source commit as plain files in a directory of the run, so tools run against
 * exactly the committed source (never the working tree) and a tool that writes next to its files
 * (terraform's .terraform, build outputs) cannot leak into another run.
 */
import { mkdirSync } from 'node:fs';
import type { Git } from './git';
import { GitError } from './git';

export async function materializeCommit(git: Git, repoDir: string, commit: string, dest: string): Promise<string> {
  mkdirSync(dest, { recursive: true });
  const archive = await git.run(repoDir, ['archive', '--format=tar', commit]);
  if (archive.code !== 0) throw new GitError(archive, repoDir);
  const untar = await git.runner.run(['tar', '-x', '-f', '-', '-C', dest], { input: archive.stdout, env: git.env() });
  if (untar.code !== 0) throw new Error(`tar could not unpack ${commit}: ${untar.stderr.toString().trim()}`);
  return dest;
}
