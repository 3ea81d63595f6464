/**
 * A look at a repository's ref files without starting git: loose refs are files under the git
 * dir, packed ones lines of packed-refs. Cheap enough to run per unit of a run (signals) and
 * before every online command (a --local run's leftovers); undefined whenever only git can tell
 * (a linked worktree, reftable).
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

function isGitDir(path: string): boolean {
  return existsSync(join(path, 'HEAD')) && existsSync(join(path, 'objects')) && existsSync(join(path, 'refs'));
}

/** Is path a git dir (a bare repository, or a .git directory)? */
export function isRepositoryDir(path: string): boolean {
  return isGitDir(path);
}

/** The git dir of a repository path: a bare repository or a work tree with .git. */
export function gitDirOf(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  if (!statSync(path).isDirectory()) return undefined;
  if (isGitDir(path)) return path;
  const dotGit = join(path, '.git');
  if (existsSync(dotGit) && statSync(dotGit).isDirectory() && isGitDir(dotGit)) return dotGit;
  return undefined;
}

function packedRefs(gitDir: string): string | undefined {
  try {
    return readFileSync(join(gitDir, 'packed-refs'), 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * False when none of these refs (or refs under these prefixes) can exist in the repository;
 * undefined when only git can tell.
 */
export function mayHaveLocalRefs(repository: string, refs: string[]): boolean | undefined {
  const gitDir = gitDirOf(repository);
  if (!gitDir || existsSync(join(gitDir, 'reftable'))) return undefined;
  const packed = packedRefs(gitDir) ?? '';
  return refs.some((ref) => existsSync(join(gitDir, ...ref.replace(/\/$/, '').split('/'))) || packed.includes(` ${ref}`));
}

/**
 * Whether refs may exist under prefix in the repository of this git dir: true when a loose ref
 * directory there is not empty or packed-refs names one; undefined without a git dir or with
 * reftable.
 */
export function mayHaveRefsUnderDir(gitDir: string | undefined, prefix: string): boolean | undefined {
  if (!gitDir || existsSync(join(gitDir, 'reftable'))) return undefined;
  const dir = join(gitDir, ...prefix.replace(/\/$/, '').split('/'));
  try {
    if (readdirSync(dir).length > 0) return true;
  } catch {
    /* no loose refs there */
  }
  const packed = packedRefs(gitDir);
  return packed === undefined ? false : packed.includes(` ${prefix}`);
}
