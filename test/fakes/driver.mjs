// fakeDriver: a Driver (src/drivers/contract.ts) whose behaviour per unit is scripted, for engine
// tests. Kind 'Command' by default, so withDrivers(fakeDriver(...)) from dist/drivers/registry.js
// replaces the Command driver; any kind name works.
//
// import { fakeDriver, receipt, secret, failed, uncertain } from '../fakes/driver.mjs';
// const driver = fakeDriver({
//   apply: { a: receipt({ url: 'https://x', token: secret('s3cr3t') }), b: failed('boom') },
//   delayMs: { a: 5000 },              // on ctx.clock before answering
//   throws: { c: 'driver bug' },       // apply throws (after startProcess, if any)
//   startProcess: { c: ['tool'] },     // run through ctx.runner first
//   check: true, teardown: true,       // optional phases (absent unless given)
// });
// const release = driver.hold('a');   // apply of a waits until release() (or cancellation)
// await driver.whenCalled('a');       // a is "running"
//
// Options (all optional):
//   kind ('Command'), version ('fake/1'), defaultRecovery ('manual'), shellTextFields ([]),
//                secretFields (['/env']: where sensitive references may stand),
//                spec (KindDescriptor.spec, an ObjectSchema; absent unless given),
//                actionFields (KindDescriptor.actionFields: which argv/script name the program; absent unless given)
//                removalUnclaimed (KindDescriptor.removalUnclaimed; absent unless given)
//   apply        an Answer for every unit, or { [unit]: Answer, default?: Answer }
//                (units not listed: `default`, else receipt({}))
//   prepare, plan, teardown, check, readOutputs
//                a phase exists only when its option is given (not false): true (the default
//                answer below), an Answer for every unit, or { [unit]: Answer, default?: Answer }
//                defaults: prepare => { result: 'prepared', rendering: ctx.rendering },
//                plan => planned { digest: sha256 of the rendering, summary '+1 ~0 -0',
//                changes 'some' }, teardown => removed, check => checked in-sync,
//                readOutputs => read {} (with readOutputs, sensitive outputs are kept as digests)
//   delayMs      a number, or { [unit]: ms }: apply sleeps that long on ctx.clock first; a
//                cancellation (ctx.cancel) during the sleep ends the unit uncertain
//   onCall       async (call, ctx) => void: awaited at the start of every phase call (after the
//                call is recorded, before delay/process/answer): observe or hold any call
//   throws       a message (every unit), { [unit]: message }, or (call, ctx) => message|undefined:
//                apply throws new Error(message) instead of answering
//   startProcess argv, { [unit]: argv }, or (call, ctx) => argv|undefined: apply runs it through
//                ctx.runner (cwd projectDir, env baseEnv + NYL_OUTPUTS/NYL_UNIT/NYL_RUN/NYL_UID,
//                ctx.cancel, ctx.killGraceMs, output to ctx.toolOutput) before it throws or answers;
//                its result is in call.process
//   toolOutput   { [unit]: [lines] }: lines (text) apply writes to ctx.toolOutput, each as its
//                text and its bytes with a newline
// An Answer: an outcome object ({ result: 'receipt' | 'failed' | 'uncertain', ... } or the
// phase's own), a function async (ctx, call) => outcome (it may throw), or an array of those,
// used one per call (attempts), the last one repeating.
//
// The driver records every phase call in `driver.calls`:
//   { unit, phase, rendering, uid, run, environment, kind, plan?, at: ctx.clock.now(),
//     outcome?, threw?, process? }
// and offers callsOf(unit, phase = 'apply'), whenCalled(unit, phase = 'apply') (resolves with the
// call once it has started), hold(unit, phase = 'apply') (returns release(); a held call waits
// until release(), or ends uncertain when ctx.cancel aborts first), and reset() (forgets calls).

import { createHash } from 'node:crypto';
import { LineSplitter } from '../../dist/exec/lines.js';

