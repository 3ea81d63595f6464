/**
 * Which driver executes which unit kind. A kind without a driver yet still validates and renders
 * (./kinds.ts); a run reports its units failed with a clear reason instead of guessing.
 */
import { commandDriver } from './command/index';
import { ociImageDriver } from './oci-image/index';
import { openTofuDriver, terraformDriver } from './terraform/index';
import type { Driver, KindDescriptor } from './contract';
import type { KindSet } from './kinds';

/** Kinds that validate and render but have no driver wired here yet (none today). */
const PENDING_KINDS: readonly KindDescriptor[] = [];

const SHIPPED: readonly Driver[] = [commandDriver, terraformDriver, openTofuDriver, ociImageDriver];

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
export const BUILTIN_DRIVERS: DriverSet = new Drivers([...SHIPPED], PENDING_KINDS);

/** The shipped drivers with some replaced or added (tests: fake drivers): a later driver of a kind wins. */
export function withDrivers(...drivers: Driver[]): DriverSet {
  return new Drivers([...SHIPPED, ...drivers], PENDING_KINDS);
}
