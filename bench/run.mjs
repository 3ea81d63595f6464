#!/usr/bin/env node
// Runs every benchmark scenario (or those named on the command line), prints a table to stdout
// and writes bench/results/latest.json. BENCH_QUICK=1 uses fewer repetitions.
// Exit 0 when every scenario ran (a missed target is reported, not an error); 1 when one crashed.
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, platform, release } from 'node:os';
import { join } from 'node:path';
import { BENCH_DIR, QUICK, cleanup, fmtMs, log, nowMs, retries } from './lib.mjs';
import * as startup from './scenarios/startup.mjs';
import * as stateInit from './scenarios/state-init.mjs';
import * as status1000 from './scenarios/status-1000.mjs';
import * as reconcile500 from './scenarios/reconcile-500.mjs';
import * as noop1000 from './scenarios/noop-1000.mjs';
import * as takeover200 from './scenarios/takeover-200.mjs';
import * as memory5000 from './scenarios/memory-5000.mjs';
import * as teardown500 from './scenarios/teardown-500.mjs';
import * as drivers from './scenarios/drivers.mjs';
import * as planVerify from './scenarios/plan-verify.mjs';
import * as stateMove from './scenarios/state-move.mjs';
import * as multiEnv from './scenarios/multi-env.mjs';
import * as historySize from './scenarios/history-size.mjs';
import * as uiPages from './scenarios/ui-pages.mjs';
import * as remoteLatency from './scenarios/remote-latency.mjs';

const ALL = [
  startup,
  stateInit,
  status1000,
  reconcile500,
  noop1000,
  takeover200,
  memory5000,
  teardown500,
  drivers,
  planVerify,
  stateMove,
  multiEnv,
  historySize,
  uiPages,
  remoteLatency,
];

function formatValue(m) {
  if (m.value === undefined || m.value === null || Number.isNaN(m.value)) return '-';
  if (m.unit === 'ms') return fmtMs(m.value);
  if (m.unit === 'x') return `${m.value.toFixed(2)}x`;
  if (m.unit === 'MB') return `${m.value.toFixed(1)} MB`;
  if (!Number.isInteger(m.value)) return m.value.toFixed(2);
  return String(m.value);
}

function formatTarget(m) {
  if (!m.target) return '';
  const v = m.unit === 'ms' ? fmtMs(m.target.value) : m.unit === 'x' ? `${m.target.value}x` : m.unit === 'MB' ? `${m.target.value} MB` : String(m.target.value);
  return `${m.target.op} ${v}${m.target.label ? ` (${m.target.label})` : ''}`;
}

function verdict(m) {
  if (!m.target || typeof m.value !== 'number') return undefined;
  return m.target.op === '<' ? m.value < m.target.value : m.value <= m.target.value;
}

function table(rows) {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  const line = (r) =>
    r
      .map((c, i) => (i === 2 || i === 3 ? c.padStart(widths[i]) : c.padEnd(widths[i])))
      .join('  ')
      .trimEnd();
  return [line(rows[0]), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

function gitVersion() {
  try {
    return execFileSync('git', ['--version']).toString().trim();
  } catch {
    return 'unknown';
  }
}

async function main() {
  const wanted = process.argv.slice(2);
  const unknown = wanted.filter((w) => !ALL.some((s) => s.id === w));
  if (unknown.length) {
    process.stderr.write(`unknown scenario ${unknown.join(', ')}; known: ${ALL.map((s) => s.id).join(', ')}\n`);
    return 1;
  }
  const selected = wanted.length ? ALL.filter((s) => wanted.includes(s.id)) : ALL;
  const began = nowMs();
  const loadBefore = loadavg()[0];
  const results = [];
  let crashed = false;
  try {
    for (const s of selected) {
      log(`bench: ${s.id} ...`);
      const t0 = nowMs();
      try {
        const r = await s.run();
        for (const m of r.metrics) m.pass = verdict(m);
        results.push({ id: s.id, title: s.title, seconds: (nowMs() - t0) / 1000, ...r });
      } catch (error) {
        crashed = true;
        log(`bench: ${s.id} failed: ${error.stack ?? error}`);
        results.push({ id: s.id, title: s.title, seconds: (nowMs() - t0) / 1000, error: String(error.message ?? error), metrics: [] });
      }
      log(`bench: ${s.id} done in ${((nowMs() - t0) / 1000).toFixed(1)} s`);
    }
  } finally {
    cleanup();
  }

  const rows = [['scenario', 'metric', 'value', 'cpu', 'target', '']];
  for (const r of results) {
    if (r.error) rows.push([r.id, 'ERROR', '-', '', '', r.error.split('\n')[0].slice(0, 80)]);
    r.metrics.forEach((m, i) =>
      rows.push([
        i === 0 ? r.id : '',
        m.name,
        formatValue(m),
        m.cpu === undefined ? '' : fmtMs(m.cpu),
        formatTarget(m),
        m.pass === undefined ? '' : m.pass ? 'ok' : 'MISSED',
      ]),
    );
  }
  const host = {
    node: process.version,
    git: gitVersion(),
    cpus: cpus().length,
    cpu: cpus()[0]?.model ?? '',
    platform: `${platform()} ${release()}`,
    loadavg1: { before: loadBefore, after: loadavg()[0] },
  };
  const totalSeconds = (nowMs() - began) / 1000;
  process.stdout.write(`Nyl benchmarks ${new Date().toISOString()}${QUICK ? ' (BENCH_QUICK)' : ''}\n`);
  process.stdout.write(`${host.node}, ${host.git}, ${host.cpus} x ${host.cpu}, ${host.platform}\n`);
  process.stdout.write(
    `load average (1 min) before ${loadBefore.toFixed(2)}, after ${host.loadavg1.after.toFixed(2)}: values are wall times, which a busy machine inflates;\n`,
  );
  process.stdout.write(`cpu = user+sys of the measured process and everything it waited for (git, drivers), 10 ms ticks\n\n`);
  process.stdout.write(`${table(rows)}\n`);
  for (const r of results) for (const note of r.notes ?? []) process.stdout.write(`  ${r.id}: ${note}\n`);
  if (retries.count) process.stdout.write(`  note: ${retries.count} measurement(s) redone after a nyl process was killed from outside the bench\n`);
  process.stdout.write(`\ntotal ${totalSeconds.toFixed(1)} s\n`);

  const dir = join(BENCH_DIR, 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'latest.json');
  writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), quick: QUICK, host, totalSeconds, retries, scenarios: results }, null, 2)}\n`);
  process.stdout.write(`wrote ${file}\n`);
  return crashed ? 1 : 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error) => {
    process.stderr.write(`${error.stack ?? error}\n`);
    cleanup();
    process.exitCode = 1;
  },
);
