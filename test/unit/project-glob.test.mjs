import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandGlob, isGlob, matchGlob } from '../../dist/project/glob.js';

const files = ['nyl.yaml', 'a.yaml', 'deploy/x.yaml', 'deploy/x.yml', 'deploy/sub/y.yaml', 'deploy/sub/deep/z.yaml', 'other/q.yaml', 'deploy/README.md'];

test('* stays within one path segment', () => {
  assert.deepEqual(expandGlob('*.yaml', files), ['a.yaml', 'nyl.yaml']);
  assert.deepEqual(expandGlob('deploy/*.yaml', files), ['deploy/x.yaml']);
  assert.equal(matchGlob('deploy/*', 'deploy/sub/y.yaml'), false);
});

test('** matches zero or more segments', () => {
  assert.deepEqual(expandGlob('deploy/**/*.yaml', files), ['deploy/sub/deep/z.yaml', 'deploy/sub/y.yaml', 'deploy/x.yaml']);
  assert.deepEqual(expandGlob('**/*.yaml', files), ['a.yaml', 'deploy/sub/deep/z.yaml', 'deploy/sub/y.yaml', 'deploy/x.yaml', 'nyl.yaml', 'other/q.yaml']);
  assert.deepEqual(expandGlob('deploy/**', files), ['deploy/README.md', 'deploy/sub/deep/z.yaml', 'deploy/sub/y.yaml', 'deploy/x.yaml', 'deploy/x.yml']);
  assert.equal(matchGlob('**/z.yaml', 'deploy/sub/deep/z.yaml'), true);
});

test('? matches one character, not a slash', () => {
  assert.deepEqual(expandGlob('deploy/x.y?l', files), ['deploy/x.yml']);
  assert.deepEqual(expandGlob('deploy/x.ya?l', files), ['deploy/x.yaml']);
  assert.equal(matchGlob('deploy?x.yaml', 'deploy/x.yaml'), false);
});

test('literal paths and regex characters are literal; ./ is dropped', () => {
  assert.equal(isGlob('deploy/x.yaml'), false);
  assert.equal(isGlob('deploy/*.yaml'), true);
  assert.equal(matchGlob('deploy/x.yaml', 'deploy/x.yaml'), true);
  assert.equal(matchGlob('deploy/x.yaml', 'deploy/xxyaml'), false);
  assert.equal(matchGlob('a+(b)[c].yaml', 'a+(b)[c].yaml'), true);
  assert.equal(matchGlob('./deploy/*.yaml', 'deploy/x.yaml'), true);
});
