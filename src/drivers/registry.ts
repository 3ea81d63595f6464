/**
 * Which driver executes which unit kind. Kinds without a driver yet parse and validate, and a
 * run reports them failed with a clear reason instead of guessing.
 */
import { commandDriver } from './command';
import type { Driver } from './types';

const DRIVERS = new Map<string, Driver>([[commandDriver.kind, commandDriver]]);

export function driverFor(kind: string): Driver | undefined {
  return DRIVERS.get(kind);
}

export function defaultRecovery(kind: string): 'converge' | 'manual' {
  if (kind === 'Terraform' || kind === 'OpenTofu') return 'converge';
  return DRIVERS.get(kind)?.defaultRecovery ?? 'manual';
}
