// A small seeded generator (mulberry32): the same seed draws the same numbers, so a test that
// injects faults or picks moments at random can be replayed from the seed it prints.

/** A function returning numbers in [0, 1), the same sequence for the same seed. */
export function seededRandom(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
