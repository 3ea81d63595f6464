/**
 * Terraform's own state as Nyl sees it, and what a receipt records of it.
 *
 * The state is read without a process where the format allows (a `local` backend's state file,
 * JSON version 4), else with `state pull`, Terraform's own way to read any backend. What Nyl
 * keeps of it: the outputs (the receipt's), and its identity (the receipt's `toolState`): the
 * backend, the workspace, the lineage (the UUID Terraform gives a state when it creates it, kept
 * by every later write), the serial, and the managed resource instances.
 *
 * The verdict compares the state a step is about to work on with what the unit's receipt recorded,
 * before anything is planned against it. The lineage says which state it is, the serial how far
 * it got (every write adds to it):
 * - lost: the receipt recorded resources, and the state is gone (a deleted or emptied file, a
 *   `backendConfig` or workspace pointing at an empty location), replaced by another lineage,
 *   rolled back to a serial older than the receipt's (a restored backup that misses what the last
 *   apply made), or emptied of every resource while no attempt of the unit ran since its receipt
 *   (a `state rm` of everything): planning now would create them again next to what exists
 *   (NYL-BACKEND-STATE-LOST). A state the unit's own interrupted apply emptied (a replacement
 *   that destroyed before it created) is its own: an attempt since the receipt says so;
 * - shared: a unit without a receipt finds a state that already holds resources that neither a
 *   receipt of the unit nor its own last attempt wrote: another environment's or unit's, or made
 *   outside Nyl (NYL-BACKEND-SHARED). An uncertain attempt that recorded no state (its Nyl died
 *   while it ran) may have written any: the state is taken as the unit's own.
 * An operator's acknowledgement (`nyl recover --unit U --retry --reason`, a `--reapply` with its
 * reason) lets the unit go on; `sharedState: true` allows the second case for good.
 */
import { readFileSync } from 'node:fs';
import type { DriverContext, Outputs, RecordedReceipt } from '../contract';
import { type BackendIdentity, DEFAULT_WORKSPACE, describeBackend, sameBackend } from './backend';

/** A state as read: absent (no state written yet, or deleted), or its identity and outputs. */
export interface StateSnapshot {
  exists: boolean;
  lineage: string;
  serial: number;
  /** Managed resource instance addresses, sorted. */
  resources: string[];
  outputs: Outputs;
}

/** What a receipt records of the state its execution left (DriverContext.receipt.toolState); a type, not an interface, so that it is the Record the contract carries without a cast. */
type ToolStateRecord = {
  backend: BackendIdentity;
  workspace: string;
  lineage: string;
  serial: number;
  /** How many managed resource instances the state held. */
  resources: number;
  /** The first ADDRESS_LIMIT of their addresses, for messages. */
  addresses: string[];
};

/** How many resource addresses a receipt keeps: enough to recognize a state, small enough to read on every run. */
const ADDRESS_LIMIT = 20;

export const NO_STATE: StateSnapshot = { exists: false, lineage: '', serial: 0, resources: [], outputs: {} };

interface RawState {
  version?: unknown;
  lineage?: unknown;
  serial?: unknown;
  outputs?: Record<string, { value?: unknown; sensitive?: unknown }>;
  resources?: { mode?: unknown; type?: unknown; name?: unknown; module?: unknown; instances?: { index_key?: unknown }[] }[];
}

function indexSuffix(key: unknown): string {
  if (key === undefined || key === null) return '';
  return typeof key === 'number' ? `[${key}]` : `[${JSON.stringify(key)}]`;
}

function addressesOf(raw: RawState): string[] {
  const out: string[] = [];
  for (const r of raw.resources ?? []) {
    if (r.mode !== 'managed') continue;
    const base = `${typeof r.module === 'string' ? `${r.module}.` : ''}${String(r.type)}.${String(r.name)}`;
    for (const i of r.instances ?? []) out.push(`${base}${indexSuffix(i.index_key)}`);
  }
  return out.sort();
}

