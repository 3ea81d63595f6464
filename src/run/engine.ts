/**
 * Executes a plan: waves of ready units in dependency order until nothing is ready.
 *
 * Durability (DESIGN.md section 3, invariant 3): before a wave's drivers start, one push records
 * in the run ref that they started; after the wave, one push records every checkpoint. A run's
 * pushes therefore grow with its waves, not its units. Before each unit starts, the engine checks
 * cancellation, a lost lease and --fail-fast; a unit it then does not start is checkpointed
 * `not-started`, so an importer never mistakes it for an uncertain one.
 */
import { byCodeUnits } from '../util/compare';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultRecovery, driverFor } from '../drivers/registry';
import type { DriverOutcome } from '../drivers/types';
import type { Diagnostic } from '../errors/diagnostic';
import type { Identity } from '../git/object-writer';
import type { LeaseHandle } from '../lease/lease';
import { dependencyOrder } from '../project/graph';
import { ownershipSet } from '../project/selectors';
import type { EnvironmentResource, Project, UnitResource } from '../project/types';
import { currentUid, formatWait, resolveUnit } from '../plan/resolve';
import { canonicalJson } from '../project/execution-key';
import type { ConditionRecord, DesiredUnitDoc, ObservedUnitDoc } from '../state/documents';
import { isoSeconds } from '../util/clock';
import type { Runtime } from '../util/runtime';
import { uuidv7 } from '../util/uuid';
import { runPool } from './pool';
import { UnitOutput, type UnitOutputOptions } from './unit-output';
import type { HoldSignal } from './signals';
import { type Checkpoint, type RunRecordWriter, type RunUnitDoc, serializeRunUnit, unitFile } from './run-record';
import type { UnitOutcome } from './unit-result';

export interface EngineOptions {
  /** --unit/--units: execute only these. */
  only?: Set<string>;
  failFast: boolean;
  concurrency: number;
  killGraceMs: number;
  /** --quiet-unit-output and --unit-log-dir. */
  output?: UnitOutputOptions;
  /** Minimum time between signal reads inside a wave; a network remote wants it longer. */
  signalPollMs?: number;
}

export interface EngineInput {
  rt: Runtime;
  runId: string;
  author: Identity;
  project: Project;
  env: EnvironmentResource;
  sourceCommit: string;
  generation: number;
  desired: Map<string, DesiredUnitDoc>;
  observed: Map<string, ObservedUnitDoc>;
  record: RunRecordWriter;
  lease: LeaseHandle;
  /** Materializes the source commit into the given directory (once, on first use). */
  projectDir: (dest: string) => Promise<string>;
  /** Reads the hold signals delivered to the environment's runs (nyl hold while we run). */
  signals?: () => Promise<HoldSignal[]>;
  /** A cheap look whether any signal may exist (true/false), or undefined when only a read can tell. */
  signalsMayExist?: () => boolean | undefined;
  options: EngineOptions;
}

/** How often, at most, the engine reads signals between dispatches inside a wave (default). */
const SIGNAL_POLL_MS = 200;

export interface EngineResult {
  outcomes: Map<string, UnitOutcome>;
  /** Units whose driver started, in dispatch order. */
  dispatchOrder: string[];
  /** Every unit of the ownership set in dependency order. */
  order: string[];
  /** The unit after whose failure --fail-fast stopped the run. */
  stoppedAfter?: string;
  cancelled: boolean;
  lost: boolean;
  errors: Diagnostic[];
  /** The observed documents as the run leaves them (receipts and conditions it recorded). */
  observed: Map<string, ObservedUnitDoc>;
  /** Holds delivered to the run, by unit (the first signal per unit). */
  holds: Map<string, HoldSignal>;
  /** Every signal the run read; its transition push deletes them. */
  signals: HoldSignal[];
}

