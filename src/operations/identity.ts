/**
 * Who writes state commits: --author "Name <email>", else Git's user.name/user.email of the
 * project's repository, else NYL-COMMIT-IDENTITY-MISSING before anything changes.
 */
import { fail } from '../errors/diagnostic';
import type { Identity } from '../git/object-writer';
import type { Checkout } from '../project/checkout';

function parseAuthor(text: string): Identity | undefined {
  const m = /^\s*([^<>]*?)\s*<([^<>\s]+@?[^<>\s]*)>\s*$/.exec(text);
  if (!m || !m[1] || !m[2]) return undefined;
  return { name: m[1], email: m[2] };
}

export function resolveIdentity(author: string | undefined, checkout: Checkout): Identity {
  if (author !== undefined) {
    const parsed = parseAuthor(author);
    if (!parsed) {
      fail('NYL-USAGE', `--author ${JSON.stringify(author)} is not of the form "Name <email>"`, {
        fix: 'pass --author "Name <email>"',
      });
    }
    return parsed;
  }
  if (checkout.userName && checkout.userEmail) return { name: checkout.userName, email: checkout.userEmail };
  fail('NYL-COMMIT-IDENTITY-MISSING', `no author for state commits: --author is not given and the repository ${checkout.workTree} has no user.name and user.email`);
}
