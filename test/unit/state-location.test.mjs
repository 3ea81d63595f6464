import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadProject } from '../../dist/project/load.js';
import {
  DEFAULT_PREFIX,
  coordinationNamespace,
  evidencePrefix,
  leaseRef,
  describeEnd,
  localPathOf,
  locationMovedFrom,
  repositoryIdentity,
  sameLocation,
  resolveLocation,
  runsPrefix,
  signalsPrefix,
  statePathOf,
} from '../../dist/state/location.js';
import { documents, memoryTree, resource } from '../support/memory-tree.mjs';
import { resolveEnvironment } from '../../dist/project/instances.js';

const WORK_TREE = '/work/checkout';
const noOrigin = { workTree: WORK_TREE };
const origin = (originURL) => ({ workTree: WORK_TREE, originURL });

/** An Environment document with labels and optional spec lines. */
const environment = (name, labels, ...specLines) => [
  'apiVersion: nyl.io/v1',
  'kind: Environment',
  `metadata: {name: ${name}${labels ? `, labels: ${labels}` : ''}}`,
  specLines.length > 0 ? 'spec:' : 'spec: {}',
  ...specLines.map((l) => `  ${l}`),
];

/** Loads a project from resource documents and returns it with a resolver for one environment. */
async function project(...docs) {
  const p = await loadProject('/project', memoryTree({ 'nyl.yaml': documents(resource('Project', 'p'), ...docs) }));
  return { p, at: (env, checkout = noOrigin) => resolveLocation(p, p.environments.get(env), checkout) };
}

/** A project built in code (for values the loader's validation would refuse). */
function handProject({ state, groups = [], repositories = [] } = {}) {
  const env = {
    kind: 'Environment',
    name: 'dev',
    labels: {},
    origin: { file: 'nyl.yaml', line: 1, pointer: '', document: 0 },
    spec: { values: {}, driftRepair: 'converge', dependsOn: [], lease: { durationMs: 300000 }, ...(state ? { state } : {}) },
  };
  const p = {
    root: '/project',
    environments: new Map([['dev', env]]),
    repositories: new Map(repositories.map((r) => [r.name, r])),
    groups: new Map(groups.map((g) => [g.name, g])),
    units: new Map(),
  };
  return { p, env };
}

// --- the clone itself and the checkout's origin ----------------------------------------------

test('nothing configured and no origin: the clone itself, with every default', async () => {
  const { at } = await project(environment('dev'));
  const loc = at('dev');
  assert.deepEqual(loc, {
    environment: 'dev',
    kind: 'clone',
    desiredRef: 'refs/heads/nyl/dev/desired',
    observedRef: 'refs/heads/nyl/dev/observed',
    statePath: '',
    coordinationPrefix: 'refs/nyl/',
    chosenBy: 'the clone itself (no remote)',
  });
  assert.equal(DEFAULT_PREFIX, 'refs/nyl/');
  assert.equal(loc.url, undefined);
  assert.equal(loc.pushURL, undefined);
  assert.equal(loc.localPath, undefined);
});

test('defaults of the refs name the environment', async () => {
  const { at } = await project(environment('dev'), environment('pr-123'));
  assert.equal(at('pr-123').desiredRef, 'refs/heads/nyl/pr-123/desired');
  assert.equal(at('pr-123').observedRef, 'refs/heads/nyl/pr-123/observed');
  assert.equal(at('dev').desiredRef, 'refs/heads/nyl/dev/desired');
});

test("nothing configured: the checkout's network origin is a remote, pushed to as read", async () => {
  const { at } = await project(environment('dev'));
  for (const url of ['https://git.example.com/org/shop.git', 'ssh://git@git.example.com/org/shop.git', 'git@git.example.com:org/shop.git']) {
    const loc = at('dev', origin(url));
    assert.equal(loc.kind, 'remote', url);
    assert.equal(loc.url, url);
    assert.equal(loc.pushURL, url);
    assert.equal(loc.localPath, undefined);
    assert.equal(loc.chosenBy, "the checkout's origin");
  }
});

test("the checkout's origin on this machine is opened as a path", async () => {
  const { at } = await project(environment('dev'));
  const abs = at('dev', origin('/srv/git/shop.git'));
  assert.equal(abs.kind, 'path');
  assert.equal(abs.url, 'file:///srv/git/shop.git');
  assert.equal(abs.pushURL, 'file:///srv/git/shop.git');
  assert.equal(abs.localPath, '/srv/git/shop.git');
  assert.equal(abs.chosenBy, "the checkout's origin");
  const rel = at('dev', origin('../upstream.git'));
  assert.equal(rel.kind, 'path');
  assert.equal(rel.localPath, '/work/upstream.git');
  assert.equal(rel.url, 'file:///work/upstream.git');
});

test('an origin that is the checkout itself (work tree or its .git) is the clone', async () => {
  const { at } = await project(environment('dev'));
  for (const url of [WORK_TREE, `${WORK_TREE}/`, `file://${WORK_TREE}`, `${WORK_TREE}/.git`, `file://${WORK_TREE}/.git`, './']) {
    const loc = at('dev', origin(url));
    assert.equal(loc.kind, 'clone', url);
    assert.equal(loc.chosenBy, "the checkout's origin: the checkout itself", url);
    assert.equal(loc.url, undefined);
    assert.equal(loc.pushURL, undefined);
  }
});

