/**
 * What the planner decides on: the project, the state, and the run so far. Types only, so that the
 * planner's modules (./planner.ts, ./lifecycle.ts) share them without importing each other.
 */
import { createHash } from 'node:crypto';
import type { DriverSet } from '../drivers/registry';
import type { EnvironmentResource, Project } from '../project/types';
import type { DesiredUnitDoc, ObservedUnitDoc } from '../state/documents';
import { canonicalJson } from '../util/canonical-json';
import type { DeliveredHold, Plan, StopReason } from './actions';

/** The run's lifecycle permissions (reconcile, teardown and state delete options). */
export interface LifecycleOptions {
  /** --allow-teardown: start teardowns caused by source or a kind change. */
  allowTeardown?: boolean;
  /** --allow-dependents: tear down units that retained tombstones cite. */
  allowDependents?: boolean;
  /** --allow-incomplete: a teardown whose driver cannot claim removal removes the unit all the same. */
  allowIncomplete?: boolean;
}

/** reconcile; --leaving (only lifecycle work); `nyl teardown` (only the requested teardowns). */
export type RunMode = 'reconcile' | 'leaving' | 'teardown';

export interface RunContext {
  runId: string;
  /** --unit/--units: only these execute. */
  only?: ReadonlySet<string>;
  /** Holds delivered to the run, by unit. */
  holds?: ReadonlyMap<string, DeliveredHold>;
  /** Set once the run starts no further unit. */
  stopped?: { reason: StopReason; after?: string };
  mode?: RunMode;
  /** ISO time of the run's start: a deletion that starts records it. */
  at?: string;
  /** Units of the ownership set this run tore down: not created again before the next reconcile. */
  removed?: ReadonlySet<string>;
  /** --approve and --approve-all of the run. */
  approvals?: ApprovalGrants;
  /** --reapply with --unit: these execute although their receipts are current. */
  reapply?: ReadonlySet<string>;
  /** A --local run: a unit that is not safe to run again executes only with an approval. */
  local?: boolean;
  /** Units whose plan in this run had another digest than the approval named: the digest it had. */
  unapproved?: ReadonlyMap<string, string>;
}

/** What a run's --approve options grant: per unit (U, or U=DIGEST), and --approve-all. */
export interface ApprovalGrants {
  units: ReadonlyMap<string, { digest?: string }>;
  all: boolean;
}

/**
 * A rendering a driver's prepare phase produced, valid for the rendering it was made from:
 * `from` is the digest of that rendering (renderingDigest). A desired document records it as
 * `preparedFrom`, so that an importer or `recover` resolves the unit with the recorded
 * preparation as long as source renders the same.
 */
export interface Prepared {
  from: string;
  rendering: Record<string, unknown>;
  /**
   * Set when this is the recorded preparation standing in for a driver that found its input absent
   * on this machine: the driver's account of what is absent (one line).
   */
  absent?: string;
}

/** The digest a preparation is valid for: sha256 of the canonical JSON of the unprepared rendering. */
export function renderingDigest(rendering: Record<string, unknown>): string {
  return `sha256:${createHash('sha256').update(canonicalJson(rendering)).digest('hex')}`;
}

/** The preparation a desired document recorded, if its unit was prepared. */
export function recordedPreparation(desired: DesiredUnitDoc | undefined): Prepared | undefined {
  return desired?.preparedFrom && desired.rendering ? { from: desired.preparedFrom, rendering: desired.rendering } : undefined;
}

export interface PlanInput {
  project: Project;
  env: EnvironmentResource;
  /** state.yaml generation: incarnations of older generations are over (--fresh). */
  generation: number;
  desired: ReadonlyMap<string, DesiredUnitDoc>;
  observed: ReadonlyMap<string, ObservedUnitDoc>;
  /** The source commit being resolved: recorded in desired documents, named when a hold waits. */
  sourceCommit: string;
  /** Fresh uids for units without an incarnation (a run mints them; status has none). */
  newUids?: ReadonlyMap<string, string>;
  prepared?: ReadonlyMap<string, Prepared>;
  run?: RunContext;
  /**
   * The plan of the same run a moment ago: decisions that no progress of a run can change are
   * kept instead of decided again (the same input gives the same plan either way; this only saves
   * rendering every unit of a large environment once per wave).
   */
  carry?: Plan;
  /** The drivers whose version tags, recovery defaults and phases apply. */
  drivers: DriverSet;
  /**
   * Units whose state documents are damaged, with what is wrong (status shows them; writers
   * refuse before they plan). Nothing is decided on a document that could not be read.
   */
  damaged?: ReadonlyMap<string, string>;
  /** --allow-teardown, --allow-dependents, --allow-incomplete of the run (none for status). */
  lifecycle?: LifecycleOptions;
}
