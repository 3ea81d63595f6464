/**
 * The driver interface: one implementation per unit kind. The run engine gives a driver the
 * rendered spec and a workspace; the driver executes, and reports a receipt's outputs, a
 * failure (retryable or not), or an uncertain outcome. Drivers never touch state.
 */
import type { Clock } from '../util/clock';
import type { ProcessRunner } from '../exec/process';

export interface DriverContext {
  environment: string;
  unit: string;
  uid: string;
  run: string;
  kind: string;
  rendering: Record<string, unknown>;
  /** The project directory of the source commit, materialized for this run (shared by its units). */
  projectDir: string;
  /** Where the tool may write its outputs (a JSON object), passed as NYL_OUTPUTS. */
  outputsPath: string;
  /** A private scratch directory for this execution, created on first call. */
  scratchDir: () => string;
  runner: ProcessRunner;
  clock: Clock;
  /** The environment tools inherit (the invoking process's, never spliced into shell text). */
  baseEnv: NodeJS.ProcessEnv;
  /** Cancellation: forwarded to running tools. */
  cancel: AbortSignal;
  /** Grace period after a forwarded signal before a tool is killed. */
  killGraceMs: number;
  /** Tool output, one line at a time (the engine prefixes and routes it). */
  toolOutput: (line: string) => void;
}

export type DriverOutcome =
  | { result: 'receipt'; outputs: Record<string, unknown> }
  | { result: 'failed'; reason: string; retryable: boolean; acknowledgementRequired?: boolean }
  | { result: 'uncertain'; reason: string };

export interface Driver {
  kind: string;
  version: string;
  /** Default recovery policy of the kind. */
  defaultRecovery: 'converge' | 'manual';
  execute(ctx: DriverContext): Promise<DriverOutcome>;
}
