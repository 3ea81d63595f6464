/**
 * Which driver executes which unit kind. A kind without a driver yet still validates and renders
 * (./kinds.ts); a run reports its units failed with a clear reason instead of guessing.
 */
import { commandDriver as commandPhases } from './command';
import type { Driver, KindDescriptor } from './contract';
import { COMMAND_KIND, type KindSet, PENDING_KINDS } from './kinds';

const commandDriver: Driver = { ...commandPhases, ...COMMAND_KIND };

/** Which driver executes which kind: a port, so that tests run the engine with fake drivers. */
export interface DriverSet extends KindSet {
  driver(kind: string): Driver | undefined;
}

class Drivers implements DriverSet {
  private readonly drivers: Map<string, Driver>;
  private readonly kinds: Map<string, KindDescriptor>;

  constructor(drivers: Driver[], pending: readonly KindDescriptor[]) {
    this.drivers = new Map(drivers.map((d) => [d.kind, d]));
    this.kinds = new Map([...pending.map((k) => [k.kind, k] as const), ...this.drivers]);
  }

  driver(kind: string): Driver | undefined {
    return this.drivers.get(kind);
  }

  descriptor(kind: string): KindDescriptor | undefined {
    return this.kinds.get(kind);
  }
}

/** The drivers Nyl ships. */
export const BUILTIN_DRIVERS: DriverSet = new Drivers([commandDriver], PENDING_KINDS);

/** The shipped drivers with some replaced or added (tests: fake drivers). */
export function withDrivers(...drivers: Driver[]): DriverSet {
  const replaced = new Set(drivers.map((d) => d.kind));
  return new Drivers([commandDriver, ...drivers].filter((d) => !replaced.has(d.kind) || drivers.includes(d)), PENDING_KINDS.filter((k) => !replaced.has(k.kind)));
}
