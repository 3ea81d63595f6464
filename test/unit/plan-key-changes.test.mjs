// Why a key changed, as the planner names it (src/plan/key-changes.ts) and as status renders it:
// spec fields, files of a directory read when both sides recorded them (else the directory),
// module files apart from inputs, triggers, sensitive values; and "execution key changed" only
// when nothing recorded differs. The files under a directory read (src/project/read-files.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keyChanges } from '../../dist/plan/key-changes.js';
import { statusDetail } from '../../dist/plan/reasons.js';
import { readFiles } from '../../dist/project/read-files.js';

const before = {
  lifecycle: { state: 'active' },
  rendering: { module: 'infra', env: { A: '1' } },
  reads: {
    sources: { 'infra/': 't1', 'conf/': 't2', 'seed.sql': 'b1' },
    triggers: { deploy: 'run-1', gone: 'run-0' },
    secrets: [{ pointer: '/env/P', unit: 'db', output: 'password', sha256: 'h1' }],
  },
  readFiles: { 'infra/main.tf': 'f1', 'infra/vars.tf': 'f2', 'conf/a.yaml': 'c1' },
};

test('keyChanges names each changed read; a directory file by file when both sides recorded its files', () => {
  const now = {
    rendering: { module: 'infra', env: { A: '2' } },
    reads: {
      sources: { 'infra/': 't1b', 'conf/': 't2b', 'new.sql': 'b2' },
      triggers: { deploy: 'run-2', added: 'run-3' },
      secrets: [{ pointer: '/env/P', unit: 'db', output: 'password', sha256: 'h2' }],
    },
    readFiles: { 'infra/main.tf': 'f1b', 'infra/outputs.tf': 'f3', 'conf/a.yaml': 'c1', 'conf/b.yaml': 'c2' },
  };
  assert.deepEqual(keyChanges(before, now, new Set(['infra/'])), [
    { read: 'spec', fields: ['env'] },
    { read: 'input', path: 'conf/b.yaml', how: 'added' },
    { read: 'module-file', path: 'infra/main.tf', how: 'changed' },
    { read: 'module-file', path: 'infra/outputs.tf', how: 'added' },
    { read: 'module-file', path: 'infra/vars.tf', how: 'removed' },
    { read: 'input', path: 'new.sql', how: 'added' },
    { read: 'input', path: 'seed.sql', how: 'removed' },
    { read: 'trigger', unit: 'added', how: 'added' },
    { read: 'trigger', unit: 'deploy', how: 'changed' },
    { read: 'trigger', unit: 'gone', how: 'removed' },
    { read: 'secret', unit: 'db', output: 'password' },
  ]);
});

test('a directory whose files the receipt did not record (older state) is named as the directory; nothing differing is no change', () => {
  const { readFiles: _files, ...old } = before;
  const now = { rendering: before.rendering, reads: { ...before.reads, sources: { ...before.reads.sources, 'infra/': 't1b' } }, readFiles: before.readFiles };
  assert.deepEqual(keyChanges(old, now, new Set(['infra/'])), [{ read: 'module', path: 'infra/', how: 'changed' }]);
  assert.deepEqual(keyChanges(before, { rendering: before.rendering, reads: before.reads, readFiles: before.readFiles }, new Set()), []);
});

test('status renders the changes, eight at most, and "execution key changed" only without any', () => {
  const plan = (keyChanges) => ({ name: 'u', kind: 'Command', action: { type: 'execute', reason: 'key-changed' }, ...(keyChanges ? { keyChanges } : {}) });
  assert.equal(statusDetail(plan()), 'execution key changed');
  assert.equal(statusDetail(plan([])), 'execution key changed');
  assert.equal(
    statusDetail(
      plan([
        { read: 'spec', fields: ['env', 'run'] },
        { read: 'module', path: 'infra/', how: 'changed' },
        { read: 'trigger', unit: 'deploy', how: 'changed' },
        { read: 'trigger', unit: 'smoke', how: 'added' },
        { read: 'secret', unit: 'db', output: 'password' },
      ]),
    ),
    'spec fields env, run changed; module infra/ changed; triggered by deploy; trigger smoke added; sensitive output db.password changed',
  );
  const many = Array.from({ length: 10 }, (_, i) => ({ read: 'input', path: `m/${i}.sql`, how: 'added' }));
  assert.match(statusDetail(plan(many)), /^input m\/0\.sql added; .*input m\/7\.sql added; and 2 more$/);
});

test('readFiles: the files under the directory reads only, none for file reads or a directory too large to record', () => {
  const objects = new Map([
    ['infra', { type: 'tree', oid: 't' }],
    ['infra/main.tf', { type: 'blob', oid: 'a' }],
    ['infra/sub/x.tf', { type: 'blob', oid: 'b' }],
    ['infrastructure.md', { type: 'blob', oid: 'c' }],
    ['seed.sql', { type: 'blob', oid: 'd' }],
  ]);
  assert.deepEqual(readFiles({ 'infra/': 't', 'seed.sql': 'd' }, objects), { 'infra/main.tf': 'a', 'infra/sub/x.tf': 'b' });
  assert.equal(readFiles({ 'seed.sql': 'd' }, objects), undefined);
  const big = new Map(Array.from({ length: 501 }, (_, i) => [`big/${i}`, { type: 'blob', oid: String(i) }]));
  assert.equal(readFiles({ 'big/': 't' }, big), undefined);
});
