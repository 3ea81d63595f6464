import { test } from 'node:test';
import assert from 'node:assert/strict';
import { IMPORTERS, RUN_OPERATIONS, clockSkewOf, leaseStatus, leaseTiming, newLeaseRecord, parseLease, serializeLease } from '../../dist/lease/record.js';
import { isoMillis, isoSeconds } from '../../dist/util/clock.js';
import { parseDuration } from '../../dist/util/duration.js';
import { UUID_RE, uuidv7 } from '../../dist/util/uuid.js';

const T0 = Date.parse('2026-10-26T23:00:00Z');

function record(extra = {}) {
  return newLeaseRecord({
    environment: 'dev',
    run: '0192f0c4-8d0a-7c3e-9a51-3c1f0e7d2b90',
    operation: 'reconcile',
    holder: { name: 'Alice <alice@example.com>', host: 'runner-1', pid: 4242 },
    acquiredAt: '2026-10-26T23:00:00Z',
    deadline: '2026-10-26T23:05:00Z',
    ...extra,
  });
}

// --- the lease record ------------------------------------------------------------------------

test('newLeaseRecord sets apiVersion and kind', () => {
  const r = record();
  assert.equal(r.apiVersion, 'nyl.io/v1');
  assert.equal(r.kind, 'Lease');
  assert.equal(r.environment, 'dev');
});

test('leaseStatus: live until the deadline plus the skew margin, expired from then on', () => {
  const r = record();
  const deadline = Date.parse(r.deadline);
  assert.equal(leaseStatus(r, T0, 0), 'live');
  assert.equal(leaseStatus(r, deadline - 1, 0), 'live');
  assert.equal(leaseStatus(r, deadline, 0), 'expired');
  assert.equal(leaseStatus(r, deadline + 3_600_000, 0), 'expired');
  // A taker whose clock runs ahead of the holder's does not take over within the margin.
  assert.equal(leaseStatus(r, deadline + 29_999, 30_000), 'live');
  assert.equal(leaseStatus(r, deadline + 30_000, 30_000), 'expired');
});

test('leaseStatus: broken wins over live and expired', () => {
  const r = record({ broken: { by: 'Bob <bob@example.com>', reason: 'runner was killed', at: '2026-10-26T23:01:00Z' } });
  assert.equal(leaseStatus(r, T0, 0), 'broken');
  assert.equal(leaseStatus(r, Date.parse(r.deadline) + 1, 0), 'broken');
});

// A recover carries the break it imports in its own lease (brokenHolder names the holder broken):
// that break is not the recover's, so its lease is live like any other until it expires.
test('leaseStatus: a carried break makes the lease broken only once its carrier is past its deadline and the margin', () => {
  const carried = record({
    operation: 'recover',
    broken: { by: 'Bob <bob@example.com>', reason: 'runner was killed', at: '2026-10-26T22:59:00Z' },
    brokenHolder: { run: 'r0', operation: 'reconcile', holder: { name: 'Carol <c@example.com>', host: 'h', pid: 1 } },
  });
  const deadline = Date.parse(carried.deadline);
  assert.equal(leaseStatus(carried, T0, 30_000), 'live');
  assert.equal(leaseStatus(carried, deadline + 29_999, 30_000), 'live');
  assert.equal(leaseStatus(carried, deadline + 30_000, 30_000), 'broken', 'a dead carrier leaves the break for the next importer');
});

test('leaseTiming: skew and safety margins are a tenth of the lease, at most 30 s', () => {
  assert.deepEqual(leaseTiming({ durationMs: 300_000 }), { durationMs: 300_000, skewMs: 30_000, safetyMs: 30_000 });
  assert.deepEqual(leaseTiming({ durationMs: 2_000 }), { durationMs: 2_000, skewMs: 200, safetyMs: 200 });
  assert.deepEqual(leaseTiming({ durationMs: 3_600_000 }), { durationMs: 3_600_000, skewMs: 30_000, safetyMs: 30_000 });
  // lease.skewMargin sets the skew margin only: the safety margin is the holder's own.
  assert.deepEqual(leaseTiming({ durationMs: 300_000, skewMarginMs: 600_000 }), { durationMs: 300_000, skewMs: 600_000, safetyMs: 30_000 });
});