// --- the Environment's own repository -------------------------------------------------------

test('state.repository with a file:// URL: kind path, opened directly, even when the checkout has an origin', async () => {
  const { at } = await project(environment('dev', undefined, 'state: {repository: {repoURL: "file:///srv/state.git"}}'));
  for (const checkout of [noOrigin, origin('https://git.example.com/org/shop.git')]) {
    const loc = at('dev', checkout);
    assert.equal(loc.kind, 'path');
    assert.equal(loc.url, 'file:///srv/state.git');
    assert.equal(loc.pushURL, 'file:///srv/state.git');
    assert.equal(loc.localPath, '/srv/state.git');
    assert.equal(loc.chosenBy, 'Environment dev');
  }
});

test('state.repository with an absolute path: kind path with the file:// URL of that path', async () => {
  const { at } = await project(environment('dev', undefined, 'state: {repository: {repoURL: /srv/state.git/}}'));
  const loc = at('dev');
  assert.equal(loc.kind, 'path');
  assert.equal(loc.localPath, '/srv/state.git');
  assert.equal(loc.url, 'file:///srv/state.git');
  assert.equal(loc.pushURL, 'file:///srv/state.git');
});

test('relative ./ and ../ paths resolve against the checkout work tree', async () => {
  const { at } = await project(
    environment('dev', undefined, 'state: {repository: {repoURL: ./state.git}}'),
    environment('qa', undefined, 'state: {repository: {repoURL: ../shared/state.git}}'),
  );
  const dev = at('dev');
  assert.equal(dev.kind, 'path');
  assert.equal(dev.localPath, '/work/checkout/state.git');
  assert.equal(dev.url, 'file:///work/checkout/state.git');
  const qa = at('qa');
  assert.equal(qa.kind, 'path');
  assert.equal(qa.localPath, '/work/shared/state.git');
});

test('a path with characters that need escaping becomes a proper file:// URL', async () => {
  const { at } = await project(environment('dev', undefined, 'state: {repository: {repoURL: "/srv/my state#1.git"}}'));
  const loc = at('dev');
  assert.equal(loc.kind, 'path');
  assert.equal(loc.localPath, '/srv/my state#1.git');
  assert.equal(loc.url, 'file:///srv/my%20state%231.git');
});

test('a configured URL equal to the checkout itself is the clone', async () => {
  for (const url of [`file://${WORK_TREE}`, WORK_TREE, `${WORK_TREE}/.git`, './']) {
    const { at } = await project(environment('dev', undefined, `state: {repository: {repoURL: "${url}"}}`));
    const loc = at('dev', origin('https://git.example.com/org/shop.git'));
    assert.equal(loc.kind, 'clone', url);
    assert.equal(loc.chosenBy, 'Environment dev: the checkout itself', url);
    assert.equal(loc.url, undefined);
  }
});

test('a network repoURL is a remote; publishURL is where pushes go', async () => {
  const { at } = await project(
    environment('dev', undefined, 'state: {repository: {repoURL: "https://git.example.com/state.git"}}'),
    environment('qa', undefined, 'state: {repository: {repoURL: "https://git.example.com/state.git", publishURL: "ssh://git@git.example.com/state.git"}}'),
  );
  const dev = at('dev');
  assert.equal(dev.kind, 'remote');
  assert.equal(dev.url, 'https://git.example.com/state.git');
  assert.equal(dev.pushURL, 'https://git.example.com/state.git');
  assert.equal(dev.chosenBy, 'Environment dev');
  const qa = at('qa');
  assert.equal(qa.kind, 'remote');
  assert.equal(qa.url, 'https://git.example.com/state.git');
  assert.equal(qa.pushURL, 'ssh://git@git.example.com/state.git');
});

test('a local repoURL with the same local publishURL (in another form) stays a path', async () => {
  const { at } = await project(environment('dev', undefined, 'state: {repository: {repoURL: "file:///srv/state.git", publishURL: /srv/state.git}}'));
  const loc = at('dev');
  assert.equal(loc.kind, 'path');
  assert.equal(loc.pushURL, 'file:///srv/state.git');
});

test('a local repoURL with a different publishURL is not opened directly: it is a remote with both URLs', async () => {
  const { at } = await project(
    environment('dev', undefined, 'state: {repository: {repoURL: "file:///srv/a.git", publishURL: /srv/b.git}}'),
    environment('qa', undefined, 'state: {repository: {repoURL: "file:///srv/a.git", publishURL: "https://git.example.com/a.git"}}'),
  );
  const dev = at('dev');
  assert.equal(dev.kind, 'remote');
  assert.equal(dev.url, 'file:///srv/a.git');
  assert.equal(dev.pushURL, '/srv/b.git');
  assert.equal(dev.localPath, undefined);
  const qa = at('qa');
  assert.equal(qa.kind, 'remote');
  assert.equal(qa.pushURL, 'https://git.example.com/a.git');
});

