// nyl ui's server, routes and pages in-process, over an in-memory view source (the port of
// src/ui/source.ts): only GET and HEAD (HEAD as GET without the body), only loopback Host values, no other site's
// requests (fetch metadata, else a foreign Origin), unknown runs as 404 pages, nothing served outside the assets,
// every value escaped, unknown environments as pages, reads one at a time, and the event stream
// that tells pages to refresh when the version of the state refs changes.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startUiServer, foreignRequest, serialized } from '../../dist/ui/server.js';
import { hostAllowed, hostPolicyOf, isLoopbackAddress, parseHost } from '../../dist/ui/host-policy.js';
import { VersionCache } from '../../dist/ui/version-cache.js';
import { hostname } from 'node:os';
import { routeOf } from '../../dist/ui/routes.js';
import { escapeHtml, html, render } from '../../dist/ui/html.js';
import { NylError, diagnostic } from '../../dist/errors/diagnostic.js';

const HOSTILE = '<img src=x onerror="window.pwned=1">&\'';
/** Report fields every report has: new arrays each time, so a test may add to one report's diagnostics. */
const base = () => ({ apiVersion: 'nyl.io/v1', formatVersion: 1, errors: [], warnings: [], notes: [], details: {} });

function statusOf(env, units) {
  return { ...base(), kind: 'StatusReport', environment: env, units: Object.fromEntries(units.map((u) => [u.name, u])), unitOrder: units.map((u) => u.name) };
}

const unitStatus = (name, state, more = {}) => ({ name, kind: 'Command', state, receipt: 'none', detail: '', ...more });

const entry = {
  operation: 'reconcile',
  at: '2026-12-02T07:57:28Z',
  headline: `nyl: reconcile dev: ${HOSTILE}`,
  by: HOSTILE,
  reason: HOSTILE,
  run: 'run-1',
  units: { api: 'executed', [HOSTILE]: 'failed' },
  body: {},
};

