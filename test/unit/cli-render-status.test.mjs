// The text of `nyl status`: below the table, the state repository's identity and its local path
// (as `state init` prints them), the commits read and the lease.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { renderStatus } from '../../dist/commands/inspect/render-status.js';

function report(location) {
  return {
    environment: 'dev',
    unitOrder: ['a'],
    units: { a: { name: 'a', kind: 'Command', state: 'current', receipt: 'current', detail: '' } },
    source: 'abc',
    desired: 'd1',
    observed: 'o1',
    details: { location },
    errors: [],
    warnings: [],
    notes: [],
  };
}

test('status names the local path of a state repository that is not where the URL says', () => {
  const text = renderStatus(
    report({
      repository: 'https://git.example.com/state.git',
      localPath: '/home/me/.cache/nyl/state-1a2b.git',
      desiredRef: 'refs/heads/nyl/dev/desired',
      observedRef: 'refs/heads/nyl/dev/observed',
    }),
  );
  assert.match(text, /^ {2}state: +https:\/\/git\.example\.com\/state\.git \(refs\/heads\/nyl\/dev\/desired, refs\/heads\/nyl\/dev\/observed\)$/m);
  assert.match(text, /^ {2}local: +\/home\/me\/\.cache\/nyl\/state-1a2b\.git$/m);
  const same = renderStatus(report({ repository: '/srv/state.git', localPath: '/srv/state.git', desiredRef: 'd', observedRef: 'o' }));
  assert.doesNotMatch(same, /local:/, 'not repeated when it is the repository itself');
});