test('clockSkewOf: a record acquired or renewed further than the skew margin in the future; a broken one never', () => {
  const now = Date.parse('2026-12-01T12:00:00Z');
  const at = (ms) => new Date(now + ms).toISOString();
  assert.equal(clockSkewOf({ acquiredAt: at(-60_000) }, now, 30_000), undefined, 'in the past');
  assert.equal(clockSkewOf({ acquiredAt: at(30_000) }, now, 30_000), undefined, 'at the margin');
  assert.equal(clockSkewOf({ acquiredAt: at(31_000) }, now, 30_000), 31_000);
  assert.equal(clockSkewOf({ acquiredAt: at(-600_000), renewedAt: at(120_000) }, now, 30_000), 120_000, 'the renewal counts');
  assert.equal(
    clockSkewOf({ acquiredAt: at(600_000), broken: { by: 'x', reason: 'y', at: at(0) } }, now, 30_000),
    undefined,
    'a broken lease is taken over by an importer whatever its stamps',
  );
  const carriedBy = {
    broken: { by: 'x', reason: 'y', at: at(0) },
    brokenHolder: { run: 'r0', operation: 'reconcile', holder: { name: 'c', host: 'h', pid: 1 } },
  };
  assert.equal(clockSkewOf({ acquiredAt: at(600_000), ...carriedBy }, now, 30_000), 600_000, "a carried break is not the holder's: its stamps count");
});

test('isoMillis keeps milliseconds: a deadline is never floored to the second', () => {
  assert.equal(isoMillis(T0 + 999), '2026-10-26T23:00:00.999Z');
  assert.equal(Date.parse(isoMillis(T0 + 2_050)), T0 + 2_050);
});

test('serializeLease writes sorted-key YAML that parseLease reads back', () => {
  const r = record({
    renewedAt: '2026-10-26T23:02:00Z',
    broken: { by: 'Bob <bob@example.com>', reason: 'runner: killed\nby OOM', at: '2026-10-26T23:03:00Z' },
    brokenHolder: { run: 'r0', operation: 'teardown', holder: { name: 'Carol <c@example.com>', host: 'h', pid: 1 } },
  });
  const text = serializeLease(r);
  const keys = text
    .split('\n')
    .filter((l) => /^[a-zA-Z]/.test(l))
    .map((l) => l.split(':')[0]);
  assert.deepEqual(keys, [...keys].sort(), 'top-level keys sorted');
  assert.match(text, /^kind: Lease$/m);
  assert.deepEqual(parseLease(text), r);
  assert.deepEqual(parseLease(serializeLease(record())), record());
});

test('parseLease of garbage, other kinds and non-objects is undefined', () => {
  for (const text of [
    '',
    '   ',
    'not: [yaml',
    '{{{',
    '- a\n- b\n',
    '42',
    'hello',
    'null',
    'kind: Run\nrun: x\n',
    'kind: lease\n',
    '---\nkind: Lease\n---\nkind: Lease\n',
    '\u0000\u0001',
  ]) {
    assert.equal(parseLease(text), undefined, JSON.stringify(text));
  }
  // A lease is read as a lease only when everything a taker decides on is there: a holder, a run
  // and a deadline that is a time. Anything less is damage, which `nyl lease break` breaks.
  assert.equal(parseLease('kind: Lease\n'), undefined, 'the kind alone is no lease');
  assert.equal(parseLease(serializeLease({ ...record(), deadline: 'soon' })), undefined, 'a deadline that is no time');
  assert.equal(parseLease(serializeLease({ ...record(), holder: 'Bob' })), undefined, 'a holder that is no mapping');
  assert.deepEqual(
    parseLease(serializeLease({ ...record(), futureField: 1 })),
    { ...record(), futureField: 1 },
    'a field of a newer version is kept, not damage',
  );
});

test('importers and run operations', () => {
  assert.deepEqual([...IMPORTERS].sort(), ['reconcile', 'recover', 'teardown']);
  assert.deepEqual([...RUN_OPERATIONS].sort(), ['reconcile', 'teardown']);
  assert.equal(IMPORTERS.has('hold'), false);
});

// --- parseDuration and isoSeconds ------------------------------------------------------------