/** The fake view source: fixed reports, a settable version, and a record of the calls. */
function fakeSource() {
  const calls = [];
  let active = 0;
  const source = {
    versionValue: 'v1',
    calls,
    maxActive: 0,
    fail: undefined,
    async track(name, value) {
      calls.push(name);
      active++;
      source.maxActive = Math.max(source.maxActive, active);
      await new Promise((r) => setTimeout(r, 5));
      active--;
      if (source.fail) throw source.fail;
      return value;
    },
    overview: () =>
      source.track('overview', {
        project: 'shop',
        patterns: ['pr-*'],
        environments: [{ name: 'dev', labels: { stage: HOSTILE }, status: statusOf('dev', [unitStatus('api', 'failed')]), last: entry, errors: [] }],
        instances: [
          {
            name: 'pr-7',
            labels: {},
            status: statusOf('pr-7', [unitStatus('api', 'current'), unitStatus('db', 'current'), unitStatus('web', 'held')]),
            errors: [],
          },
        ],
        errors: [diagnostic('NYL-STATE-UNAVAILABLE', 'error', `cannot list ${HOSTILE}`)],
      }),
    environment: (env) => {
      if (env !== 'dev')
        return source.track('environment').then(() => {
          throw new NylError(diagnostic('NYL-ENVIRONMENT-UNKNOWN', 'error', `no environment ${env}`, { env, known: ['dev'], patterns: [] }));
        });
      const status = statusOf('dev', [
        unitStatus('db', 'current', { action: 'current', reason: 'receipt-current' }),
        unitStatus('api', 'awaiting-dependencies', {
          action: 'wait',
          reason: 'upstream-pending',
          detail: `/env/DB waits for db ${HOSTILE}`,
          waits: [{ pointer: '/env/DB', unit: 'db', reason: 'no-current-receipt' }],
        }),
        unitStatus(HOSTILE, 'held', { action: 'held', reason: 'held', hold: { by: HOSTILE, reason: HOSTILE, since: '2026-12-02T07:58:05Z' } }),
      ]);
      const graph = {
        ...base(),
        kind: 'GraphReport',
        operation: 'graph',
        environment: 'dev',
        nodes: status.unitOrder.map((n) => ({ name: n, kind: 'Command', state: status.units[n].state, detail: '' })),
        edges: [{ from: 'db', to: 'api', via: 'reference', output: 'url', pointer: HOSTILE }],
      };
      return source.track('environment', {
        status,
        graph,
        recent: { ...base(), kind: 'LogReport', operation: 'log', environment: 'dev', entries: [entry], truncated: false },
      });
    },
    unit: (env, unit) =>
      source.track('unit', {
        status: statusOf(env, [
          unitStatus(unit, 'failed', {
            condition: {
              type: 'failed',
              retryable: false,
              reason: HOSTILE,
              run: 'run-1',
              since: '2026-12-02T07:58:05Z',
              ...(unit === 'migrate' ? { reason: 'command exited with code 3' } : {}),
            },
          }),
        ]),
        show: {
          ...base(),
          kind: 'ShowReport',
          operation: 'show',
          environment: env,
          unit,
          receipt: {
            run: 'run-1',
            executionKey: 'sha256:abc',
            finishedAt: '2026-12-02T07:57:28Z',
            outputs: { url: HOSTILE },
            sensitiveOutputs: { password: { sha256: `sha256:${'f'.repeat(64)}` } },
          },
          lastRuns: [entry],
          desiredDocument: {
            note: HOSTILE,
            reads: { secrets: [{ pointer: '/env/T', unit: 'db', output: 'password', sha256: `hmac-sha256:0123456789abcdef:${'e'.repeat(64)}` }] },
          },
          observedDocument: {
            receipt: { run: 'run-1', sensitiveOutputs: { password: { sha256: `sha256:${'d'.repeat(64)}` } } },
            // The last lines of output the failed execution left in state (the status report carries no output).
            ...(unit === 'migrate'
              ? { condition: { type: 'failed', run: 'run-1', output: ['applying 003_users.sql', `ERROR: relation "users" already exists ${HOSTILE}`] } }
              : {}),
          },
        },
        graph: {
          ...base(),
          kind: 'GraphReport',
          operation: 'graph',
          environment: env,
          nodes: [...new Set(['db', unit, 'web'])].map((n) => ({ name: n, kind: 'Command', state: n === unit ? 'failed' : 'current', detail: '' })),
          edges:
            unit !== 'api'
              ? []
              : [
                  { from: 'db', to: unit, via: 'reference', output: 'url', pointer: '/env/DB' },
                  { from: 'db', to: unit, via: 'dependsOn' },
                  { from: unit, to: 'web', via: 'dependsOn' },
                  { from: 'db', to: 'web', via: 'dependsOn' },
                ],
        },
      }),
    history: (env, limit) =>
      source.track(`history:${limit}`, { ...base(), kind: 'LogReport', operation: 'log', environment: env, entries: [entry], truncated: limit > 0 }),
    run: (env, run) => {
      const live = run === 'run-live';
      const lease = {
        status: 'live',
        run: 'run-live',
        operation: 'reconcile',
        holder: { name: HOSTILE, host: 'ci-7', pid: 42 },
        acquiredAt: '2026-12-02T08:00:00Z',
        deadline: '2026-12-02T08:02:00Z',
      };
      const status = statusOf(env, [
        unitStatus('api', 'running', { running: { run: 'run-live', startedAt: '2026-12-02T08:00:01Z' } }),
        unitStatus('db', 'current'),
      ]);
      if (live) status.lease = lease;
      // run-1 is the run of the history's entry; any other id names no operation.
      const entries = run === 'run-1' ? [entry] : [];
      return source.track('run', { log: { ...base(), kind: 'LogReport', operation: 'log', environment: env, entries, truncated: false }, entries, status });
    },
    version: (_env, _guard) => source.track('version', source.versionValue),
  };
  return source;
}

const servers = [];
after(() => Promise.all(servers.map((s) => s.close())));

async function serve(source = fakeSource(), pollMs = 50) {
  const logged = [];
  const server = await startUiServer(source, { host: '127.0.0.1', port: 0, pollMs, allowHosts: [], log: (l) => logged.push(l) });
  servers.push(server);
  return { server, source, logged, url: server.url };
}

