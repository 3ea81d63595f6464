/**
 * Reading `lease.yaml`: YAML, then the shape of a lease record. A lease that cannot be read is
 * damage, never a lease that lives for ever: `nyl lease break` breaks it.
 *
 * The shape is open (fields it does not know are allowed): a lease is read by every version that
 * races for it, and a field a newer version adds must not make its live lease look damaged.
 * What every taker decides on is checked: the holder, the run, and a deadline that is a time.
 */
import { type Damage, damageOf } from '../state/damage';
import { parseDocument, type Parsed } from '../state/parse';
import type { ObjectReader } from '../state/store';
import { timeRule } from '../state/shapes';
import { constant, integer, list, object, required, string } from '../util/schema';

const text = () => string({ nonEmpty: true });
const holder = object({ name: required(text()), host: required(string()), pid: required(integer()) }, { open: true });
const leaseBreak = object({ by: required(text()), reason: required(string()), at: required(text()) }, { open: true });

const LEASE_SHAPE = object(
  {
    apiVersion: required(text()),
    kind: required(constant('Lease')),
    environment: required(text()),
    run: required(text()),
    operation: required(text()),
    holder: required(holder),
    acquiredAt: required(text()),
    deadline: required(string({ nonEmpty: true, rule: timeRule })),
    renewedAt: text(),
    broken: leaseBreak,
    brokenHolder: object({ run: required(text()), operation: required(text()), holder: required(holder) }, { open: true }),
    unrecordedBreaks: list(
      object(
        {
          by: required(text()),
          reason: required(string()),
          at: required(text()),
          run: required(text()),
          operation: required(text()),
          holder: required(string()),
        },
        { open: true },
      ),
    ),
  },
  { open: true },
);

/** Parses a lease.yaml as T (the lease record of ./record.ts, which reads through this module). */
export function parseLeaseDocument<T>(textValue: string): Parsed<T> {
  return parseDocument<T>(LEASE_SHAPE, textValue);
}

/**
 * What is wrong with a lease ref whose lease.yaml did not parse (`parsed`), or that holds none:
 * a commit without lease.yaml, or a ref that is not a commit at all.
 */
export async function leaseDamage(reader: ObjectReader, ref: string, oid: string, parsed: Parsed<unknown> | undefined): Promise<Damage> {
  if (parsed && !parsed.ok) return damageOf('lease', { ref, object: oid, path: 'lease.yaml' }, parsed.flaw);
  const target = await reader.read(oid);
  if (target?.type === 'commit') return damageOf('lease', { ref, object: oid, path: 'lease.yaml' }, { problem: 'the lease commit holds no lease.yaml' });
  return damageOf('lease', { ref, object: oid }, { problem: `the ref points at ${target ? `a ${target.type}` : 'a missing object'}, not a lease commit` });
}