test('parseDuration of the command line is the grammar of source (util/duration)', () => {
  const cases = {
    '30s': 30_000,
    '10m': 600_000,
    '1h': 3_600_000,
    '1h30m': 5_400_000,
    '500ms': 500,
    '2d': 172_800_000,
    '1h2m3s4ms': 3_723_004,
    '0s': 0,
    '90m': 5_400_000,
    '1m1ms': 60_001,
  };
  for (const [text, ms] of Object.entries(cases)) assert.equal(parseDuration(text), ms, text);
  for (const text of [
    '',
    '10',
    'm',
    '10x',
    '-1s',
    ' 30s',
    '30s ',
    '30 s',
    '1h30',
    '1h 30m',
    's10',
    '.5s',
    '1.5s',
    '10M',
    '1e3ms',
    'ms',
    '30sx',
    '1h30mx',
    '30m1h',
  ]) {
    assert.equal(parseDuration(text), undefined, JSON.stringify(text));
  }
});

test('isoSeconds: UTC, no milliseconds, floored to the second', () => {
  assert.equal(isoSeconds(T0), '2026-10-26T23:00:00Z');
  assert.equal(isoSeconds(T0 + 999), '2026-10-26T23:00:00Z');
  assert.equal(isoSeconds(T0 + 1000), '2026-10-26T23:00:01Z');
  assert.equal(isoSeconds(0), '1970-01-01T00:00:00Z');
  assert.match(isoSeconds(Date.now()), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
});

test('isoSeconds round-trips through Date.parse', () => {
  assert.equal(Date.parse(isoSeconds(T0 + 61_234)), T0 + 61_000);
});

// --- uuidv7 ----------------------------------------------------------------------------------

test('uuidv7: RFC 9562 layout, version 7, variant 10', () => {
  for (let i = 0; i < 200; i++) {
    const id = uuidv7(T0 + i);
    assert.match(id, /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    assert.match(id, UUID_RE);
    assert.equal(id[14], '7', 'version nibble');
    assert.ok('89ab'.includes(id[19]), `variant nibble of ${id}`);
  }
});

test('uuidv7: the first 48 bits are the milliseconds', () => {
  const id = uuidv7(T0);
  const hex = id.replace(/-/g, '');
  assert.equal(parseInt(hex.slice(0, 12), 16), T0);
  assert.equal(uuidv7(0).slice(0, 13), '00000000-0000');
  assert.equal(uuidv7(0xffffffffffff).slice(0, 13), 'ffffffff-ffff');
  assert.equal(
    parseInt(
      uuidv7(T0 + 0.9)
        .replace(/-/g, '')
        .slice(0, 12),
      16,
    ),
    T0,
    'fractions are floored',
  );
});

test('uuidv7: ids sort by creation time; equal times differ in the random part', () => {
  const times = [0, 1, 255, 256, 65_535, 65_536, 2 ** 40, T0 - 1, T0, T0 + 1, T0 + 86_400_000, 2 ** 47 + 3];
  const ids = times.map((t) => uuidv7(t));
  assert.deepEqual([...ids].sort(), ids);
  assert.deepEqual(
    [...ids].sort((a, b) => a.localeCompare(b)),
    ids,
  );
  const same = new Set(Array.from({ length: 100 }, () => uuidv7(T0)));
  assert.equal(same.size, 100);
  for (const id of same) assert.equal(id.slice(0, 13), uuidv7(T0).slice(0, 13));
});

test('UUID_RE refuses other versions, variants, upper case and malformed ids', () => {
  const good = '0192f0c4-8d0a-7c3e-9a51-3c1f0e7d2b90';
  assert.match(good, UUID_RE);
  for (const bad of [
    '0192f0c4-8d0a-4c3e-9a51-3c1f0e7d2b90',
    '0192f0c4-8d0a-7c3e-7a51-3c1f0e7d2b90',
    '0192f0c4-8d0a-7c3e-ca51-3c1f0e7d2b90',
    '0192F0C4-8D0A-7C3E-9A51-3C1F0E7D2B90',
    '0192f0c48d0a7c3e9a513c1f0e7d2b90',
    `${good}0`,
    ` ${good}`,
    '',
  ]) {
    assert.doesNotMatch(bad, UUID_RE, bad);
  }
});