/** A state document (`state pull`, a local state file); undefined when Nyl cannot read it (another format, encrypted). */
export function parseState(text: string): StateSnapshot | undefined {
  if (text.trim() === '') return NO_STATE;
  let raw: RawState;
  try {
    raw = JSON.parse(text) as RawState;
  } catch {
    return undefined;
  }
  if (typeof raw !== 'object' || raw === null || raw.version !== 4 || typeof raw.lineage !== 'string') return undefined;
  const outputs: Outputs = {};
  for (const [name, o] of Object.entries(raw.outputs ?? {})) outputs[name] = { value: o?.value ?? null, sensitive: o?.sensitive === true };
  return { exists: true, lineage: raw.lineage, serial: typeof raw.serial === 'number' ? raw.serial : 0, resources: addressesOf(raw), outputs };
}

/** A local backend's state file, read directly; undefined when it must be read with `state pull` instead. */
export function readLocalState(path: string): StateSnapshot | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? NO_STATE : undefined;
  }
  return parseState(text);
}

/** What a receipt (or a failed attempt's condition) records of a state: ApplyOutcome.toolState. */
export function toolStateOf(state: StateSnapshot, backend: BackendIdentity, workspace: string): Record<string, unknown> {
  const record: ToolStateRecord = {
    backend,
    workspace,
    lineage: state.lineage,
    serial: state.serial,
    resources: state.resources.length,
    addresses: state.resources.slice(0, ADDRESS_LIMIT),
  };
  return record;
}

/** A recorded tool state, if it is one this driver wrote. */
function asToolState(recorded: Record<string, unknown> | undefined): ToolStateRecord | undefined {
  const t = recorded as Partial<ToolStateRecord> | undefined;
  if (!t || typeof t.lineage !== 'string' || typeof t.resources !== 'number' || typeof t.backend?.fingerprint !== 'string') return undefined;
  return t as ToolStateRecord;
}

/** The receipt's record, if it is one this driver wrote. */
function recordedToolState(receipt: RecordedReceipt | undefined): ToolStateRecord | undefined {
  return asToolState(receipt?.toolState);
}

type StateVerdict = { ok: true } | { ok: false; code: 'NYL-BACKEND-STATE-LOST' | 'NYL-BACKEND-SHARED'; reason: string };

/** What a step is about to work on, compared with what the unit recorded. */
interface VerdictInput {
  unit: string;
  environment: string;
  state: StateSnapshot;
  backend: BackendIdentity;
  workspace: string;
  receipt: RecordedReceipt | undefined;
  /** The current incarnation's last attempt without a receipt, if any (DriverContext.attempt). */
  attempt?: DriverContext['attempt'];
  /** What the step would do with the state: plan and apply (the default), or destroy. */
  phase?: 'teardown';
  sharedState: boolean;
}

function count(n: number): string {
  return `${n} resource${n === 1 ? '' : 's'}`;
}

function listed(addresses: readonly string[], total: number): string {
  const shown = addresses.slice(0, 3).join(', ');
  return total > 3 ? `${shown}, ...` : shown;
}

/** Where the state is now, for a message: the backend, and the workspace unless it is the default. */
function where(backend: BackendIdentity, workspace: string): string {
  return `${describeBackend(backend)}${workspace !== DEFAULT_WORKSPACE ? ` (workspace ${workspace})` : ''}`;
}

/** What going on would do, for the reason. */
function consequence(input: VerdictInput): string {
  return input.phase === 'teardown'
    ? 'A teardown now would destroy nothing of what the receipt recorded and claim its removal'
    : 'Planning now would create them all again next to the ones that exist';
}

function lost(input: VerdictInput, recorded: ToolStateRecord, now: string): StateVerdict {
  const moved = sameBackend(recorded.backend, input.backend) ? '' : ` The backend changed from ${where(recorded.backend, recorded.workspace)}.`;
  const reason = `the Terraform state of ${input.unit} ${now}, while its receipt (run ${input.receipt!.run}) recorded lineage ${recorded.lineage} with ${count(recorded.resources)} (${listed(recorded.addresses, recorded.resources)}).${moved} ${consequence(input)}`;
  return { ok: false, code: 'NYL-BACKEND-STATE-LOST', reason };
}

