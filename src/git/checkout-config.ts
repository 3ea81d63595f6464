/**
 * The two facts about a checkout that only git can tell: its identity and origin settings
 * (`git config`, one process for all three), and the branch HEAD names when the HEAD file alone
 * cannot say (`git symbolic-ref`, for a reftable or an unusual HEAD). Here because src/git is the
 * only builder of Git argv.
 */
import type { Git } from './git';

/** The checkout's user.name, user.email and remote.origin.url, where set. */
interface CheckoutConfig {
  userName?: string;
  userEmail?: string;
  originURL?: string;
}

const CONFIG_KEYS: Record<string, keyof CheckoutConfig> = { 'user.name': 'userName', 'user.email': 'userEmail', 'remote.origin.url': 'originURL' };

/** Reads the three settings in one `git config --get-regexp`; a setting that is not set is absent. */
export async function readCheckoutConfig(git: Git, dir: string): Promise<CheckoutConfig> {
  const result = await git.run(dir, ['config', '--get-regexp', '^(user\\.name|user\\.email|remote\\.origin\\.url)$']);
  const config: CheckoutConfig = {};
  for (const line of result.stdout.toString().split('\n')) {
    const sp = line.indexOf(' ');
    const field = sp < 0 ? undefined : CONFIG_KEYS[line.slice(0, sp)];
    if (field) config[field] = line.slice(sp + 1);
  }
  return config;
}

/** The ref HEAD points at (`refs/...`), or undefined when HEAD is detached or unreadable. */
export async function symbolicHeadRef(git: Git, workTree: string): Promise<string | undefined> {
  const asked = await git.run(workTree, ['symbolic-ref', '-q', 'HEAD']);
  const ref = asked.stdout.toString().trim();
  return asked.code === 0 && ref.startsWith('refs/') ? ref : undefined;
}
