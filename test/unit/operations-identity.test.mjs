// Who writes state commits (src/commands/shared/identity.ts): --author, else Git's user.name and
// user.email. An identity git fast-import cannot take (a newline, a NUL, a stray < or >) is
// refused before anything is written: it used to crash fast-import and leave a crash file in the
// state repository.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveIdentity } from '../../dist/commands/shared/identity.js';

const checkout = (userName, userEmail) => ({ workTree: '/repo', projectRoot: '/repo', projectPrefix: '', userName, userEmail });

function codeOf(fn) {
  try {
    fn();
  } catch (e) {
    return { code: e.diagnostics?.[0]?.code, message: e.diagnostics?.[0]?.message, fix: e.diagnostics?.[0]?.fix };
  }
  return undefined;
}

test('--author "Name <email>" and the Git configuration give the identity', () => {
  assert.deepEqual(resolveIdentity('Release Bot <bot@example.com>', checkout()), { name: 'Release Bot', email: 'bot@example.com' });
  assert.deepEqual(resolveIdentity(' Zoë Ünïcode  <z@example.com> ', checkout()), { name: 'Zoë Ünïcode', email: 'z@example.com' });
  assert.deepEqual(resolveIdentity(undefined, checkout('Alice', 'alice@example.com')), { name: 'Alice', email: 'alice@example.com' });
});

test('an --author with a newline, a NUL, a control character or a stray < > is NYL-USAGE', () => {
  for (const author of [
    'Evil\nName <e@example.com>',
    'Name <e@exa\nmple.com>',
    'Na\0me <e@example.com>',
    'Name <e\0@example.com>',
    'Na\rme <e@example.com>',
    'Tab\tName <e@example.com>',
    'A <b> <c@example.com>',
    'Name <e@example.com>\n',
    '\nName <e@example.com>',
    'Name <>',
    '<e@example.com>',
  ]) {
    const r = codeOf(() => resolveIdentity(author, checkout('Alice', 'alice@example.com')));
    assert.equal(r?.code, 'NYL-USAGE', JSON.stringify(author));
    assert.match(r.fix, /--author "Name <email>"/);
  }
});

test('a configured user.name or user.email that Git cannot take is refused before anything changes', () => {
  for (const [name, email] of [
    ['Evil\nName', 'e@example.com'],
    ['Name', 'e@exa\nmple.com'],
    ['A <b>', 'e@example.com'],
    ['Name', 'a b@example.com'],
  ]) {
    const r = codeOf(() => resolveIdentity(undefined, checkout(name, email)));
    assert.equal(r?.code, 'NYL-COMMIT-IDENTITY-MISSING', JSON.stringify([name, email]));
    assert.match(r.message, /user\.(name|email)/);
  }
});
