/**
 * Who writes state commits: --author "Name <email>", else Git's user.name/user.email of the
 * project's repository, else NYL-COMMIT-IDENTITY-MISSING before anything changes.
 *
 * An identity goes into commit headers (through git fast-import) and lease records, so it must be
 * one that Git can take: no control character (a newline ended the header line and crashed
 * fast-import, leaving a crash file in the state repository), no `<` or `>` inside the name or
 * the email, no whitespace in the email. It is checked here, before anything is read or written.
 */
import { fail } from '../../errors/diagnostic';
import type { Identity } from '../../git/object-writer';
import type { Checkout } from '../../project/checkout';

const CONTROL = /[\x00-\x1f\x7f]/;

/** Why Git cannot take this name or email, or undefined when it can. */
function identityProblem(name: string, email: string): string | undefined {
  if (CONTROL.test(name) || CONTROL.test(email)) return 'it contains a newline or another control character';
  if (name.trim() === '') return 'the name is empty';
  if (/[<>]/.test(name)) return 'the name contains < or >';
  if (email === '' || /[<>\s]/.test(email)) return 'the email is empty or contains <, > or whitespace';
  return undefined;
}

function parseAuthor(text: string): Identity | undefined {
  if (CONTROL.test(text)) return undefined;
  const m = /^ *([^<>]*?) *<([^<>]*)> *$/.exec(text);
  if (!m || identityProblem(m[1]!, m[2]!)) return undefined;
  return { name: m[1]!, email: m[2]! };
}

export function resolveIdentity(author: string | undefined, checkout: Checkout): Identity {
  if (author !== undefined) {
    const parsed = parseAuthor(author);
    if (!parsed) {
      fail('NYL-USAGE', `--author ${JSON.stringify(author)} is not of the form "Name <email>" (one line, no < or > in the name, no whitespace in the email)`, {
        fix: 'pass --author "Name <email>"',
      });
    }
    return parsed;
  }
  if (checkout.userName && checkout.userEmail) {
    const problem = identityProblem(checkout.userName, checkout.userEmail);
    if (problem) {
      fail(
        'NYL-COMMIT-IDENTITY-MISSING',
        `Git's user.name ${JSON.stringify(checkout.userName)} and user.email ${JSON.stringify(checkout.userEmail)} of ${checkout.workTree} cannot author a commit: ${problem}`,
      );
    }
    return { name: checkout.userName, email: checkout.userEmail };
  }
  fail(
    'NYL-COMMIT-IDENTITY-MISSING',
    `no author for state commits: --author is not given and the repository ${checkout.workTree} has no user.name and user.email`,
  );
}