/** Outputs for a receipt: plain values are not sensitive; wrap secrets with secret(). */
export function receipt(outputs = {}) {
  const out = {};
  for (const [k, v] of Object.entries(outputs))
    out[k] = v && typeof v === 'object' && v[SECRET] ? { value: v.value, sensitive: true } : { value: v, sensitive: false };
  return { result: 'receipt', outputs: out };
}

const SECRET = Symbol('secret');

/** Marks an output value sensitive, for receipt(). */
export function secret(value) {
  return { [SECRET]: true, value };
}

export function failed(reason, { retryable = true, acknowledgementRequired = false } = {}) {
  const out = { result: 'failed', reason, retryable };
  if (acknowledgementRequired) out.acknowledgementRequired = true;
  return out;
}

export function uncertain(reason) {
  return { result: 'uncertain', reason };
}

const digestOf = (value) =>
  `sha256:${createHash('sha256')
    .update(JSON.stringify(value ?? null))
    .digest('hex')}`;

const PHASE_DEFAULTS = {
  prepare: (ctx) => ({ result: 'prepared', rendering: ctx.rendering }),
  plan: (ctx) => ({ result: 'planned', plan: { digest: digestOf(ctx.rendering), summary: '+1 ~0 -0', changes: 'some' } }),
  apply: () => receipt({}),
  teardown: () => ({ result: 'removed' }),
  check: () => ({ result: 'checked', drift: 'in-sync' }),
  readOutputs: () => ({ result: 'read', outputs: {} }),
};

const isOutcome = (v) => v && typeof v === 'object' && !Array.isArray(v) && typeof v.result === 'string';

/** Per-unit option lookup: a value for all units, a map by unit, or a function of the call. */
function perUnit(option, call, ctx) {
  if (option === undefined || option === null) return undefined;
  if (typeof option === 'function') return option(call, ctx);
  if (typeof option === 'string' || typeof option === 'number' || Array.isArray(option)) return option;
  return option[call.unit];
}

