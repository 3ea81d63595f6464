// End-to-end: `nyl ui` over the example project examples/shop, driven in headless Chromium
// (Debian's chromium, through puppeteer-core). A real nyl process serves the real state
// repository; the browser finds the environments, the units with their states and why they wait,
// follows the links to the history and to a run, sees a page refresh by itself when another nyl
// process changes the state refs, and takes the screenshot of docs/web-view.md
// (NYL_UPDATE_SCREENSHOTS=1 writes it to docs/images/). The graph has its legend and highlights a
// unit's edges on hover and focus; a unit's page links its dependencies and dependents; at 420
// pixels wide no page scrolls sideways (screenshots at 420 px go to a temp dir, kept with
// NYL_KEEP_SCREENSHOTS=<dir> for a look). A sensitive output's value reaches no page, and a
// hostile reason runs no script.
//
// Without Chromium the browser tests skip, unless NYL_REQUIRE_BROWSER=1 (set by .ci/run) makes
// that a failure. NYL_CHROMIUM names another executable.
import { test, after, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cleanupAll, git, makeBareRepo, makeProject, tempDir } from '../support/git-fixtures.mjs';
import { cliEnv, command, environment, NYL, nyl, nylAsync, nylYaml } from '../support/cli.mjs';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SHOP = path.join(HERE, '..', '..', 'examples', 'shop');
const SCREENSHOT = path.join(HERE, '..', '..', 'docs', 'images', 'ui-environment.png');
const CHROMIUM = process.env.NYL_CHROMIUM || '/usr/bin/chromium';
const BROWSER_SKIP = !fs.existsSync(CHROMIUM) && process.env.NYL_REQUIRE_BROWSER !== '1' && `${CHROMIUM} is not installed (.ci/run installs Debian's chromium)`;
const KEY = Buffer.alloc(32, 7).toString('base64');
const HOSTILE = '<img src=x onerror="window.pwned=1">';

const processes = [];
after(() => {
  for (const p of processes) if (p.exitCode === null) p.kill('SIGKILL');
  cleanupAll();
});

/** Replaces `from` by `to` in the project's nyl.yaml, insisting that the example still has it. */
function edit(dir, from, to) {
  const file = path.join(dir, 'nyl.yaml');
  const text = fs.readFileSync(file, 'utf8');
  assert.ok(text.includes(from), `examples/shop/nyl.yaml no longer holds ${from}`);
  fs.writeFileSync(file, text.replace(from, to));
}

/**
 * The example project with its state in a bare repository, reconciled once; then the database
 * changed (a new line, and a sensitive password drawn at random) and cache held, so that units
 * wait for different reasons.
 */