test('state.repositoryRef reads the GitRepository url and pushes to its publishURL', async () => {
  const { at } = await project(
    environment('dev', undefined, 'state: {repositoryRef: state}'),
    environment('qa', undefined, 'state: {repositoryRef: plain}'),
    resource('GitRepository', 'state', 'url: https://git.example.com/state.git', 'publishURL: ssh://git@git.example.com/state.git'),
    resource('GitRepository', 'plain', 'url: file:///srv/plain.git'),
  );
  const dev = at('dev', origin('https://git.example.com/org/shop.git'));
  assert.equal(dev.kind, 'remote');
  assert.equal(dev.url, 'https://git.example.com/state.git');
  assert.equal(dev.pushURL, 'ssh://git@git.example.com/state.git');
  assert.equal(dev.chosenBy, 'Environment dev (GitRepository state)');
  const qa = at('qa');
  assert.equal(qa.kind, 'path');
  assert.equal(qa.url, 'file:///srv/plain.git');
  assert.equal(qa.pushURL, 'file:///srv/plain.git');
  assert.equal(qa.localPath, '/srv/plain.git');
  assert.equal(qa.chosenBy, 'Environment qa (GitRepository plain)');
});

test('a GitRepository naming the checkout itself is the clone', async () => {
  const { at } = await project(environment('dev', undefined, 'state: {repositoryRef: self}'), resource('GitRepository', 'self', `url: file://${WORK_TREE}`));
  const loc = at('dev');
  assert.equal(loc.kind, 'clone');
  assert.equal(loc.chosenBy, 'Environment dev (GitRepository self): the checkout itself');
});

test('an unknown repositoryRef (only possible in code) throws', () => {
  const { p, env } = handProject({ state: { repositoryRef: 'nope' } });
  assert.throws(() => resolveLocation(p, env, noOrigin), /unknown GitRepository nope/);
});

// --- EnvironmentGroup shared state -----------------------------------------------------------

test('a group selecting the environment by labels gives it its shared repository and fields', async () => {
  const { at } = await project(
    environment('dev', '{stage: development}'),
    environment('prod', '{stage: production}'),
    resource('GitRepository', 'state', 'url: https://git.example.com/state.git'),
    resource(
      'EnvironmentGroup',
      'development',
      'selector: {matchLabels: {stage: development}}',
      'shared: {state: {repositoryRef: state, desiredRef: shared/desired, observedRef: refs/heads/shared/observed, path: envs/, coordinationRefPrefix: refs/heads/nyl-run/}}',
    ),
  );
  const dev = at('dev', origin('https://git.example.com/org/shop.git'));
  assert.deepEqual(dev, {
    environment: 'dev',
    kind: 'remote',
    url: 'https://git.example.com/state.git',
    pushURL: 'https://git.example.com/state.git',
    desiredRef: 'refs/heads/shared/desired',
    observedRef: 'refs/heads/shared/observed',
    statePath: 'envs',
    coordinationPrefix: 'refs/heads/nyl-run/',
    chosenBy: 'EnvironmentGroup development (GitRepository state)',
  });
  // prod is not selected: the checkout's origin and every default.
  const prod = at('prod', origin('https://git.example.com/org/shop.git'));
  assert.equal(prod.kind, 'remote');
  assert.equal(prod.url, 'https://git.example.com/org/shop.git');
  assert.equal(prod.chosenBy, "the checkout's origin");
  assert.equal(prod.desiredRef, 'refs/heads/nyl/prod/desired');
  assert.equal(prod.coordinationPrefix, 'refs/nyl/');
});

test('a label selector needs every label with the same value', async () => {
  const { at } = await project(
    environment('dev', '{stage: development, region: eu}'),
    environment('qa', '{stage: development}'),
    resource(
      'EnvironmentGroup',
      'eu',
      'selector: {matchLabels: {stage: development, region: eu}}',
      'shared: {state: {repository: {repoURL: "file:///srv/eu.git"}}}',
    ),
  );
  assert.equal(at('dev').chosenBy, 'EnvironmentGroup eu');
  assert.equal(at('dev').localPath, '/srv/eu.git');
  assert.equal(at('qa').kind, 'clone');
});

test('a group selecting the environment by its environments list', async () => {
  const { at } = await project(
    environment('dev', '{stage: development}'),
    environment('qa'),
    resource(
      'EnvironmentGroup',
      'listed',
      'environments: [qa]',
      'shared: {state: {repository: {repoURL: "https://git.example.com/s.git", publishURL: "https://push.example.com/s.git"}}}',
    ),
  );
  const qa = at('qa');
  assert.equal(qa.kind, 'remote');
  assert.equal(qa.url, 'https://git.example.com/s.git');
  assert.equal(qa.pushURL, 'https://push.example.com/s.git');
  assert.equal(qa.chosenBy, 'EnvironmentGroup listed');
  assert.equal(at('dev').kind, 'clone');
});

test('a group without shared state does not choose anything', async () => {
  const { at } = await project(environment('dev'), resource('EnvironmentGroup', 'all', 'selector: {matchLabels: {}}'));
  assert.equal(at('dev').chosenBy, 'the clone itself (no remote)');
});