interface Ready {
  unit: UnitResource;
  uid: string;
  executionKey: string;
  rendering: Record<string, unknown>;
  why: string;
  desired: DesiredUnitDoc;
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)}s`;
}

function sameDecision(a: DesiredUnitDoc | undefined, b: DesiredUnitDoc): boolean {
  if (!a) return false;
  const strip = (d: DesiredUnitDoc) => ({ ...d, source: undefined });
  return canonicalJson(strip(a)) === canonicalJson(strip(b));
}

export async function runEngine(input: EngineInput): Promise<EngineResult> {
  const { rt, env, options } = input;
  const owned = ownershipSet(input.project, env);
  const ownedNames = new Set(owned.map((u) => u.name));
  const byName = new Map(owned.map((u) => [u.name, u]));
  const order = dependencyOrder(new Map(owned.map((u) => [u.name, { dependsOn: u.dependsOn.filter((d) => ownedNames.has(d)) }])));
  const outcomes = new Map<string, UnitOutcome>();
  const skipped = new Set<string>();
  const newUids = new Map<string, string>();
  const observed = new Map(input.observed);
  const dispatchOrder: string[] = [];
  const errors: Diagnostic[] = [];
  const holds = new Map<string, HoldSignal>();
  const seenSignals: HoldSignal[] = [];
  const result: EngineResult = { outcomes, dispatchOrder, order, cancelled: false, lost: false, errors, observed, holds, signals: seenSignals };
  let lastPoll = -Infinity;
  const pollSignals = async (force: boolean): Promise<void> => {
    if (!input.signals) return;
    const now = rt.clock.now();
    if (!force) {
      // Before each unit: on this machine a look at the ref files tells exactly; over a network a
      // read costs a fetch, so it happens at most every signalPollMs between the waves' reads.
      const hint = input.signalsMayExist?.();
      if (hint === false) return;
      if (hint === undefined && now - lastPoll < (options.signalPollMs ?? SIGNAL_POLL_MS)) return;
    }
    lastPoll = now;
    for (const s of await input.signals()) {
      if (seenSignals.some((x) => x.ref === s.ref)) continue;
      seenSignals.push(s);
      if (!holds.has(s.unit)) holds.set(s.unit, s);
    }
  };
  const unitOutput = new UnitOutput(env.name, options.output ?? { quiet: false }, rt.log);

  const outputsOf = (name: string): Record<string, unknown> | undefined => {
    const o = outcomes.get(name);
    const obs = observed.get(name);
    if (o && (o.result === 'executed' || o.result === 'current')) return obs?.receipt?.outputs ?? {};
    if (o?.result === 'held' && obs?.receipt) return obs.receipt.outputs ?? {};
    return undefined;
  };

  const uidOf = (name: string): string => {
    const existing = currentUid(input.desired.get(name), input.generation);
    if (existing) return existing;
    let uid = newUids.get(name);
    if (!uid) {
      uid = uuidv7(rt.clock.now());
      newUids.set(name, uid);
    }
    return uid;
  };

  const finalize = (name: string, kind: string, outcome: Omit<UnitOutcome, 'name' | 'kind' | 'dispatched'> & { dispatched?: boolean }) => {
    outcomes.set(name, { name, kind, dispatched: false, ...outcome });
  };

  /** One pass over the units: finalizes what is decided, returns what is ready. */
  const assess = (): Ready[] => {
    const ready: Ready[] = [];
    for (const name of order) {
      if (outcomes.has(name) || skipped.has(name)) continue;
      const unit = byName.get(name)!;
      const desired = input.desired.get(name);
      const obs = observed.get(name);
      if (desired?.lifecycle?.state === 'held') {
        finalize(name, unit.kind, heldOutcome(unit, desired, obs));
        continue;
      }
      const signal = holds.get(name);
      if (signal) {
        finalize(name, unit.kind, { result: 'held', detail: `held by ${signal.by}${signal.reason ? ` (${signal.reason})` : ''}, delivered to this run` });
        continue;
      }
      const uid = uidOf(name);
      const condition = obs?.uid === uid ? obs.condition : undefined;
      const r = resolveUnit(unit, env, uid, outputsOf);
      if (r.errors.length > 0) {
        errors.push(...r.errors);
        finalize(name, unit.kind, { result: 'blocked', detail: r.errors[0]!.message, uid });
        continue;
      }
      if (r.waits.length > 0) {
        const open = r.waits.filter((w) => ownedNames.has(w.unit) && !outcomes.has(w.unit) && !skipped.has(w.unit));
        if (open.length === 0) {
          const stuck = r.waits[0]!;
          finalize(name, unit.kind, { result: 'blocked', detail: formatWait(stuck), waits: r.waits });
        }
        continue;
      }
      const key = r.executionKey!;
      // Uncertainty outranks a matching receipt: the effects of what ran are unknown.
      const recovery = (unit.spec.recovery as string | undefined) ?? defaultRecovery(unit.kind);
      if (condition?.type === 'uncertain' && recovery !== 'converge') {
        finalize(name, unit.kind, { result: 'uncertain', detail: condition.reason, uid, executionKey: key });
        continue;
      }
      if (condition?.type !== 'uncertain' && obs?.uid === uid && obs.receipt?.executionKey === key) {
        finalize(name, unit.kind, { result: 'current', detail: '', uid, executionKey: key });
        continue;
      }
      if (condition?.type === 'failed' && !condition.retryable) {
        finalize(name, unit.kind, { result: 'failed', detail: `${condition.reason} (needs nyl recover --retry)`, uid, executionKey: key });
        continue;
      }
      if (options.only && !options.only.has(name)) {
        skipped.add(name);
        continue;
      }
      const why = condition?.type === 'uncertain'
        ? 'converging uncertain unit'
        : condition?.type === 'failed'
          ? 'retrying failure'
          : !obs?.receipt || obs.uid !== uid
            ? 'no receipt'
            : 'execution key changed';
      const desiredDoc: DesiredUnitDoc = {
        uid,
        kind: unit.kind,
        generation: input.generation,
        source: input.sourceCommit,
        rendering: r.rendering!,
        dependsOn: unit.dependsOn,
        lifecycle: { state: 'active' },
      };
      ready.push({ unit, uid, executionKey: key, rendering: r.rendering!, why, desired: desiredDoc });
    }
    return ready;
  };

  /** A held unit changes in no way; the report names the source commit whose changes wait. */
  const heldOutcome = (unit: UnitResource, desired: DesiredUnitDoc, obs: ObservedUnitDoc | undefined) => {
    const uncertain = obs?.condition?.type === 'uncertain' && obs.uid === desired.uid;
    const now = desired.uid ? resolveUnit(unit, env, desired.uid, outputsOf) : undefined;
    const changed = !desired.uid || (now?.rendering !== undefined && desired.rendering !== undefined && canonicalJson(now.rendering) !== canonicalJson(desired.rendering));
    const detail = `${uncertain ? `held (uncertain): ${obs!.condition!.reason}` : 'held'}${changed ? `; changes from ${input.sourceCommit} wait` : ''}`;
    return { result: 'held' as const, detail, ...(uncertain ? { uncertain: true } : {}) };
  };

  const stopReason = (): string | undefined => {
    if (rt.cancel.aborted) return 'not started: the run was cancelled';
    if (input.lease.lost) return 'not started: the run lost its lease';
    // A holder that could not renew stops starting units before its lease can be taken over.
    if (rt.clock.now() >= input.lease.deadlineMs) return 'not started: the run could not renew its lease before its deadline';
    if (result.stoppedAfter) return `not started: --fail-fast stopped the run after ${result.stoppedAfter}`;
    return undefined;
  };

  let scratchRoot: string | undefined;
  let projectDir: string | undefined;
  try {
    for (;;) {
      await pollSignals(true);
      // Names break ties within a parallel wave.
      const wave = assess().sort((a, b) => byCodeUnits(a.unit.name, b.unit.name));
      if (wave.length === 0) break;
      const stop = stopReason();
      if (stop) {
        for (const r of wave) finalize(r.unit.name, r.unit.kind, { result: 'blocked', detail: stop, uid: r.uid });
        continue;
      }
      const startedAt = isoSeconds(rt.clock.now());
      const docs = new Map<string, RunUnitDoc>();
      for (const r of wave) {
        docs.set(r.unit.name, { unit: r.unit.name, uid: r.uid, kind: r.unit.kind, executionKey: r.executionKey, startedAt, desired: r.desired });
      }
      const startFiles = new Map([...docs].map(([n, d]) => [unitFile(n), serializeRunUnit(d)]));
      try {
        await input.record.write(startFiles, `nyl: start ${wave.map((r) => r.unit.name).join(', ')}\n`);
      } catch (error) {
        // These units never start: their start records must not reach the run ref later.
        input.record.discard(startFiles.keys());
        result.lost = input.lease.lost = true;
        for (const r of wave) finalize(r.unit.name, r.unit.kind, { result: 'blocked', detail: 'not started: the run lost its lease', uid: r.uid });
        throw error;
      }
      await rt.faults.reach('after-started-push');
      scratchRoot ??= mkdtempSync(join(tmpdir(), `nyl-run-${input.runId}-`));
      projectDir ??= await input.projectDir(join(scratchRoot, 'source'));
      const checkpoints = new Map<string, Checkpoint>();
      const dispatched = new Set<string>();

      await runPool(wave, options.concurrency, async (r) => {
        const name = r.unit.name;
        await pollSignals(false);
        const held = holds.get(name);
        if (held) {
          checkpoints.set(name, { result: 'not-started', finishedAt: isoSeconds(rt.clock.now()), reason: `held by ${held.by}` });
          finalize(name, r.unit.kind, { result: 'held', detail: `held by ${held.by}${held.reason ? ` (${held.reason})` : ''}, delivered to this run`, uid: r.uid });
          return;
        }
        const stopNow = stopReason();
        if (stopNow) {
          checkpoints.set(name, { result: 'not-started', finishedAt: isoSeconds(rt.clock.now()), reason: stopNow });
          finalize(name, r.unit.kind, { result: 'blocked', detail: stopNow, uid: r.uid });
          return;
        }
        dispatched.add(name);
        unitOutput.event(name, `starting ${r.unit.kind} (reconcile): ${r.why}`);
        const began = rt.clock.now();
        const driver = driverFor(r.unit.kind);
        let outcome: DriverOutcome;
        if (!driver) {
          outcome = { result: 'failed', reason: `no driver for kind ${r.unit.kind} yet`, retryable: true };
        } else {
          const root = scratchRoot!;
          let scratch: string | undefined;
          // Files and directories per unit cost syscalls for every unit; most drivers need none.
          const scratchDir = () => (scratch ??= mkdtempSync(join(root, `${name}-`)));
          outcome = await driver.execute({
            environment: env.name,
            unit: name,
            uid: r.uid,
            run: input.runId,
            kind: r.unit.kind,
            rendering: r.rendering,
            projectDir: projectDir!,
            outputsPath: join(root, `${name}.outputs.json`),
            scratchDir,
            runner: rt.runner,
            clock: rt.clock,
            baseEnv: rt.env,
            cancel: rt.cancel,
            killGraceMs: options.killGraceMs,
            toolOutput: (line) => unitOutput.tool(name, line),
          });
        }
        // A reason is one line: it goes into tables, progress lines and commit bodies.
        if (outcome.result !== 'receipt') outcome = { ...outcome, reason: outcome.reason.replace(/\s*\n\s*/g, ' ').trim() };
        const finishedAtMs = rt.clock.now();
        const durationMs = finishedAtMs - began;
        const finishedAt = isoSeconds(finishedAtMs);
        const base = { uid: r.uid, executionKey: r.executionKey, durationMs, dispatched: true, desired: r.desired };
        if (outcome.result === 'receipt') {
          unitOutput.event(name, `executed in ${seconds(durationMs)}`);
          checkpoints.set(name, { result: 'receipt', finishedAt, outputs: outcome.outputs });
          const receipt = { run: input.runId, executionKey: r.executionKey, finishedAt, outputs: outcome.outputs, desired: r.desired };
          observed.set(name, { uid: r.uid, receipt, lastRun: { run: input.runId, result: 'executed', at: finishedAt } });
          finalize(name, r.unit.kind, { ...base, result: 'executed', detail: '', receipt });
        } else {
          unitOutput.event(name, `${outcome.result} in ${seconds(durationMs)}: ${outcome.reason}`);
          const retryable = outcome.result === 'failed' ? outcome.retryable : false;
          const ack = outcome.result === 'failed' && outcome.acknowledgementRequired === true;
          checkpoints.set(name, { result: outcome.result, finishedAt, reason: outcome.reason, retryable, ...(ack ? { acknowledgementRequired: true } : {}) });
          const condition: ConditionRecord = { type: outcome.result, retryable, reason: outcome.reason, run: input.runId, since: finishedAt };
          if (ack) condition.acknowledgementRequired = true;
          const prev = observed.get(name);
          const keep: ObservedUnitDoc = prev && prev.uid === r.uid ? { ...prev } : { uid: r.uid };
          observed.set(name, { ...keep, uid: r.uid, condition, lastRun: { run: input.runId, result: outcome.result, at: finishedAt } });
          finalize(name, r.unit.kind, { ...base, result: outcome.result, detail: outcome.reason, condition });
          if (options.failFast && !result.stoppedAfter) result.stoppedAfter = name;
        }
      });

      // The pool starts units in wave order, so that is the dispatch order (deterministic).
      for (const r of wave) if (dispatched.has(r.unit.name)) dispatchOrder.push(r.unit.name);
      await rt.faults.reach('before-checkpoint-push');
      const changes = new Map<string, string>();
      for (const [name, checkpoint] of checkpoints) changes.set(unitFile(name), serializeRunUnit({ ...docs.get(name)!, checkpoint }));
      try {
        await input.record.write(changes, `nyl: checkpoint ${[...checkpoints.keys()].join(', ')}\n`);
      } catch (error) {
        result.lost = input.lease.lost = true;
        throw error;
      }
      await rt.faults.reach('after-checkpoint-push');
    }
    // A hold delivered while the last wave ran still applies: the unit is held as it ran.
    if (!rt.cancel.aborted && !input.lease.lost) await pollSignals(true);
    // Whatever is still undecided waits for something that did not get a current receipt.
    for (const name of order) {
      if (outcomes.has(name) || skipped.has(name)) continue;
      const unit = byName.get(name)!;
      const r = resolveUnit(unit, env, uidOf(name), outputsOf);
      const first = r.waits[0];
      finalize(name, unit.kind, { result: 'blocked', detail: first ? formatWait(first) : 'waits for its dependencies', waits: r.waits });
    }
    result.cancelled = rt.cancel.aborted;
    for (const [name, o] of outcomes) {
      const prev = input.desired.get(name);
      if (o.desired && sameDecision(prev, o.desired)) delete o.desired;
    }
    // Observed documents changed by the run, for the transition commit.
    for (const [name, o] of outcomes) {
      if (o.result === 'current') {
        const obs = observed.get(name);
        if (obs?.condition) {
          const { condition: _cleared, ...rest } = obs;
          observed.set(name, rest);
        }
      }
    }
    return result;
  } finally {
    if (scratchRoot) rmSync(scratchRoot, { recursive: true, force: true });
  }
}
