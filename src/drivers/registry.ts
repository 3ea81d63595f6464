/**
 * Every unit kind Nyl knows, its spec schema, and the driver that executes it. A kind without a
 * driver yet still validates and renders; a run reports its units failed with a clear reason
 * instead of guessing. The only place outside a kind's own folder that names kinds: the source
 * model asks here (UNIT_KINDS, descriptor(kind).spec, isShellTextField).
 */
import { commandDriver as commandImplementation } from './command';
import { commandSpec } from './command/spec';
import type { Driver, KindDescriptor } from './contract';
import { ociImageSpec } from './oci-image/spec';
import { openTofuSpec, terraformSpec } from './terraform/spec';

const commandDriver: Driver = { ...commandImplementation, spec: commandSpec };

/** Kinds whose driver arrives later: what the source model and execution keys need of them. */
const PENDING_KINDS: KindDescriptor[] = [
  { kind: 'Terraform', version: 'terraform/1', defaultRecovery: 'converge', shellTextFields: [], spec: terraformSpec },
  { kind: 'OpenTofu', version: 'opentofu/1', defaultRecovery: 'converge', shellTextFields: [], spec: openTofuSpec },
  { kind: 'OciImage', version: 'ociimage/1', defaultRecovery: 'manual', shellTextFields: [], spec: ociImageSpec },
];

/** Which driver executes which kind: a port, so that tests run the engine with fake drivers. */
export interface DriverSet {
  driver(kind: string): Driver | undefined;
  descriptor(kind: string): KindDescriptor | undefined;
}

class Drivers implements DriverSet {
  private readonly drivers: Map<string, Driver>;
  private readonly kinds: Map<string, KindDescriptor>;

  constructor(drivers: Driver[], pending: KindDescriptor[]) {
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

/** Every unit kind, in a stable order. */
export const UNIT_KINDS = ['Command', 'Terraform', 'OpenTofu', 'OciImage'] as const;
export type UnitKind = (typeof UNIT_KINDS)[number];

/** The version tag of a kind, part of every execution key (kind/1 for a kind nobody knows). */
export function versionOf(kind: string, drivers: DriverSet = BUILTIN_DRIVERS): string {
  return drivers.descriptor(kind)?.version ?? `${kind.toLowerCase()}/1`;
}

export function defaultRecovery(kind: string, drivers: DriverSet = BUILTIN_DRIVERS): 'converge' | 'manual' {
  return drivers.descriptor(kind)?.defaultRecovery ?? 'manual';
}

/** Does this spec field hold shell text (where references are refused)? */
export function isShellTextField(kind: string, pointer: string): boolean {
  return BUILTIN_DRIVERS.descriptor(kind)?.shellTextFields.includes(pointer) ?? false;
}
