// What --local opens (localLocation) and the pure judgements of src/state/local-work.ts: the
// NYL-STATE-LOCAL-WORK variants, the receipts a state reset would lose, and --discard's verdict.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cacheRepositoryOf, localLocation } from '../../dist/state/location.js';
import { discardVerdict, localWorkDiagnostic, receiptsAbsent } from '../../dist/state/local-work.js';
import { fixFor } from '../../dist/errors/catalog.js';

const base = {
  environment: 'dev',
  desiredRef: 'refs/heads/nyl/dev/desired',
  observedRef: 'refs/heads/nyl/dev/observed',
  statePath: '',
  coordinationPrefix: 'refs/nyl/',
};
const checkout = { workTree: '/w', originURL: 'https://git.example.com/org/state.git' };

test('localLocation: the clone and a path as online, the origin as the clone, another remote as its cache repository', () => {
  const clone = localLocation({ ...base, kind: 'clone', chosenBy: 'the clone itself (no remote)' }, checkout, '/cache');
  assert.equal(clone.kind, 'clone');
  assert.equal(clone.localPath, undefined);
  const path = localLocation(
    { ...base, kind: 'path', url: 'file:///s', pushURL: 'file:///s', localPath: '/s', chosenBy: 'Environment dev' },
    checkout,
    '/cache',
  );
  assert.deepEqual({ kind: path.kind, url: path.url, localPath: path.localPath }, { kind: 'path', url: 'file:///s', localPath: '/s' });
  assert.match(path.chosenBy, /^--local: the state repository \/s itself/);
  const origin = localLocation(
    { ...base, kind: 'remote', url: 'https://GIT.example.com/org/state', pushURL: 'x', chosenBy: 'Environment dev' },
    checkout,
    '/cache',
  );
  assert.deepEqual(
    { kind: origin.kind, url: origin.url, pushURL: origin.pushURL, localPath: origin.localPath },
    { kind: 'clone', url: undefined, pushURL: undefined, localPath: undefined },
  );
  assert.match(origin.chosenBy, /^--local: the clone's own branches/);
  const other = localLocation(
    { ...base, kind: 'remote', url: 'https://git.example.com/org/other.git', pushURL: 'x', chosenBy: 'Environment dev' },
    checkout,
    '/cache',
  );
  assert.equal(other.kind, 'clone');
  assert.equal(other.localPath, cacheRepositoryOf('https://git.example.com/org/other.git', '/cache'));
  assert.match(other.localPath, /^\/cache\/repos\/.*other-[0-9a-f]{12}\.git$/);
  assert.equal(other.url, undefined);
  assert.deepEqual([other.desiredRef, other.coordinationPrefix], [base.desiredRef, 'refs/nyl/'], 'the configured names');
});

test('NYL-STATE-LOCAL-WORK: a lease first, then run refs, then the uncertain units of evidence refs; fixes name the local commands', () => {
  const ns = 'refs/nyl/dev/';
  const lease = localWorkDiagnostic('dev', ns, [`${ns}runs/r1`, `${ns}lease`], 'error');
  assert.deepEqual(lease.data, { refs: [`${ns}lease`, `${ns}runs/r1`] });
  assert.match(lease.fix, /`nyl lease break -e dev --local --reason "<why>"`.*`nyl recover -e dev --local`/);
  const runs = localWorkDiagnostic('dev', ns, [`${ns}runs/r1`, `${ns}evidence/a/r0`], 'warning');
  assert.match(runs.fix, /^import what the --local run left .*`nyl reconcile -e dev --local`/);
  assert.equal(runs.severity, 'warning');
  const evidence = localWorkDiagnostic('dev', ns, [`${ns}evidence/b/r1`, `${ns}evidence/a/r1`], 'error');
  assert.deepEqual(evidence.units, ['a', 'b']);
  assert.equal(evidence.fix, fixFor('NYL-STATE-LOCAL-WORK', { env: 'dev', left: 'evidence', unit: 'a', units: ['a', 'b'] }));
  assert.match(evidence.fix, /`nyl recover -e dev --local --unit a --retry --reason "<why>"`/);
});

test('receiptsAbsent: a local receipt of another run or execution key, or none remote, is lost; no local receipt loses nothing', () => {
  const r = (run, executionKey = 'k') => ({ receipt: { run, executionKey } });
  const local = new Map([
    ['same', r('r1')],
    ['newer', r('r2')],
    ['rekeyed', r('r1', 'k2')],
    ['only', r('r3')],
    ['none', {}],
  ]);
  const remote = new Map([
    ['same', r('r1')],
    ['newer', r('r1')],
    ['rekeyed', r('r1')],
    ['none', r('r1')],
  ]);
  assert.deepEqual(receiptsAbsent(local, remote), ['newer', 'only', 'rekeyed']);
});

test('discardVerdict: every lost receipt named or --discard-all; a named unit that loses nothing is a usage error', () => {
  assert.deepEqual(discardVerdict([], [], false), { kind: 'ok' });
  assert.deepEqual(discardVerdict(['a', 'b'], [], false), { kind: 'unnamed', units: ['a', 'b'] });
  assert.deepEqual(discardVerdict(['a', 'b'], ['a'], false), { kind: 'unnamed', units: ['b'] });
  assert.deepEqual(discardVerdict(['a', 'b'], ['b', 'a'], false), { kind: 'ok' });
  assert.deepEqual(discardVerdict(['a'], [], true), { kind: 'ok' });
  assert.deepEqual(discardVerdict(['a'], ['x', 'a', 'x'], false), { kind: 'not-absent', units: ['x'] });
});
