/**
 * What the phases of a wave share: the run's runtime, state and ref, its lease and group commit,
 * the signals it watches, how it prints, its drivers, workspace and keys. Its own module so that
 * the wave (./execute-wave.ts) and the driver phases it runs (./run-driver.ts, ./prepare-wave.ts)
 * depend on it and not on each other.
 */
import type { DriverSet } from '../drivers/registry';
import type { LeaseHandle } from '../lease/lease';
import type { Runtime } from '../util/runtime';
import type { GroupCommit } from './checkpoints';
import type { RunRef } from './run-ref';
import type { RunState } from './run-state';
import type { RunKeys } from './secrets';
import type { SignalWatch } from './signal-watch';
import type { UnitOutput } from './unit-output';
import type { UnitProgress } from './progress';
import type { Workspace } from './workspace';

export interface WaveContext {
  rt: Runtime;
  state: RunState;
  runRef: RunRef;
  lease: LeaseHandle;
  commits: GroupCommit;
  signals: SignalWatch;
  output: UnitOutput;
  /** Says which units run long: a line every interval, or the terminal's status line. */
  progress: UnitProgress;
  drivers: DriverSet;
  workspace: Workspace;
  concurrency: number;
  failFast: boolean;
  /** The key ring for sensitive outputs, read from the environment when a unit first needs it. */
  keys: RunKeys;
}