test("the Environment's own repository wins over a group's", async () => {
  const { at } = await project(
    environment('dev', undefined, 'state: {repository: {repoURL: "file:///srv/own.git"}}'),
    resource('EnvironmentGroup', 'all', 'selector: {matchLabels: {}}', 'shared: {state: {repository: {repoURL: "file:///srv/group.git"}}}'),
  );
  const loc = at('dev');
  assert.equal(loc.localPath, '/srv/own.git');
  assert.equal(loc.chosenBy, 'Environment dev');
});

test("a member naming its own repository still takes the group's shared fields it does not set", async () => {
  const { at } = await project(
    environment('dev', undefined, 'state: {repository: {repoURL: "file:///srv/own.git"}, observedRef: mine/observed}'),
    resource(
      'EnvironmentGroup',
      'all',
      'selector: {matchLabels: {}}',
      'shared: {state: {repository: {repoURL: "file:///srv/group.git"}, desiredRef: group/desired, observedRef: group/observed, path: group, coordinationRefPrefix: refs/group/}}',
    ),
  );
  const loc = at('dev');
  assert.equal(loc.localPath, '/srv/own.git');
  assert.equal(loc.chosenBy, 'Environment dev');
  assert.equal(loc.desiredRef, 'refs/heads/group/desired');
  assert.equal(loc.observedRef, 'refs/heads/mine/observed');
  assert.equal(loc.statePath, 'group');
  assert.equal(loc.coordinationPrefix, 'refs/group/');
});

test("a member's own repository and a group's shared ref that is the member's source branch: refused at the group's field", async () => {
  const { p } = await project(
    environment('dev', undefined, 'source: {ref: stable}', 'state: {repository: {repoURL: "file:///srv/own.git"}}'),
    resource('EnvironmentGroup', 'all', 'selector: {matchLabels: {}}', 'shared: {state: {desiredRef: stable}}'),
  );
  assert.throws(
    () => resolveLocation(p, p.environments.get('dev'), noOrigin),
    (e) => {
      assert.match(JSON.stringify(e), /shared\/state\/desiredRef/);
      return true;
    },
  );
});

test('of several groups with shared state, the first by name is used', async () => {
  const { at } = await project(
    environment('dev'),
    resource('EnvironmentGroup', 'zeta', 'selector: {matchLabels: {}}', 'shared: {state: {repository: {repoURL: "file:///srv/zeta.git"}}}'),
    resource('EnvironmentGroup', 'alpha', 'environments: [dev]', 'shared: {state: {repository: {repoURL: "file:///srv/alpha.git"}}}'),
  );
  const loc = at('dev');
  assert.equal(loc.localPath, '/srv/alpha.git');
  assert.equal(loc.chosenBy, 'EnvironmentGroup alpha');
});

test("the Environment's own ref names and path override the group's shared ones", async () => {
  const { at } = await project(
    environment('dev', undefined, 'state: {desiredRef: mine/desired, path: mine, coordinationRefPrefix: refs/mine/}'),
    resource(
      'EnvironmentGroup',
      'all',
      'selector: {matchLabels: {}}',
      'shared: {state: {repository: {repoURL: "file:///srv/group.git"}, desiredRef: group/desired, observedRef: group/observed, path: group, coordinationRefPrefix: refs/group/}}',
    ),
  );
  const loc = at('dev');
  assert.equal(loc.localPath, '/srv/group.git');
  assert.equal(loc.chosenBy, 'EnvironmentGroup all');
  assert.equal(loc.desiredRef, 'refs/heads/mine/desired');
  assert.equal(loc.observedRef, 'refs/heads/group/observed');
  assert.equal(loc.statePath, 'mine');
  assert.equal(loc.coordinationPrefix, 'refs/mine/');
});

test('a group sharing only ref fields: the fields apply, the repository is still origin or the clone', async () => {
  const { at } = await project(
    environment('dev'),
    resource('EnvironmentGroup', 'all', 'selector: {matchLabels: {}}', 'shared: {state: {coordinationRefPrefix: refs/heads/nyl-run/, path: envs/dev}}'),
  );
  const clone = at('dev');
  assert.equal(clone.kind, 'clone');
  assert.equal(clone.coordinationPrefix, 'refs/heads/nyl-run/');
  assert.equal(clone.statePath, 'envs/dev');
  const remote = at('dev', origin('https://git.example.com/org/shop.git'));
  assert.equal(remote.kind, 'remote');
  assert.equal(remote.chosenBy, "the checkout's origin");
  assert.equal(remote.coordinationPrefix, 'refs/heads/nyl-run/');
});

// --- refs, path and prefix ------------------------------------------------------------------

test('explicit refs: branch names get refs/heads/, full ref names are kept', async () => {
  const { at } = await project(
    environment('dev', undefined, 'state: {desiredRef: state/dev-desired, observedRef: refs/heads/state/dev-observed}'),
    environment('qa', undefined, 'state: {desiredRef: refs/nyl-state/qa/desired, observedRef: observed}'),
  );
  assert.equal(at('dev').desiredRef, 'refs/heads/state/dev-desired');
  assert.equal(at('dev').observedRef, 'refs/heads/state/dev-observed');
  assert.equal(at('qa').desiredRef, 'refs/nyl-state/qa/desired');
  assert.equal(at('qa').observedRef, 'refs/heads/observed');
});