/** A state of the receipt's lineage: the unit's, unless it went back in time, or lost everything without the unit. */
function sameLineage(input: VerdictInput, recorded: ToolStateRecord): StateVerdict {
  const { state } = input;
  const at = where(input.backend, input.workspace);
  if (state.serial < recorded.serial)
    return lost(
      input,
      recorded,
      `was rolled back: ${at} holds serial ${state.serial} of lineage ${state.lineage}, older than the receipt's serial ${recorded.serial}`,
    );
  if (state.resources.length === 0 && recorded.resources > 0 && !input.attempt)
    return lost(input, recorded, `was emptied: ${at} holds lineage ${state.lineage} without any resource, and no run of the unit did that`);
  return { ok: true };
}

/** The verdict against the current incarnation's receipt. */
function againstReceipt(input: VerdictInput, recorded: ToolStateRecord): StateVerdict {
  const { state } = input;
  const at = where(input.backend, input.workspace);
  if (state.exists && state.lineage === recorded.lineage) return sameLineage(input, recorded);
  // Another state, or none: what the receipt recorded is not there.
  if (recorded.resources === 0) return foreign(input);
  if (!state.exists) return lost(input, recorded, `is gone: ${at} holds no state`);
  if (state.resources.length === 0) return lost(input, recorded, `was replaced by an empty one at ${at} (lineage ${state.lineage})`);
  return lost(
    input,
    recorded,
    `was replaced: ${at} holds lineage ${state.lineage} with ${count(state.resources.length)} (${listed(state.resources, state.resources.length)})`,
  );
}

/** A state with resources that no receipt of this unit recorded is another's, unless the unit shares it on purpose. */
function foreign(input: VerdictInput): StateVerdict {
  const { state } = input;
  if (state.resources.length === 0 || input.sharedState) return { ok: true };
  const at = where(input.backend, input.workspace);
  const reason = `${at} already holds a Terraform state (lineage ${state.lineage}) with ${count(state.resources.length)} (${listed(state.resources, state.resources.length)}) that no receipt of ${input.unit} in ${input.environment} recorded: another environment's or unit's state, or one made outside Nyl. ${input.phase === 'teardown' ? 'A teardown now would destroy them' : 'Going on would take those resources over, and a teardown would destroy them'}`;
  return { ok: false, code: 'NYL-BACKEND-SHARED', reason };
}

/**
 * The verdict of a unit without a receipt of its current incarnation: a non-empty state must be
 * its own, one an earlier incarnation's receipt or this incarnation's last attempt recorded.
 */
function withoutReceipt(input: VerdictInput): StateVerdict {
  const { state, attempt } = input;
  const lineages = [recordedToolState(input.receipt), asToolState(attempt?.toolState)];
  if (lineages.some((t) => t?.lineage === state.lineage)) return { ok: true };
  if (attempt?.uncertain && !attempt.toolState) return { ok: true };
  return foreign(input);
}

/**
 * Is the state the one the unit's receipt recorded? A receipt of this driver is compared in full;
 * a receipt from before Nyl recorded tool states only proves that a state existed.
 */
export function stateVerdict(input: VerdictInput): StateVerdict {
  const { receipt } = input;
  if (!receipt?.current) return withoutReceipt(input);
  const recorded = recordedToolState(receipt);
  if (recorded) return againstReceipt(input, recorded);
  if (input.state.exists) return { ok: true };
  const reason = `the Terraform state of ${input.unit} is gone: ${where(input.backend, input.workspace)} holds no state, although the unit has a receipt (run ${receipt.run}). ${consequence(input)}`;
  return { ok: false, code: 'NYL-BACKEND-STATE-LOST', reason };
}

/** A note for the plan when the backend moved and the state went with it. */
export function backendChange(receipt: RecordedReceipt | undefined, backend: BackendIdentity, workspace: string): string | undefined {
  const recorded = receipt?.current ? recordedToolState(receipt) : undefined;
  if (!recorded) return undefined;
  if (sameBackend(recorded.backend, backend) && recorded.workspace === workspace) return undefined;
  const [before, after] = [where(recorded.backend, recorded.workspace), where(backend, workspace)];
  return before === after ? `backend settings of ${after} changed` : `backend changed from ${before} to ${after}`;
}