export function fakeDriver(options = {}) {
  const calls = [];
  const attempts = new Map(); // `${phase}\0${unit}` => calls answered so far
  const holds = new Map(); // `${phase}\0${unit}` => Promise
  const waiters = [];
  const key = (phase, unit) => `${phase}\0${unit}`;

  /** The Answer for this call: a phase option as true / outcome / function / array / per-unit map. */
  function answerFor(phase, option, call) {
    if (option === true || option === undefined) return PHASE_DEFAULTS[phase];
    if (isOutcome(option) || typeof option === 'function' || Array.isArray(option)) return option;
    const answer = call.unit in option ? option[call.unit] : option.default;
    return answer === undefined || answer === true ? PHASE_DEFAULTS[phase] : answer;
  }

  async function resolveAnswer(answer, ctx, call) {
    if (Array.isArray(answer)) {
      const n = attempts.get(key(call.phase, call.unit)) ?? 0;
      attempts.set(key(call.phase, call.unit), n + 1);
      answer = answer[Math.min(n, answer.length - 1)];
    }
    return typeof answer === 'function' ? answer(ctx, call) : answer;
  }

  function record(phase, ctx, plan) {
    const call = {
      unit: ctx.unit,
      phase,
      rendering: ctx.rendering,
      uid: ctx.uid,
      run: ctx.run,
      environment: ctx.environment,
      kind: ctx.kind,
      at: ctx.clock?.now?.(),
    };
    if (plan !== undefined) call.plan = plan;
    calls.push(call);
    for (const w of [...waiters]) {
      if (w.unit === call.unit && w.phase === phase) {
        waiters.splice(waiters.indexOf(w), 1);
        w.resolve(call);
      }
    }
    return call;
  }

  /** Waits for a hold's release; true when cancellation came first. */
  async function held(call, ctx) {
    const hold = holds.get(key(call.phase, call.unit));
    if (!hold) return false;
    if (ctx.cancel?.aborted) return true;
    let onAbort;
    const aborted = new Promise((resolve) => {
      onAbort = () => resolve(true);
      ctx.cancel?.addEventListener('abort', onAbort, { once: true });
    });
    try {
      return await Promise.race([hold.then(() => false), aborted]);
    } finally {
      ctx.cancel?.removeEventListener('abort', onAbort);
    }
  }

  async function startProcess(call, ctx) {
    const argv = perUnit(options.startProcess, call, ctx);
    if (!argv) return;
    const out = new LineSplitter((l) => ctx.toolOutput?.(l));
    const err = new LineSplitter((l) => ctx.toolOutput?.(l));
    call.process = await ctx.runner.run(argv, {
      cwd: ctx.projectDir,
      env: { ...ctx.baseEnv, NYL_OUTPUTS: ctx.outputsPath, NYL_UNIT: ctx.unit, NYL_RUN: ctx.run, NYL_UID: ctx.uid, NYL_ENVIRONMENT: ctx.environment },
      cancel: ctx.cancel,
      killGraceMs: ctx.killGraceMs,
      group: true,
      onStdout: (b) => out.push(b),
      onStderr: (b) => err.push(b),
    });
    out.flush();
    err.flush();
  }

  async function phase(name, option, ctx, plan) {
    const call = record(name, ctx, plan);
    try {
      if (options.onCall) await options.onCall(call, ctx);
      if (await held(call, ctx)) {
        call.outcome = uncertain(`cancelled while running (held ${name} of ${call.unit})`);
        return call.outcome;
      }
      if (name === 'apply') {
        const delay = perUnit(options.delayMs, call, ctx);
        if (delay > 0) {
          await ctx.clock.sleep(delay, ctx.cancel);
          if (ctx.cancel?.aborted) {
            call.outcome = uncertain(`cancelled while running (after ${ctx.clock.now() - call.at} ms)`);
            return call.outcome;
          }
        }
        for (const l of perUnit(options.toolOutput, call, ctx) ?? []) ctx.toolOutput?.({ bytes: Buffer.from(`${l}\n`), text: l });
        await startProcess(call, ctx);
        const message = perUnit(options.throws, call, ctx);
        if (message !== undefined && message !== null && message !== false) throw new Error(String(message));
      }
      call.outcome = await resolveAnswer(answerFor(name, option, call), ctx, call);
      return call.outcome;
    } catch (error) {
      call.threw = error;
      throw error;
    }
  }

  const driver = {
    kind: options.kind ?? 'Command',
    version: options.version ?? 'fake/1',
    defaultRecovery: options.defaultRecovery ?? 'manual',
    shellTextFields: options.shellTextFields ?? [],
    secretFields: options.secretFields ?? ['/env'],
    ...(options.spec !== undefined ? { spec: options.spec } : {}),
    ...(options.actionFields !== undefined ? { actionFields: options.actionFields } : {}),
    ...(options.removalUnclaimed !== undefined ? { removalUnclaimed: options.removalUnclaimed } : {}),
    apply: (ctx, plan) => phase('apply', options.apply, ctx, plan),
    calls,
    callsOf: (unit, phaseName = 'apply') => calls.filter((c) => c.unit === unit && c.phase === phaseName),
    whenCalled(unit, phaseName = 'apply') {
      const done = calls.find((c) => c.unit === unit && c.phase === phaseName);
      if (done) return Promise.resolve(done);
      return new Promise((resolve) => waiters.push({ unit, phase: phaseName, resolve }));
    },
    hold(unit, phaseName = 'apply') {
      let release;
      holds.set(key(phaseName, unit), new Promise((resolve) => (release = resolve)));
      return () => {
        holds.delete(key(phaseName, unit));
        release();
      };
    },
    reset() {
      calls.length = 0;
      attempts.clear();
    },
  };
  for (const name of ['prepare', 'plan', 'teardown', 'check', 'readOutputs']) {
    if (options[name] !== undefined && options[name] !== false) driver[name] = (ctx) => phase(name, options[name], ctx);
  }
  return driver;
}