test('statePath drops leading and trailing slashes', async () => {
  const { at } = await project(environment('dev', undefined, 'state: {path: envs/dev/}'));
  assert.equal(at('dev').statePath, 'envs/dev');
  for (const [path, expected] of [
    ['/envs/dev/', 'envs/dev'],
    ['//a//', 'a'],
    ['/', ''],
    ['a/b', 'a/b'],
  ]) {
    const { p, env } = handProject({ state: { path } });
    assert.equal(resolveLocation(p, env, noOrigin).statePath, expected, path);
  }
});

test('coordinationRefPrefix: default refs/nyl/, or the branch prefix refs/heads/nyl-run/', async () => {
  const { at } = await project(environment('dev'), environment('qa', undefined, 'state: {coordinationRefPrefix: refs/heads/nyl-run/}'));
  const dev = at('dev');
  assert.equal(dev.coordinationPrefix, 'refs/nyl/');
  assert.equal(leaseRef(dev), 'refs/nyl/dev/lease');
  assert.equal(runsPrefix(dev), 'refs/nyl/dev/runs/');
  assert.equal(signalsPrefix(dev), 'refs/nyl/dev/signals/');
  assert.equal(evidencePrefix(dev), 'refs/nyl/dev/evidence/');
  assert.equal(coordinationNamespace(dev), 'refs/nyl/dev/');
  const qa = at('qa');
  assert.equal(qa.coordinationPrefix, 'refs/heads/nyl-run/');
  assert.equal(leaseRef(qa), 'refs/heads/nyl-run/qa/lease');
  assert.equal(runsPrefix(qa), 'refs/heads/nyl-run/qa/runs/');
  assert.equal(signalsPrefix(qa), 'refs/heads/nyl-run/qa/signals/');
  assert.equal(evidencePrefix(qa), 'refs/heads/nyl-run/qa/evidence/');
});

test('statePathOf joins the state path, or names the file at the root', async () => {
  const { at } = await project(environment('dev'), environment('qa', undefined, 'state: {path: envs/qa}'));
  assert.equal(statePathOf(at('dev'), 'state.yaml'), 'state.yaml');
  assert.equal(statePathOf(at('qa'), 'units/db.yaml'), 'envs/qa/units/db.yaml');
});

// --- localPathOf and repositoryIdentity ------------------------------------------------------

test('localPathOf: file:// URLs, absolute and ./ ../ paths are local; network URLs and scp syntax are not', () => {
  assert.equal(localPathOf('file:///srv/a.git', '/base'), '/srv/a.git');
  assert.equal(localPathOf('file:///srv/a%20b.git', '/base'), '/srv/a b.git');
  assert.equal(localPathOf('/srv/a.git', '/base'), '/srv/a.git');
  assert.equal(localPathOf('./a.git', '/base/x'), '/base/x/a.git');
  assert.equal(localPathOf('../a.git', '/base/x'), '/base/a.git');
  for (const url of ['https://h/a.git', 'ssh://git@h/a.git', 'git://h/a.git', 'git+ssh://h/a', 'git@h:org/a.git', 'HTTPS://H/a']) {
    assert.equal(localPathOf(url, '/base'), undefined, url);
  }
});

test('repositoryIdentity: lower-case scheme and host, no user, no trailing / or .git; the path keeps its case', () => {
  const id = (url) => repositoryIdentity(url, '/base');
  assert.equal(id('https://GitHub.com/Org/Repo.git'), 'https://github.com/Org/Repo');
  assert.equal(id('HTTPS://github.com/Org/Repo/'), 'https://github.com/Org/Repo');
  assert.equal(id('https://alice@github.com/Org/Repo.git'), 'https://github.com/Org/Repo');
  assert.equal(id('https://alice:secret@GITHUB.com/Org/Repo.git/'), 'https://github.com/Org/Repo');
  assert.equal(id('ssh://git@Git.Example.com:2222/org/repo.git'), 'ssh://git.example.com:2222/org/repo');
  assert.equal(id(' https://github.com/org/repo// '), 'https://github.com/org/repo');
  assert.notEqual(id('https://github.com/org/Repo'), id('https://github.com/org/repo'));
  // All spellings of one repository compare equal.
  const same = ['https://github.com/org/repo', 'https://github.com/org/repo.git', 'https://GitHub.com/org/repo/', 'https://bot@github.com/org/repo.git/'];
  assert.equal(new Set(same.map(id)).size, 1);
});

test('repositoryIdentity of local repositories: one file:// identity for every spelling', () => {
  const id = (url) => repositoryIdentity(url, '/work/checkout');
  assert.equal(id('/srv/state.git'), 'file:///srv/state');
  assert.equal(id('file:///srv/state.git'), 'file:///srv/state');
  assert.equal(id('file:///srv/state.git/'), 'file:///srv/state');
  assert.equal(id('/srv/state'), 'file:///srv/state');
  assert.equal(id('/srv/x/../state.git'), 'file:///srv/state');
  assert.equal(id('./state.git'), 'file:///work/checkout/state');
  assert.equal(id('../state.git'), 'file:///work/state');
});

