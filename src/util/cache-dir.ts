/**
 * Where Nyl keeps what it can fetch or compute again: clones of state remotes, parsed projects,
 * providers of Terraform modules. NYL_CACHE_DIR wins; else XDG_CACHE_HOME/nyl, else ~/.cache/nyl.
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

export function cacheRoot(env: NodeJS.ProcessEnv): string {
  if (env.NYL_CACHE_DIR) return env.NYL_CACHE_DIR;
  const xdg = env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache');
  return join(xdg, 'nyl');
}