/** A raw request, so that method and Host can be anything. */
function request(url, { method = 'GET', host, path = '/', headers = {} } = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request({ host: u.hostname, port: u.port, method, path, headers: { ...headers, ...(host ? { host } : {}) } }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('html escapes every interpolated value, in text and in attributes; fragments pass as they are', () => {
  assert.equal(escapeHtml(`<a href="x">'&`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;');
  const inner = html`<b>${HOSTILE}</b>`;
  assert.equal(
    render(html`<p title="${HOSTILE}">${inner}${[HOSTILE, 1, null, undefined, false]}</p>`),
    `<p title="${escapeHtml(HOSTILE)}"><b>${escapeHtml(HOSTILE)}</b>${escapeHtml(HOSTILE)}1</p>`,
  );
});

test('routes: each page, and anything else not found; a bad escape is a bad request', () => {
  assert.deepEqual(routeOf('/'), { page: 'environments' });
  assert.deepEqual(routeOf('/environments/pr%2F1/units/a%20b'), { page: 'unit', env: 'pr/1', unit: 'a b' });
  assert.deepEqual(routeOf('/environments/dev/history?all=1'), { page: 'history', env: 'dev', all: true });
  assert.deepEqual(routeOf('/environments/dev/runs/r1/'), { page: 'run', env: 'dev', run: 'r1' });
  assert.deepEqual(routeOf('/open?environment=pr-7'), { page: 'open', env: 'pr-7' });
  for (const p of ['/etc/passwd', '/environments', '/environments/dev/units', '/environments/dev/x/y', '/version/x', '/events', '/assets'])
    assert.equal(routeOf(p).page, 'not-found', p);
  assert.equal(routeOf('/environments/%E0%A4%A').page, 'bad-request');
  assert.equal(routeOf('http://elsewhere.example/').page, 'bad-request');
});

test('Host values answered: decided by the bound address; names only our own, IP literals only loopback ones on loopback', () => {
  const loop = hostPolicyOf({ address: '127.0.0.1', family: 'IPv4', port: 4780 }, []);
  assert.equal(loop.loopback, true);
  for (const h of ['127.0.0.1:4780', 'localhost:4780', 'LOCALHOST:4780', '[::1]:4780', '127.0.1.1:4780']) assert.equal(hostAllowed(h, loop), true, h);
  for (const h of ['127.0.0.1:80', '127.0.0.1', 'attacker.example:4780', '10.0.0.5:4780', `${hostname()}:4780`, '[::1', 'a:b:c', ''])
    assert.equal(hostAllowed(h, loop), false, h);
  assert.equal(hostAllowed(undefined, loop), false);
  assert.equal(hostPolicyOf({ address: '::ffff:127.0.0.1', family: 'IPv6', port: 1 }, []).loopback, true, 'an IPv4-mapped loopback address is loopback');
  assert.equal(hostPolicyOf({ address: '::1', family: 'IPv6', port: 1 }, []).loopback, true);
  for (const a of ['127.0.0.1', '127.1.2.3', '::1', '0:0:0:0:0:0:0:1', '::ffff:127.0.0.1']) assert.equal(isLoopbackAddress(a), true, a);
  for (const a of ['0.0.0.0', '::', '10.0.0.1', '128.0.0.1', '::2']) assert.equal(isLoopbackAddress(a), false, a);
  // Off loopback: IP literals (no name was resolved, so no rebinding), localhost, this machine's name, --allow-host; never another name.
  const wide = hostPolicyOf({ address: '0.0.0.0', family: 'IPv4', port: 80 }, ['nyl.example.com']);
  assert.equal(wide.loopback, false);
  for (const h of ['10.0.0.5', '10.0.0.5:80', 'localhost', `${hostname()}:80`, 'NYL.example.com', '[fe80::1]:80']) assert.equal(hostAllowed(h, wide), true, h);
  for (const h of ['attacker.example', 'example.com:80', '10.0.0.5:8080']) assert.equal(hostAllowed(h, wide), false, h);
  assert.deepEqual(parseHost('[::1]:80'), { host: '::1', port: 80, literal: true });
  assert.deepEqual(parseHost('Example.COM'), { host: 'example.com', port: 80, literal: false });
});

test("another site's page may open a page, never embed or fetch one (fetch metadata)", async () => {
  assert.equal(foreignRequest({}), false, 'no fetch metadata: curl, an old browser');
  assert.equal(foreignRequest({ 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' }), false);
  assert.equal(foreignRequest({ 'sec-fetch-site': 'none', 'sec-fetch-mode': 'navigate' }), false, 'typed in the address bar');
  assert.equal(
    foreignRequest({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }),
    false,
    'a link clicked in a chat',
  );
  assert.equal(foreignRequest({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' }), true);
  assert.equal(foreignRequest({ 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' }), true);
  assert.equal(foreignRequest({ 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' }), true);
  const { url, source } = await serve();
  const embedded = await request(url, {
    path: '/environments/pr-9',
    headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' },
  });
  assert.equal(embedded.status, 403);
  assert.deepEqual(source.calls, [], 'nothing was read for it');
});

test('a foreign Origin without fetch metadata (an older browser) is refused like a cross-site request; our own Origin is answered', async () => {
  const { url, source } = await serve();
  const host = new URL(url).host;
  assert.equal(foreignRequest({ host, origin: 'http://evil.example' }), true);
  assert.equal(foreignRequest({ host, origin: 'null' }), true, 'an opaque origin (a sandboxed frame, a file)');
  assert.equal(foreignRequest({ host, origin: `http://${host.replace(/:\d+$/, ':1')}` }), true, 'another port is another origin');
  assert.equal(foreignRequest({ host, origin: `http://${host}` }), false);
  assert.equal(foreignRequest({ host: `localhost:${new URL(url).port}`, origin: `http://LOCALHOST:${new URL(url).port}` }), false);
  const crossSite = await request(url, {
    path: '/environments/dev',
    headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'cors', 'sec-fetch-dest': 'empty' },
  });
  const evil = await request(url, { path: '/environments/dev', headers: { origin: 'http://evil.example' } });
  assert.equal(evil.status, 403);
  assert.deepEqual([evil.status, evil.body], [crossSite.status, crossSite.body], 'the same status and message');
  assert.deepEqual(source.calls, [], 'nothing was read for either');
  assert.equal((await request(url, { path: '/environments/dev', headers: { origin: `http://${host}` } })).status, 200);
});

test('HEAD is answered like GET: the same status and headers, no body', async () => {
  const { url } = await serve();
  for (const path of [
    '/',
    '/environments/dev',
    '/environments/dev/units/api',
    '/environments/dev/history',
    '/environments/dev/runs/run-1',
    '/assets/nyl.css',
    '/environments/nope',
    '/environments/dev/runs/nope',
    '/no/such/page',
    '/open?environment=dev',
  ]) {
    const get = await request(url, { path });
    const head = await request(url, { method: 'HEAD', path });
    assert.equal(head.status, get.status, path);
    assert.equal(head.body, '', path);
    const without = (h) => Object.fromEntries(Object.entries(h).filter(([k]) => k !== 'date'));
    assert.deepEqual(without(head.headers), without(get.headers), path);
    assert.equal(Number(get.headers['content-length']), Buffer.byteLength(get.body), `${path}: GET says its length`);
  }
});

test('an unknown run is a 404 page; a run that holds the lease but recorded nothing yet is a page', async () => {
  const { url } = await serve();
  const missing = await request(url, { path: '/environments/dev/runs/nope' });
  assert.equal(missing.status, 404);
  assert.match(missing.body, /No such run/);
  assert.doesNotMatch(missing.body, /nyl-state-version/);
  assert.equal((await request(url, { path: '/environments/dev/runs/run-live' })).status, 200);
  assert.equal((await request(url, { path: '/environments/dev/runs/run-1' })).status, 200);
});

test('only GET and HEAD are answered, and a foreign Host is refused, before anything is read', async () => {
  const { url, source } = await serve();
  for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    const r = await request(url, { method, path: '/environments/dev' });
    assert.equal(r.status, 405, method);
    assert.equal(r.headers.allow, 'GET, HEAD');
  }
  const rebound = await request(url, { host: `attacker.example:${new URL(url).port}`, path: '/environments/dev' });
  assert.equal(rebound.status, 403);
  assert.deepEqual(source.calls, []);
  assert.equal((await request(url, { host: `localhost:${new URL(url).port}`, path: '/' })).status, 200);
});

test('assets come from the fixed table; no path reaches a file', async () => {
  const { url } = await serve();
  const css = await request(url, { path: '/assets/nyl.css' });
  assert.equal(css.status, 200);
  assert.match(css.headers['content-type'], /^text\/css/);
  assert.match(css.body, /\.graph/);
  for (const path of [
    '/assets/../package.json',
    '/assets/%2e%2e%2fpackage.json',
    '/assets/..%2F..%2Fetc%2Fpasswd',
    '/etc/passwd',
    '/package.json',
    '/dist/ui/server.js',
    '//etc/passwd',
  ]) {
    const r = await request(url, { path });
    assert.ok(r.status === 404 || r.status === 400, `${path}: ${r.status}`);
    assert.doesNotMatch(r.body, /root:|"name": "nyl"/);
  }
  assert.equal((await request(url, { path: '/environments/%zz' })).status, 400);
});

test('every page escapes what it shows and carries the security headers', async () => {
  const { url } = await serve();
  for (const path of ['/', '/environments/dev', '/environments/dev/units/api', '/environments/dev/history', '/environments/dev/runs/run-1']) {
    const r = await request(url, { path });
    assert.equal(r.status, 200, path);
    assert.match(r.headers['content-type'], /^text\/html; charset=utf-8/);
    assert.match(r.headers['content-security-policy'], /default-src 'none'; script-src 'self'; style-src 'self'/);
    assert.equal(r.headers['x-content-type-options'], 'nosniff');
    assert.doesNotMatch(r.body, /<img|onerror="/, path);
    assert.ok(r.body.includes(escapeHtml(HOSTILE)), `${path} shows the value as text`);
    assert.doesNotMatch(r.body, /<script>|style="/, `${path}: no inline script or style`);
  }
});

test('pages show the planner reason, the links of the history, and sensitive outputs by digest only', async () => {
  const { url } = await serve();
  const env = (await request(url, { path: '/environments/dev' })).body;
  assert.match(env, /<tr data-unit="api" data-state="awaiting-dependencies">/);
  assert.match(env, /wait\/upstream-pending/);
  assert.match(env, /waits for <a href="\/environments\/dev\/units\/db">db<\/a>/);
  assert.match(env, /href="\/environments\/dev\/history"/);
  assert.match(env, /href="\/environments\/dev\/units\/%3Cimg%20src%3Dx%20onerror%3D%22window.pwned%3D1%22%3E%26&#39;"/);
  assert.match(env, /<svg class="graph"/);
  const unit = (await request(url, { path: '/environments/dev/units/api' })).body;
  assert.match(unit, /data-output="password" class="sensitive"/);
  assert.doesNotMatch(unit, /ffffffffffff/, 'no digest of a sensitive output on a page: state keeps it, a page shows it to more people');
  // Pins: the documents section printed the observed and desired documents whole, digests included.
  assert.doesNotMatch(unit, /eeeeeeeeeeee|dddddddddddd/, 'nor in the documents it shows');
  assert.match(unit, /&quot;password&quot;: &quot;\(sensitive\)&quot;|"password": "\(sensitive\)"/);
  assert.match(unit, /href="\/environments\/dev\/runs\/run-1"/);
  const all = await request(url, { path: '/environments/dev/history?all=1' });
  assert.doesNotMatch(all.body, /Show all/);
  assert.match((await request(url, { path: '/environments/dev/history' })).body, /href="\/environments\/dev\/history\?all=1">Show all/);
});

test('the first page: environments and the instances state holds, units counted by state, most urgent first', async () => {
  const { url } = await serve();
  const body = (await request(url, { path: '/' })).body;
  assert.match(body, /<tr data-environment="dev">/);
  assert.match(body, /<h2>Instances of <code>pr-\*<\/code><\/h2>/);
  const pr7 = /<tr data-environment="pr-7">[\s\S]*?<\/tr>/.exec(body)[0];
  assert.match(pr7, /state-held[^]*>1<[^]*state-current[^]*>2</);
  assert.match(body, /NYL-STATE-UNAVAILABLE/);
  assert.match(body, /<form method="get" action="\/open">/);
});

test("a run's page: the units its operations recorded; while it is live, the units it started and who holds the lease", async () => {
  const { url } = await serve();
  const done = (await request(url, { path: '/environments/dev/runs/run-1' })).body;
  assert.deepEqual(
    [...done.matchAll(/<tr data-unit="([^"]+)">.*?state-([a-z-]+)/g)].map((m) => `${m[1]}:${m[2]}`),
    ['api:executed', `${escapeHtml(HOSTILE)}:failed`],
  );
  assert.doesNotMatch(done, /holds the lease/);
  const live = (await request(url, { path: '/environments/dev/runs/run-live' })).body;
  assert.deepEqual(
    [...live.matchAll(/<tr data-unit="([^"]+)">.*?state-([a-z-]+)/g)].map((m) => `${m[1]}:${m[2]}`),
    ['api:running'],
  );
  assert.match(live, /This run holds the lease of dev: .*ci-7 \(pid 42\) for reconcile run <code>run-live<\/code>/);
  assert.doesNotMatch(live, /No transition commit/);
});

test('an unknown environment is a 404 page with its fix; /open redirects to the environment named', async () => {
  const { url } = await serve();
  const r = await request(url, { path: '/environments/nope' });
  assert.equal(r.status, 404);
  assert.match(r.body, /NYL-ENVIRONMENT-UNKNOWN/);
  assert.match(r.body, /class="fix"/);
  // Its refs are not watched, so a version would never match the stream's: the page would reload forever.
  assert.doesNotMatch(r.body, /nyl-state-version/);
  const open = await request(url, { path: '/open?environment=..%2Fx%20y' });
  assert.equal(open.status, 303);
  assert.equal(open.headers.location, '/environments/..%2Fx%20y');
});

test('a read that fails unexpectedly is a 500 whose error goes to the log; the server goes on', async () => {
  const { url, source, logged } = await serve();
  source.fail = new Error('disk on fire');
  const r = await request(url, { path: '/' });
  assert.equal(r.status, 500);
  assert.doesNotMatch(r.body, /disk on fire/);
  assert.match(r.headers['content-type'], /^text\/html/);
  assert.equal(r.headers.refresh, '10', 'an open tab tries again by itself');
  assert.doesNotMatch(r.body, /nyl-state-version/);
  assert.match(logged.join('\n'), /disk on fire/);
  source.fail = undefined;
  assert.equal((await request(url, { path: '/' })).status, 200);
});

test('reads run one at a time, however many pages are asked for at once', async () => {
  const { url, source } = await serve();
  await Promise.all(['/', '/environments/dev', '/environments/dev/history', '/', '/environments/dev/units/api'].map((path) => request(url, { path })));
  assert.equal(source.maxActive, 1);
  const order = [];
  const run = serialized();
  await Promise.all([
    run(async () => {
      await new Promise((r) => setTimeout(r, 20));
      order.push(1);
    }),
    run(async () => order.push(2)),
    run(async () => {
      throw new Error('x');
    }).catch(() => order.push('x')),
    run(async () => order.push(3)),
  ]);
  assert.deepEqual(order, [1, 2, 'x', 3]);
});

test('/version: the version a page was rendered at, read at most once per interval however many tabs ask; a new one after the refs moved', async () => {
  const { url, source } = await serve(fakeSource(), 150);
  const page = await request(url, { path: '/environments/dev' });
  assert.match(page.body, /<meta name="nyl-state-version" content="v1" data-environment="dev" data-poll-ms="150">/);
  const reads = () => source.calls.filter((c) => c === 'version').length;
  const before = reads();
  const answers = await Promise.all(Array.from({ length: 8 }, () => request(url, { path: '/version?environment=dev' })));
  assert.deepEqual(
    answers.map((a) => `${a.status} ${a.body}`),
    Array(8).fill('200 v1'),
  );
  assert.equal(reads(), before, 'the version the page was rendered at answers the tabs that ask within the interval');
  source.versionValue = 'v2';
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await request(url, { path: '/version?environment=dev' })).body, 'v2');
  assert.equal(reads(), before + 1);
  assert.match((await request(url, { path: '/' })).body, /<meta name="nyl-state-version" content="v2" data-poll-ms="150">/);
  source.fail = new Error('unreachable');
  await new Promise((r) => setTimeout(r, 200));
  assert.equal((await request(url, { path: '/version' })).status, 503);
});

test('the version cache: one read per key and interval, shared while under way, dropped when unused', async () => {
  let now = 0;
  const reads = [];
  const cache = new VersionCache(
    async (env) => {
      reads.push(env);
      return `v${reads.length}`;
    },
    1000,
    () => now,
  );
  assert.deepEqual(await Promise.all([cache.get('a'), cache.get('a'), cache.fresh('a')]), ['v1', 'v1', 'v1']);
  assert.equal(await cache.get(undefined), 'v2');
  now = 999;
  assert.equal(await cache.get('a'), 'v1');
  now = 1000;
  assert.equal(await cache.get('a'), 'v3');
  assert.deepEqual(reads, ['a', undefined, 'a']);
  now = 20_000;
  await cache.get('b');
  assert.equal(cache.entries.size, 1, 'entries unused for ten intervals are dropped');
});

test('a unit the state does not hold is a 404; a damaged sensitive entry does not fail the unit page; an object shaped like markup is text', async () => {
  const { url, source } = await serve();
  const unit = source.unit;
  source.unit = (env, name) =>
    unit(env, name).then((d) => {
      if (name === 'nope') d.show.errors.push(diagnostic('NYL-UNIT-UNKNOWN', 'error', 'the state of dev holds no unit nope', { env, unit: name }));
      if (name === 'damaged') d.show.receipt.sensitiveOutputs = { password: {}, token: { sha256: { markup: '<b>x</b>' } } };
      return d;
    });
  const missing = await request(url, { path: '/environments/dev/units/nope' });
  assert.equal(missing.status, 404);
  assert.match(missing.body, /NYL-UNIT-UNKNOWN/);
  const damaged = await request(url, { path: '/environments/dev/units/damaged' });
  assert.equal(damaged.status, 200);
  assert.match(damaged.body, /data-output="token" class="sensitive"/, 'a damaged digest does not matter: none is shown');
  assert.equal(render(html`${{ markup: '<b>x</b>' }}`), '[object Object]');
});

test('a fix shows its commands (between backticks in the catalog) as code, escaped', async () => {
  const { fixText } = await import('../../dist/ui/parts.js');
  assert.equal(render(fixText('run `nyl resume -e dev --unit <x>` first')), 'run <code>nyl resume -e dev --unit &lt;x&gt;</code> first');
});

test('the warning off loopback says what the view shows to whoever reaches it, and that sensitive values are never shown', async () => {
  const { exposedWarning } = await import('../../dist/ui/serve.js');
  const w = exposedWarning('0.0.0.0');
  assert.deepEqual([w.code, w.severity], ['NYL-UI-EXPOSED', 'warning']);
  for (const shown of [
    /0\.0\.0\.0/,
    /not a loopback address/,
    /no authentication/,
    /every environment's units/,
    /plain outputs/,
    /rendered specs/,
    /failure output/,
    /history/,
    /anyone who can reach it/,
    /sensitive values are never shown/,
  ])
    assert.match(w.message, shown);
  assert.doesNotMatch(w.message, /digest/);
});

test('--listen: host:port, [v6]:port or a bare port; anything else is a usage error', async () => {
  const { listenAddressOf } = await import('../../dist/ui/serve.js');
  assert.deepEqual(listenAddressOf(undefined), { host: '127.0.0.1', port: 4780 });
  assert.deepEqual(listenAddressOf('8080'), { host: '127.0.0.1', port: 8080 });
  assert.deepEqual(listenAddressOf('0.0.0.0:0'), { host: '0.0.0.0', port: 0 });
  assert.deepEqual(listenAddressOf('[::1]:4780'), { host: '::1', port: 4780 });
  assert.deepEqual(listenAddressOf('localhost:9000'), { host: 'localhost', port: 9000 });
  for (const bad of ['localhost:http', '127.0.0.1:70000', ':80', 'a b:1', '[::1]', 'http://127.0.0.1:80']) {
    assert.throws(
      () => listenAddressOf(bad),
      (e) => e.diagnostics?.[0]?.code === 'NYL-USAGE',
      bad,
    );
  }
});

test('an unreachable environment is read once per interval and a slow one is cut at the time box; the pages say when it is read again', async () => {
  const { EnvironmentReads } = await import('../../dist/ui/environment-reads.js');
  let now = Date.parse('2026-12-02T08:00:00Z');
  const reads = { far: 0, slow: 0, dev: 0 };
  const unavailable = (env) =>
    new NylError(diagnostic('NYL-STATE-UNAVAILABLE', 'error', `the state repository of ${env} cannot be read: connection refused`, { env }));
  /** One environment's read: dev answers, far fails, slow answers after two seconds. */
  const readOne = async (env) => {
    reads[env]++;
    if (env === 'far') throw unavailable(env);
    if (env === 'slow') await new Promise((r) => setTimeout(r, 2000));
    return `refs of ${env}`;
  };
  const names = ['dev', 'far', 'slow'];
  const source = fakeSource();
  source.overview = async (guard) => ({
    project: 'shop',
    patterns: [],
    instances: [],
    errors: [],
    environments: await Promise.all(
      names.map(async (name) => {
        try {
          await guard(name, () => readOne(name));
          return { name, labels: {}, status: statusOf(name, [unitStatus('api', 'current')]), errors: [] };
        } catch (error) {
          return { name, labels: {}, errors: error.diagnostics };
        }
      }),
    ),
  });
  source.version = async (env, guard) => {
    const parts = [];
    for (const name of [...names, ...(env && !names.includes(env) ? [env] : [])])
      parts.push(await guard(name, () => readOne(name)).catch((e) => e.diagnostics.map((d) => d.code).join()));
    return parts.join('|');
  };
  const environment = source.environment;
  source.environment = async (env) => (names.includes(env) ? (await readOne(env), environment('dev')) : environment(env));
  const guardReads = new EnvironmentReads({ timeBoxMs: 150, memoryMs: 30_000, now: () => now });
  const logged = [];
  const server = await startUiServer(source, { host: '127.0.0.1', port: 0, pollMs: 50, allowHosts: [], log: (l) => logged.push(l), reads: guardReads });
  servers.push(server);
  const url = server.url;

  const far = await request(url, { path: '/environments/far' });
  assert.equal(far.status, 503);
  assert.match(
    far.body,
    /nyl ui could not read the state of far at <time datetime="2026-12-02T08:00:00Z">[^;]*<\/time>; it reads it again at <time datetime="2026-12-02T08:00:30Z">/,
  );
  assert.match(far.body, /NYL-STATE-UNAVAILABLE/);
  assert.equal(far.headers.refresh, '30', 'the page reloads itself when the environment is read again');
  assert.equal(reads.far, 1, 'the version read found it unreachable; the page did not read it again');
  const started = Date.now();
  for (const path of ['/environments/far', '/environments/far/history', '/', '/version']) await request(url, { path });
  assert.equal(reads.far, 1, 'no request reads it again within the interval');
  const first = (await request(url, { path: '/' })).body;
  assert.match(/<tr data-environment="far">[\s\S]*?<\/tr>/.exec(first)[0], /class="unreadable"[^]*could not read the state of far at/);
  assert.match(/<tr data-environment="dev">[\s\S]*?<\/tr>/.exec(first)[0], /state-current/);
  assert.ok(Date.now() - started < 1500, 'pages answer without waiting for the slow environment again');
  // The slow environment was cut at the time box by the first version read, and is remembered as not answering.
  assert.equal(reads.slow, 1);
  const slow = await request(url, { path: '/environments/slow' });
  assert.equal(slow.status, 503);
  assert.match(slow.body, /could not read the state of slow at <time[^>]*>[^<]*<\/time> \(it did not answer in time\)/);
  assert.match(slow.body, /not read within 0\.15 s/);
  assert.equal(reads.slow, 1);
  now += 30_000;
  assert.equal((await request(url, { path: '/environments/far' })).status, 503);
  assert.equal(reads.far, 2, 'read again once the interval passed');

  // A page whose report says the repository cannot be read (status and log report it as data, not as an exception) is remembered alike.
  let lostReads = 0;
  const history = source.history;
  source.history = (env, limit) =>
    env !== 'lost'
      ? history(env, limit)
      : (lostReads++, history(env, limit).then((log) => ({ ...log, entries: [], errors: [unavailable(env).diagnostics[0]] })));
  assert.equal((await request(url, { path: '/environments/lost/history' })).status, 503);
  const again = await request(url, { path: '/environments/lost/history' });
  assert.match(again.body, /could not read the state of lost at/);
  assert.equal(lostReads, 1);
  // The read went on in the background: once it ends well, the environment is read again at the next request.
  await new Promise((r) => setTimeout(r, 2100));
  assert.equal(guardReads.failure('slow'), undefined);
  assert.deepEqual(logged, []);
});

test("a unit's page lists its dependencies and its dependents as links, each with its state and why the edge exists", async () => {
  const { url } = await serve();
  const body = (await request(url, { path: '/environments/dev/units/api' })).body;
  const list = () => /<ul class="neighbours ([a-z]+)">([\s\S]*?)<\/ul>/g;
  const sides = Object.fromEntries(
    [...body.matchAll(list())].map((m) => [
      m[1],
      [
        ...m[2].matchAll(
          /<li data-unit="([^"]+)"><a class="unit" href="([^"]+)">[^<]*<\/a> <span class="badge state-([a-z-]+)"[^>]*>[^<]*<\/span> <span class="muted">([^<]*)<\/span>/g,
        ),
      ].map((l) => l.slice(1).join(' ')),
    ]),
  );
  assert.deepEqual(sides, {
    dependencies: ['db /environments/dev/units/db current outputs.url at /env/DB; dependsOn'],
    dependents: ['web /environments/dev/units/web current dependsOn'],
  });
  const lonely = (await request(url, { path: '/environments/dev/units/lonely' })).body;
  assert.match(lonely, /<h2>Depends on<\/h2><p class="empty">Nothing: it runs first\.<\/p>/);
  assert.match(lonely, /<h2>Dependents<\/h2><p class="empty">Nothing depends on it\.<\/p>/);
});

test("a failed unit's condition shows the last lines its tool printed, not only the exit code", async () => {
  const { url } = await serve();
  const body = (await request(url, { path: '/environments/dev/units/migrate' })).body;
  const condition = /<section class="condition">[\s\S]*?<\/section>/.exec(body)[0];
  assert.match(condition, /<dt>Reason<\/dt><dd><pre class="text">command exited with code 3<\/pre><\/dd>/);
  assert.ok(
    condition.includes(
      `<dt>Last lines of output</dt><dd><pre class="output">applying 003_users.sql\nERROR: relation &quot;users&quot; already exists ${escapeHtml(HOSTILE)}</pre></dd>`,
    ),
    condition,
  );
  // A condition without output shows no empty block.
  assert.doesNotMatch((await request(url, { path: '/environments/dev/units/api' })).body, /Last lines of output/);
});