test('repositoryIdentity of scp-like URLs ignores the case of the host and the user', () => {
  const id = (url) => repositoryIdentity(url, '/base');
  assert.equal(id('git@GitHub.com:org/repo.git'), id('git@github.com:org/repo'));
  assert.equal(id('deploy@github.com:org/repo.git'), id('git@github.com:org/repo.git'));
});

test('a file:// URL with a host (a typo for file:///) is not a raw TypeError', async () => {
  const { at } = await project(environment('dev', undefined, 'state: {repository: {repoURL: "file://srv/state.git"}}'));
  try {
    const loc = at('dev');
    assert.ok(['path', 'remote'].includes(loc.kind));
  } catch (e) {
    assert.equal(e.name, 'NylError', `${e.name}: ${e.message}`);
  }
  assert.doesNotThrow(() => repositoryIdentity('file://srv/state.git', '/base'));
});

// --- state refs that are source branches ----------------------------------------------------

/** The NYL-SOURCE-INVALID diagnostic resolving the location throws, or undefined. */
function refusal(fn) {
  try {
    fn();
  } catch (e) {
    return e.diagnostics?.[0];
  }
  return undefined;
}

test("a state ref that is the branch source.ref names, or the checkout's current branch, is refused at its line", async () => {
  const { at } = await project(
    environment('dev', undefined, 'source: {ref: main}', 'state:', '  desiredRef: main'),
    environment('qa', undefined, 'source: {ref: origin/release}', 'state: {observedRef: release}'),
    environment('ci', undefined, 'source: {ref: refs/heads/nyl/ci/desired}'),
    environment('pr', undefined, 'state: {desiredRef: feature}'),
    environment('ok', undefined, 'source: {ref: main}'),
  );
  const dev = refusal(() => at('dev'));
  assert.equal(dev?.code, 'NYL-SOURCE-INVALID');
  assert.deepEqual([dev.location.file, dev.location.line, dev.location.pointer], ['nyl.yaml', 12, '/spec/state/desiredRef']);
  assert.match(dev.message, /refs\/heads\/main .*source\.ref/);
  assert.match(dev.fix, /nyl\/dev\/desired/);

  const qa = refusal(() => at('qa'));
  assert.equal(qa?.location.pointer, '/spec/state/observedRef', "origin/release renders origin's release branch");
  const ci = refusal(() => at('ci'));
  assert.deepEqual([ci?.location.line, ci?.location.pointer], [25, '/spec/source/ref'], 'the default ref, clashing with source.ref');

  const pr = refusal(() => at('pr', { workTree: WORK_TREE, currentBranch: 'refs/heads/feature' }));
  assert.equal(pr?.code, 'NYL-SOURCE-INVALID');
  assert.match(pr.message, /checked out/);
  assert.equal(pr.location.pointer, '/spec/state/desiredRef');

  const checkedOutDefault = refusal(() => at('ok', { workTree: WORK_TREE, currentBranch: 'refs/heads/nyl/ok/observed' }));
  assert.match(checkedOutDefault?.message ?? '', /refs\/heads\/nyl\/ok\/observed .*checked out/);
  assert.match(checkedOutDefault.fix, /git switch/);

  assert.equal(at('ok', { workTree: WORK_TREE, currentBranch: 'refs/heads/main' }).desiredRef, 'refs/heads/nyl/ok/desired');
  assert.equal(at('pr', { workTree: WORK_TREE, currentBranch: 'refs/heads/main' }).desiredRef, 'refs/heads/feature');
});

test("a group's shared state ref that is the member's source branch is refused at the group's field", async () => {
  const { at } = await project(
    environment('dev', '{stage: dev}', 'source: {ref: stable}'),
    resource('EnvironmentGroup', 'all', 'selector: {matchLabels: {stage: dev}}', 'shared:', '  state:', '    desiredRef: stable'),
  );
  const d = refusal(() => at('dev'));
  assert.equal(d?.code, 'NYL-SOURCE-INVALID');
  assert.equal(d.location.pointer, '/spec/shared/state/desiredRef');
  assert.equal(d.location.line, 19);
});

// --- state never crosses environments: one ref name, two repositories or one directory -----------

/** The line of the first line of nyl.yaml (as project() writes it) that contains `needle`. */
function lineOf(docs, needle) {
  return (
    documents(resource('Project', 'p'), ...docs)
      .split('\n')
      .findIndex((l) => l.includes(needle)) + 1
  );
}

const sharedNames = (group = 'shared', ...more) =>
  resource(
    'EnvironmentGroup',
    group,
    'environments: [dev, stg]',
    'shared:',
    '  state:',
    '    desiredRef: nyl/shared/desired',
    '    observedRef: nyl/shared/observed',
    ...more,
  );