function shop() {
  const bare = makeBareRepo();
  const root = tempDir('nyl-ui-');
  const dir = path.join(root, 'shop');
  fs.cpSync(SHOP, dir, { recursive: true });
  edit(dir, 'STATE_REPO_URL', pathToFileURL(bare).href);
  git(dir, 'init', '-q', '-b', 'main');
  git(dir, 'add', '-A');
  git(dir, 'commit', '-q', '-m', 'shop');
  const ok = (args, exit = 0) => {
    const r = nyl(dir, args, { env: { NYL_SECRETS_KEY: KEY } });
    assert.equal(r.code, exit, `nyl ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
  };
  ok(['state', 'init', '-e', 'dev']);
  ok(['reconcile', '-e', 'dev']);
  const secretFile = path.join(root, 'password');
  edit(
    dir,
    `printf '{"url": "postgres://db.%s.internal:5432/shop"}\\n' "$NETWORK" > "$NYL_OUTPUTS"`,
    `password="$(od -An -N12 -tx1 /dev/urandom | tr -d ' \\n')"\n    printf '%s' "$password" > '${secretFile}'\n    printf '{"url": "postgres://db.%s.internal:5432/shop", "password": {"value": "%s", "sensitive": true}}\\n' "$NETWORK" "$password" > "$NYL_OUTPUTS"`,
  );
  git(dir, 'commit', '-q', '-am', 'database: a password');
  ok(['hold', '-e', 'dev', '--unit', 'cache', '--reason', 'the cache migration runs by hand']);
  return { dir, bare, ok, secretFile };
}

/** Starts `nyl ui` and resolves with its URL once it prints it. */
function startUi(dir, args) {
  const child = spawn(process.execPath, [NYL, 'ui', ...args], { cwd: dir, env: cliEnv({ NYL_SECRETS_KEY: KEY }), stdio: ['ignore', 'pipe', 'pipe'] });
  processes.push(child);
  const out = { stdout: '', stderr: '' };
  child.stdout.on('data', (b) => (out.stdout += b));
  child.stderr.on('data', (b) => (out.stderr += b));
  const exited = new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, ...out })));
  const url = new Promise((resolve, reject) => {
    child.stdout.on('data', () => {
      const m = /at (http:\/\/\S+\/) /.exec(out.stdout);
      if (m) resolve(m[1]);
    });
    exited.then((r) => reject(new Error(`nyl ui exited ${r.code}\n${r.stdout}\n${r.stderr}`)));
  });
  return { child, url, exited, out };
}

function request(url, { method = 'GET', host, headers = {} } = {}) {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: u.hostname, port: u.port, path: u.pathname + u.search, method, headers: { ...headers, ...(host ? { host } : {}) } },
      (res) => {
        let body = '';
        res.on('data', (c) => (body += c));
        res.on('end', () => resolve({ status: res.statusCode, headers: res.headers, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

async function launchBrowser() {
  const { default: puppeteer } = await import('puppeteer-core');
  // As root in CI, without the sandbox; without background networking, which this machine's closed network refuses.
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

/** The units table of an environment's page: unit -> state. */
function unitStates(page) {
  return page.$$eval('table.units tbody tr', (rows) => Object.fromEntries(rows.map((r) => [r.dataset.unit, r.dataset.state])));
}

/**
 * Waits until the page shows the state refs as they are now: it reloaded itself (maybe several
 * times, as a run moved its refs one after another) until it was rendered at the server's current
 * version, and its event stream is connected. Navigating before that would race its own reload.
 */
async function settled(page, url) {
  const now = /<meta name="nyl-state-version" content="([0-9a-f]+)"/.exec((await request(url)).body)[1];
  await page.waitForFunction(
    (v) => document.querySelector('meta[name="nyl-state-version"]')?.content === v && document.documentElement.dataset.live === 'on',
    { timeout: 20_000 },
    now,
  );
}

let browser;
before(async () => {
  if (!BROWSER_SKIP) browser = await launchBrowser();
});
after(() => browser?.close());

test('the web view of examples/shop in Chromium: environments, units and why they wait, history, a run, a live refresh, no secret and no script', {
  skip: BROWSER_SKIP,
  timeout: 120_000,
}, async () => {
  const { dir, bare, ok, secretFile } = shop();
  const ui = startUi(dir, ['--listen', '127.0.0.1:0', '--poll-interval', '200ms']);
  const url = await ui.url;
  const page = await browser.newPage();
  await page.setViewport({ width: 1280, height: 900 });
  const problems = [];
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('console', (m) => m.type() === 'error' && problems.push(m.text()));

  // The environments: dev, with its units counted by state and the hold's operation last.
  await page.goto(url, { waitUntil: 'load' });
  assert.equal(await page.title(), 'Environments · nyl');
  const row = await page.$eval('tr[data-environment="dev"]', (r) => r.textContent);
  assert.match(row, /held/);
  assert.match(row, /awaiting-dependencies/);
  assert.match(row, /hold/);

  // The environment: each unit's state, and why the waiting ones wait (the planner's reason).
  await Promise.all([page.waitForNavigation(), page.click('a.env')]);
  assert.equal(new URL(page.url()).pathname, '/environments/dev');
  assert.deepEqual(await unitStates(page), {
    network: 'current',
    cache: 'held',
    database: 'outdated',
    migrate: 'awaiting-dependencies',
    'smoke-test': 'awaiting-dependencies',
  });
  const why = await page.$eval('tr[data-unit="migrate"]', (r) => r.querySelector('td:nth-child(4)').textContent);
  assert.match(why, /waits for database/);
  assert.match(why, /wait\/upstream-pending/);
  assert.match(await page.$eval('tr[data-unit="cache"]', (r) => r.textContent), /held by .* the cache migration runs by hand/);
  assert.deepEqual(
    await page.$$eval('svg.graph a.node', (nodes) => nodes.map((n) => `${n.dataset.unit}:${[...n.classList].find((c) => c.startsWith('state-'))}`).sort()),
    ['cache:state-held', 'database:state-outdated', 'migrate:state-awaiting-dependencies', 'network:state-current', 'smoke-test:state-awaiting-dependencies'],
  );
  assert.equal(await page.$$eval('svg.graph:not(.graph-key) path.edge', (e) => e.length), 5);
  await page.waitForFunction(() => document.documentElement.dataset.live === 'on', { timeout: 10_000 });
  const shot = path.join(tempDir('nyl-ui-shot-'), 'environment.png');
  await page.screenshot({ path: shot, fullPage: true });
  const png = fs.readFileSync(shot);
  assert.equal(png.subarray(1, 4).toString(), 'PNG');
  assert.equal(png.readUInt32BE(16), 1280, 'the screenshot is the page at 1280 pixels wide');
  if (process.env.NYL_UPDATE_SCREENSHOTS === '1') fs.copyFileSync(shot, SCREENSHOT);

  // The graph's legend, and a unit's edges highlighted on hover and on keyboard focus: migrate's dependency (database) and dependent (smoke-test).
  assert.deepEqual(await page.$$eval('ul.graph-legend li', (items) => items.map((i) => i.textContent.trim()).slice(0, 3)), [
    'dependsOn',
    'reads an output',
    'triggers',
  ]);
  const highlighted = () =>
    page.$eval('svg.graph:not(.graph-key)', (svg) => ({
      focused: svg.classList.contains('focused'),
      into: [...svg.querySelectorAll('.edge.into')].map((e) => e.dataset.from),
      outOf: [...svg.querySelectorAll('.edge.out-of')].map((e) => e.dataset.to),
      near: [...svg.querySelectorAll('.node.near')].map((n) => n.dataset.unit).sort(),
      dimmed: getComputedStyle(svg.querySelector('.edge:not(.into):not(.out-of)')).opacity,
    }));
  await page.hover('svg.graph a.node[data-unit="migrate"]');
  assert.deepEqual(await highlighted(), { focused: true, into: ['database'], outOf: ['smoke-test'], near: ['database', 'smoke-test'], dimmed: '0.12' });
  await page.mouse.move(5, 5);
  assert.equal((await highlighted()).focused, false, 'leaving the graph ends the highlight');
  await page.$eval('svg.graph a.node[data-unit="network"]', (a) => a.focus());
  assert.deepEqual((await highlighted()).outOf.sort(), ['cache', 'database']);
  await page.$eval('svg.graph a.node[data-unit="network"]', (a) => a.blur());

  // At 420 pixels wide (a phone): the page never scrolls sideways (the graph scrolls in its box, tables become blocks), and every page says so.
  await page.setViewport({ width: 420, height: 860 });
  const narrow = async (name, screenshot = true) => {
    const overflow = await page.evaluate(() => ({ page: document.documentElement.scrollWidth, view: window.innerWidth }));
    assert.ok(overflow.page <= overflow.view, `${name} at 420 px: the document is ${overflow.page} px wide`);
    if (screenshot) await page.screenshot({ path: path.join(path.dirname(shot), `${name}-420.png`), fullPage: true });
  };
  await narrow('environment');
  const box = await page.$eval('.graph-box', (b) => ({
    scroll: b.scrollWidth,
    client: b.clientWidth,
    font: getComputedStyle(b.querySelector('.node-name')).fontSize,
  }));
  assert.ok(box.scroll > box.client, 'the graph keeps its size and scrolls in its box');
  assert.equal(box.font, '13px', 'its labels are not shrunk');
  await page.goto(url, { waitUntil: 'load' });
  await narrow('environments');
  await page.goto(`${url}environments/dev/units/migrate`, { waitUntil: 'load' });
  await narrow('unit');
  // A unit's page: its dependencies and dependents, as links.
  assert.deepEqual(
    await page.$$eval('ul.neighbours', (lists) =>
      Object.fromEntries(lists.map((l) => [l.classList[1], [...l.querySelectorAll('a.unit')].map((a) => a.getAttribute('href'))])),
    ),
    { dependencies: ['/environments/dev/units/database'], dependents: ['/environments/dev/units/smoke-test'] },
  );
  const runHref = await page.$eval('section.receipt a.run', (a) => a.getAttribute('href'));
  await page.goto(`${url}environments/dev/history`, { waitUntil: 'load' });
  await narrow('history', false);
  await page.goto(new URL(runHref, url).href, { waitUntil: 'load' });
  await narrow('run', false);
  await page.setViewport({ width: 1280, height: 900 });
  await page.goto(`${url}environments/dev/units/migrate`, { waitUntil: 'load' });
  await page.screenshot({ path: path.join(path.dirname(shot), 'unit-1280.png'), fullPage: true });
  if (process.env.NYL_KEEP_SCREENSHOTS) fs.cpSync(path.dirname(shot), process.env.NYL_KEEP_SCREENSHOTS, { recursive: true });
  await page.goto(`${url}environments/dev`, { waitUntil: 'load' });

  // The history, by its link: the hold with its reason, the reconcile, the state init.
  await Promise.all([page.waitForNavigation(), page.click('a.history')]);
  assert.equal(new URL(page.url()).pathname, '/environments/dev/history');
  const operations = await page.$$eval('ol.entries li.entry', (items) => items.map((i) => i.querySelector('.badge').textContent));
  assert.deepEqual(operations, ['hold', 'reconcile', 'state-init']);
  assert.match(await page.$eval('ol.entries li.entry .reason', (r) => r.textContent), /the cache migration runs by hand/);

  // A run, by its link: the units it executed.
  await Promise.all([page.waitForNavigation(), page.click('ol.entries li.entry a.run')]);
  assert.match(new URL(page.url()).pathname, /^\/environments\/dev\/runs\/[0-9a-f-]{36}$/);
  assert.deepEqual(
    await page.$$eval('table.run-units tbody tr', (rows) => rows.map((r) => `${r.dataset.unit}:${r.querySelector('.badge').textContent}`).sort()),
    ['cache:executed', 'database:executed', 'migrate:executed', 'network:executed', 'smoke-test:executed'],
  );

  // A live refresh: the environment's page reloads by itself when a reconcile changes the refs.
  await page.goto(`${url}environments/dev`, { waitUntil: 'load' });
  await page.waitForFunction(() => document.documentElement.dataset.live === 'on', { timeout: 10_000 });
  const before = await page.$eval('meta[name="nyl-state-version"]', (m) => m.content);
  ok(['reconcile', '-e', 'dev'], 2); // 2: cache is held
  await settled(page, url);
  assert.notEqual(await page.$eval('meta[name="nyl-state-version"]', (m) => m.content), before);
  assert.deepEqual(await unitStates(page), { network: 'current', cache: 'held', database: 'current', migrate: 'current', 'smoke-test': 'current' });

  // The unit: its receipt's outputs, the sensitive one by name only (no value, no digest).
  await Promise.all([page.waitForNavigation(), page.click('tr[data-unit="database"] a.unit')]);
  assert.match(await page.$eval('tr[data-output="url"]', (r) => r.textContent), /postgres:\/\/db\.shop-dev\.internal:5432\/shop/);
  assert.match(await page.$eval('tr[data-output="password"]', (r) => r.textContent), /^password\s*••••••\s*sensitive$/);
  const secret = fs.readFileSync(secretFile, 'utf8');
  assert.match(secret, /^[0-9a-f]{24}$/);
  // Neither the value nor its sealed form (which state keeps, encrypted) is on any page.
  const sealed = /sealed: (\S+)/.exec(git(bare, 'show', 'refs/heads/nyl/dev/observed:units/database.yaml'))?.[1];
  assert.ok(sealed && sealed.length > 20, 'state keeps the password sealed');
  for (const p of [
    '',
    'environments/dev',
    'environments/dev/units/database',
    'environments/dev/history?all=1',
    `environments/dev/runs/${await page.$eval('section.receipt a.run', (a) => a.textContent)}`,
  ]) {
    const body = (await request(`${url}${p}`)).body;
    assert.ok(!body.includes(secret) && !body.includes(sealed), `${p || '/'} shows the sensitive value or its sealed form`);
  }

  // A hostile reason is shown as text and runs nothing.
  ok(['hold', '-e', 'dev', '--unit', 'migrate', '--reason', HOSTILE]);
  await settled(page, url);
  await page.goto(`${url}environments/dev/history`, { waitUntil: 'load' });
  assert.equal(await page.$eval('ol.entries li.entry .reason', (r) => r.textContent), `reason: ${HOSTILE}`);
  assert.equal(await page.evaluate(() => window.pwned), undefined);
  assert.equal(await page.$$eval('main img', (i) => i.length), 0);
  assert.deepEqual(problems, []);

  ui.child.kill('SIGINT');
  const end = await ui.exited;
  assert.equal(end.code, 0, end.stderr);
  assert.equal(end.stderr, '');
});

test('eight tabs open at once all load and go live (no tab holds a connection)', { skip: BROWSER_SKIP, timeout: 120_000 }, async () => {
  const { dir } = shop();
  const ui = startUi(dir, ['--listen', '127.0.0.1:0', '--poll-interval', '300ms']);
  const url = await ui.url;
  const context = await browser.createBrowserContext();
  try {
    const pages = await Promise.all(Array.from({ length: 8 }, () => context.newPage()));
    const paths = ['', 'environments/dev', 'environments/dev/history', 'environments/dev/units/database'];
    await Promise.all(pages.map((p, i) => p.goto(`${url}${paths[i % paths.length]}`, { waitUntil: 'load', timeout: 20_000 })));
    // A tab asks only while it is visible: each one, brought to the front, asks at once and goes live.
    for (const p of pages) {
      await p.bringToFront();
      await p.waitForFunction(() => document.documentElement.dataset.live === 'on', { timeout: 20_000 });
    }
    // A change reaches the tabs, the hidden ones when they are shown again.
    assert.equal(nyl(dir, ['resume', '-e', 'dev', '--unit', 'cache', '--reason', 'done'], { env: { NYL_SECRETS_KEY: KEY } }).code, 0);
    for (const p of pages.filter((_, i) => i % paths.length === 1)) {
      await p.bringToFront();
      await p.waitForFunction(() => document.querySelector('tr[data-unit="cache"]')?.dataset.state === 'current', { timeout: 20_000 });
    }
  } finally {
    await context.close();
  }
  ui.child.kill('SIGINT');
  assert.equal((await ui.exited).code, 0);
});

test('nyl ui is read-only and loopback-only at its edge; a taken port and a bad --listen are refused', { timeout: 60_000 }, async () => {
  const { dir } = shop();
  const ui = startUi(dir, ['--listen', '127.0.0.1:0']);
  const url = await ui.url;
  const port = new URL(url).port;
  assert.equal((await request(`${url}environments/dev`, { method: 'POST' })).status, 405);
  assert.equal((await request(`${url}environments/dev`, { host: `rebind.example:${port}` })).status, 403);
  assert.equal((await request(`${url}assets/..%2F..%2Fpackage.json`)).status, 404);
  assert.equal(
    (await request(`${url}environments/dev`, { headers: { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors', 'sec-fetch-dest': 'image' } })).status,
    403,
  );
  assert.equal(
    (await request(`${url}environments/dev`, { headers: { origin: 'http://evil.example' } })).status,
    403,
    'a foreign Origin without fetch metadata',
  );
  const get = await request(`${url}environments/dev`);
  const head = await request(`${url}environments/dev`, { method: 'HEAD' });
  assert.deepEqual(
    [head.status, head.body, head.headers['content-length'], head.headers['content-type']],
    [200, '', get.headers['content-length'], get.headers['content-type']],
  );
  const noRun = await request(`${url}environments/dev/runs/01a0-no-such-run`);
  assert.equal(noRun.status, 404);
  assert.match(noRun.body, /No such run/);
  const missing = await request(`${url}environments/nope`);
  assert.equal(missing.status, 404);
  assert.match(missing.body, /NYL-ENVIRONMENT-UNKNOWN/);

  const taken = nyl(dir, ['ui', '--listen', `127.0.0.1:${port}`]);
  assert.equal(taken.code, 1);
  assert.match(taken.stderr, /NYL-UI-LISTEN[\s\S]*EADDRINUSE[\s\S]*fix: pass --listen 127\.0\.0\.1:<port> with a free port/);
  const bad = nyl(dir, ['ui', '--listen', 'localhost:http']);
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /NYL-USAGE/);
  ui.child.kill('SIGTERM');
  assert.equal((await ui.exited).code, 0);

  const local = startUi(dir, ['--local', '--listen', '127.0.0.1:0']);
  const offline = await request(`${await local.url}environments/dev`);
  assert.equal(offline.status, 200);
  assert.equal([...offline.body.matchAll(/<tr data-unit=/g)].length, 5, 'the state repository itself, read as --local reads it');
  local.child.kill('SIGINT');
  assert.equal((await local.exited).code, 0);

  const exposed = startUi(dir, ['--listen', '0.0.0.0:0']);
  await exposed.url;
  await new Promise((r) => setTimeout(r, 100));
  assert.match(exposed.out.stderr, /warning NYL-UI-EXPOSED/);
  assert.match(exposed.out.stderr, /nyl ui listens on 0\.0\.0\.0, which is not a loopback address[^]*sensitive values are never shown/);
  exposed.child.kill('SIGINT');
  assert.equal((await exposed.exited).code, 0);
});

test('the first page lists the instances state holds (a ref per instance by name or suffix, or a path per instance), but not one whose state was deleted', {
  timeout: 60_000,
}, async () => {
  const bare = makeBareRepo();
  const repo = pathToFileURL(bare).href;
  const template = (name, pattern, state) =>
    [
      'apiVersion: nyl.io/v1',
      'kind: EnvironmentTemplate',
      `metadata: {name: ${name}}`,
      'spec:',
      `  namePattern: ${pattern}`,
      '  environment:',
      `    state: ${state}`,
    ].join('\n');
  const dir = makeProject({
    'nyl.yaml': nylYaml(
      environment('dev', `state: {repository: {repoURL: "${repo}"}}`),
      template('preview', 'pr-*', `{repository: {repoURL: "${repo}"}, path: "previews/\${{ instance.suffix }}"}`),
      template(
        'review',
        'rv-*',
        `{repository: {repoURL: "${repo}"}, desiredRef: reviews/desired, observedRef: reviews/observed, path: "reviews/\${{ instance.name }}"}`,
      ),
      template(
        'sandbox',
        'sx-*',
        `{repository: {repoURL: "${repo}"}, desiredRef: "sandboxes/\${{ instance.suffix }}/desired", observedRef: "sandboxes/\${{ instance.suffix }}/observed"}`,
      ),
      template('own-repo', 'rr-*', `{repository: {repoURL: "${pathToFileURL(path.dirname(bare)).href}/\${{ instance.name }}.git"}}`),
      command('app', "script: 'true'"),
    ),
  });
  const ok = (args) => {
    const r = nyl(dir, args);
    assert.equal(r.code, 0, `nyl ${args.join(' ')}\n${r.stdout}\n${r.stderr}`);
  };
  for (const env of ['dev', 'pr-7', 'pr-8', 'pr-9', 'rv-1', 'rv-2', 'sx-a', 'rr-1']) ok(['state', 'init', '-e', env]);
  ok(['state', 'delete', '-e', 'pr-9', '--reason', 'pull request closed']);
  const ui = startUi(dir, ['--listen', '127.0.0.1:0']);
  const url = await ui.url;
  const body = (await request(url)).body;
  const rows = [...body.matchAll(/<tr data-environment="([^"]+)">/g)].map((m) => m[1]);
  assert.deepEqual(rows, ['dev', 'pr-7', 'pr-8', 'rv-1', 'rv-2', 'sx-a']);
  // A template whose instances have a repository each cannot be listed: it is skipped, without an error about a probe.
  assert.doesNotMatch(body, /nyl-probe|class="diag/);
  assert.match((await request(`${url}environments/rr-1`)).body, /<h1>rr-1<\/h1>/);
  assert.equal((await request(`${url}environments/rv-2`)).status, 200);
  const deleted = await request(`${url}environments/pr-9`);
  assert.equal(deleted.status, 200, 'a deleted instance is still opened by name');
  assert.match(deleted.body, /NYL-STATE-DELETED/);
  ui.child.kill('SIGINT');
  assert.equal((await ui.exited).code, 0);
});

test("a live run's page shows the units it started and who holds the lease; once it ended, what it recorded", { timeout: 60_000 }, async () => {
  const bare = makeBareRepo();
  const flag = path.join(tempDir('nyl-ui-flag-'), 'go');
  const dir = makeProject({
    'nyl.yaml': nylYaml(
      environment('dev', `state: {repository: {repoURL: "${pathToFileURL(bare).href}"}}`),
      command('slow', `script: 'while [ ! -e ${flag} ]; do sleep 0.05; done'`),
      command('fast', "script: 'true'"),
    ),
  });
  assert.equal(nyl(dir, ['state', 'init', '-e', 'dev']).code, 0);
  const ui = startUi(dir, ['--listen', '127.0.0.1:0']);
  const url = await ui.url;
  const reconcile = nylAsync(dir, ['reconcile', '-e', 'dev']);
  let run;
  for (const deadline = Date.now() + 20_000; run === undefined; ) {
    assert.ok(Date.now() < deadline, 'slow never showed as running');
    const status = nyl(dir, ['status', '-e', 'dev', '-o', 'json']).json;
    run = status?.units?.slow?.running?.run;
    if (run === undefined) await new Promise((r) => setTimeout(r, 100));
  }
  const rows = (body) => [...body.matchAll(/<tr data-unit="([^"]+)">.*?state-([a-z-]+)/g)].map((m) => `${m[1]}:${m[2]}`).sort();
  const live = await request(`${url}environments/dev/runs/${run}`);
  assert.equal(live.status, 200);
  assert.ok(rows(live.body).includes('slow:running'), live.body);
  assert.match(live.body, /This run holds the lease of dev/);
  fs.writeFileSync(flag, '');
  assert.equal((await reconcile.done).code, 0);
  const ended = (await request(`${url}environments/dev/runs/${run}`)).body;
  assert.deepEqual(rows(ended), ['fast:executed', 'slow:executed']);
  assert.doesNotMatch(ended, /holds the lease/);
  ui.child.kill('SIGINT');
  assert.equal((await ui.exited).code, 0);
});