test('a group lending two members its ref names, each member in its own repository: both refused at the shared field', async () => {
  const docs = [
    sharedNames(),
    environment('dev', undefined, 'state: {repository: {repoURL: "file:///srv/a.git"}}'),
    environment('stg', undefined, 'state: {repository: {repoURL: "file:///srv/b.git"}}'),
  ];
  const { at } = await project(...docs);
  for (const [env, other] of [
    ['dev', 'stg'],
    ['stg', 'dev'],
  ]) {
    const d = refusal(() => at(env));
    assert.equal(d?.code, 'NYL-SOURCE-INVALID', env);
    assert.deepEqual(
      [d.location.file, d.location.line, d.location.pointer],
      ['nyl.yaml', lineOf(docs, 'desiredRef: nyl/shared/desired'), '/spec/shared/state/desiredRef'],
    );
    assert.match(
      d.message,
      new RegExp(`refs/heads/nyl/shared/desired of environment ${env} is also the desired state ref of environment ${other}.*another repository`),
    );
    assert.match(
      d.fix,
      /^remove desiredRef from spec\.shared\.state of EnvironmentGroup shared, so that each member gets a ref of its own \(nyl\/<env>\/desired\)/,
    );
    assert.match(d.fix, new RegExp(`spec\\.state\\.desiredRef of ${env} to one such as nyl/${env}/desired`));
  }
});

test('one repository, however spelled, with a directory per environment shares the names; the same directory does not', async () => {
  const repo = (url) => `state: {repository: {repoURL: "${url}"}, path: PATH}`;
  const shared = await project(
    sharedNames(),
    environment('dev', undefined, repo('file:///srv/s.git').replace('PATH', 'envs/dev')),
    environment('stg', undefined, repo('/srv/s').replace('PATH', 'envs/stg')),
  );
  assert.equal(shared.at('dev').desiredRef, 'refs/heads/nyl/shared/desired');
  assert.equal(shared.at('stg').statePath, 'envs/stg');
  const docs = [sharedNames('shared', '    repository: {repoURL: "https://git.example.com/s.git"}'), environment('dev'), environment('stg')];
  const { at } = await project(...docs);
  const d = refusal(() => at('stg'));
  assert.equal(d?.code, 'NYL-SOURCE-INVALID');
  assert.equal(d.location.pointer, '/spec/shared/state/desiredRef');
  assert.match(d.message, /in the same repository and the same directory \(the root of the tree\): both would keep their state\.yaml there/);
  assert.match(d.fix, /or give each environment a state\.path of its own$/);
});

test("the checkout's origin is a repository like a named one: the same identity shares, the clone itself does not", async () => {
  const docs = [
    resource('EnvironmentGroup', 'shared', 'environments: [dev, stg]', 'shared: {state: {desiredRef: nyl/shared/desired, observedRef: nyl/shared/observed}}'),
    environment('dev', undefined, 'state: {path: envs/dev}'),
    environment('stg', undefined, 'state: {repository: {repoURL: "https://git.example.com/org/shop.git"}, path: envs/stg}'),
  ];
  const { at } = await project(...docs);
  assert.equal(at('dev', origin('https://GIT.example.com/org/shop')).kind, 'remote', "dev's repository is origin, stg's the same");
  assert.equal(at('stg', origin('https://GIT.example.com/org/shop')).kind, 'remote');
  const d = refusal(() => at('dev'));
  assert.equal(d?.code, 'NYL-SOURCE-INVALID', "without origin dev's state is the clone's own branches");
  assert.match(d.message, /another repository \(the clone itself and https:\/\/git\.example\.com\/org\/shop\.git\)/);
});

test("a desired ref that is another environment's observed ref, or its default: refused at the field that names it", async () => {
  const docs = [
    environment('dev', undefined, 'state: {repository: {repoURL: "file:///srv/a.git"}, observedRef: handover}'),
    environment('stg', undefined, 'state: {repository: {repoURL: "file:///srv/b.git"}, desiredRef: handover}'),
    environment('qa', undefined, 'state: {desiredRef: nyl/prod/desired}'),
    environment('prod', undefined, 'state: {repository: {repoURL: "file:///srv/a.git"}}'),
  ];
  const { at } = await project(...docs);
  const dev = refusal(() => at('dev'));
  assert.deepEqual([dev?.location.line, dev?.location.pointer], [lineOf(docs, 'observedRef: handover'), '/spec/state/observedRef']);
  assert.match(
    dev.message,
    /the observed state ref refs\/heads\/handover of environment dev is also the desired state ref of environment stg \(set at nyl\.yaml:\d+\)/,
  );
  assert.match(
    dev.fix,
    /^set spec\.state\.observedRef of dev to a name of its own, such as nyl\/dev\/observed \(the default, when the field is left out\); or keep both environments' state in one repository/,
  );
  // prod keeps its default; qa names it: refused at qa's field, whichever is opened.
  for (const env of ['prod', 'qa']) {
    const d = refusal(() => at(env));
    assert.deepEqual([d?.location.line, d?.location.pointer], [lineOf(docs, 'desiredRef: nyl/prod/desired'), '/spec/state/desiredRef'], env);
    assert.match(d.fix, /^set spec\.state\.desiredRef of qa to a name of its own, such as nyl\/qa\/desired/);
  }
});

test("templates: ref names without the instance in them are every instance's, refused at the template's field unless each instance has its directory", async () => {
  const template = (state) => resource('EnvironmentTemplate', 'preview', 'namePattern: pr-*', `environment: {state: ${state}}`);
  const fixed = '{repository: {repoURL: "file:///srv/p.git"}, desiredRef: previews/desired, observedRef: previews/observed}';
  const perDirectory = `${fixed.slice(0, -1)}, path: "previews/\${{ instance.name }}"}`;
  const docs = [environment('dev'), template(fixed)];
  const { p } = await project(...docs);
  const d = refusal(() => resolveLocation(p, resolveEnvironment(p, 'pr-1'), noOrigin));
  assert.equal(d?.code, 'NYL-SOURCE-INVALID');
  assert.deepEqual([d.location.line, d.location.pointer], [lineOf(docs, 'desiredRef: previews/desired'), '/spec/environment/state/desiredRef']);
  assert.match(d.message, /of environment pr-1 is also the desired state ref of the other instances of EnvironmentTemplate preview/);
  assert.match(
    d.fix,
    /^put the instance's name in spec\.environment\.state\.desiredRef of EnvironmentTemplate preview, such as nyl\/\$\{\{ instance\.name \}\}\/desired/,
  );
  assert.equal(
    resolveLocation(p, p.environments.get('dev'), noOrigin).desiredRef,
    'refs/heads/nyl/dev/desired',
    'a declared environment with refs of its own is not concerned',
  );

  const perInstance = await project(environment('dev'), template(perDirectory));
  assert.equal(resolveLocation(perInstance.p, resolveEnvironment(perInstance.p, 'pr-1'), noOrigin).statePath, 'previews/pr-1');

  // A declared environment on a template's names in another repository: refused at its own field.
  const clash = [environment('dev', undefined, 'state: {desiredRef: previews/desired}'), template(perDirectory)];
  const declared = await project(...clash);
  const c = refusal(() => declared.at('dev'));
  assert.deepEqual([c?.location.line, c?.location.pointer], [lineOf(clash, 'desiredRef: previews/desired}'), '/spec/state/desiredRef']);
  assert.match(c.message, /the instances of EnvironmentTemplate preview/);
});

// --- state move: the old location --------------------------------------------------------------

test('state move: each option names the old location, defaulting to the configured value; --from takes a URL, a GitRepository or local', async () => {
  const { p, at } = await project(
    environment(
      'dev',
      undefined,
      'state: {repository: {repoURL: "git://h/new.git"}, desiredRef: renamed/dev/desired, coordinationRefPrefix: refs/heads/nyl-run/}',
    ),
    [
      'apiVersion: nyl.io/v1',
      'kind: GitRepository',
      'metadata: {name: old}',
      'spec: {url: "https://git.example.com/old.git", publishURL: "ssh://git@git.example.com/old.git"}',
    ],
  );
  const configured = at('dev');
  const moved = (options) => locationMovedFrom(p, configured, options, noOrigin);
  const same = moved({});
  assert.ok(sameLocation(same, configured, WORK_TREE), 'no option: the configured location itself');
  const renamed = moved({ desiredRef: 'nyl/dev/desired', coordinationRefs: 'refs/nyl/' });
  assert.deepEqual(
    [renamed.kind, renamed.url, renamed.desiredRef, renamed.observedRef, renamed.coordinationPrefix],
    ['remote', 'git://h/new.git', 'refs/heads/nyl/dev/desired', 'refs/heads/nyl/dev/observed', 'refs/nyl/'],
  );
  const named = moved({ from: 'old' });
  assert.deepEqual([named.kind, named.url, named.pushURL], ['remote', 'https://git.example.com/old.git', 'ssh://git@git.example.com/old.git']);
  const local = moved({ from: 'local' });
  assert.equal(local.kind, 'clone');
  assert.match(
    describeEnd(local),
    /^local \(desired refs\/heads\/renamed\/dev\/desired, observed refs\/heads\/nyl\/dev\/observed, coordination refs\/heads\/nyl-run\/\)$/,
  );
  const file = moved({ from: '/srv/state.git' });
  assert.deepEqual([file.kind, file.url], ['path', 'file:///srv/state.git']);
  assert.throws(
    () => moved({ coordinationRefs: 'refs/nyl' }),
    (e) => e.code === 'NYL-USAGE',
  );
});

test('state move: the same repository however its URL is spelled is the same location (a move of the prefix alone)', () => {
  const base = {
    environment: 'dev',
    desiredRef: 'refs/heads/nyl/dev/desired',
    observedRef: 'refs/heads/nyl/dev/observed',
    statePath: '',
    coordinationPrefix: 'refs/nyl/',
    chosenBy: '',
  };
  const a = { ...base, kind: 'remote', url: 'git://H/one.git', pushURL: 'git://H/one.git' };
  const b = { ...base, kind: 'remote', url: 'git://h/one', pushURL: 'git://h/one' };
  assert.ok(sameLocation(a, b, WORK_TREE));
  assert.ok(
    sameLocation(
      { ...base, kind: 'path', url: 'file:///srv/s.git', localPath: '/srv/s.git' },
      { ...base, kind: 'remote', url: '/srv/s.git/', pushURL: '/srv/s.git/' },
      WORK_TREE,
    ),
  );
  assert.equal(sameLocation(a, { ...b, coordinationPrefix: 'refs/heads/nyl-run/' }, WORK_TREE), false);
  assert.equal(sameLocation(a, { ...b, kind: 'clone' }, WORK_TREE), false);
});
