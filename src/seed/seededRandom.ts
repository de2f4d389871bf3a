/**
 * mulberry32: a small, fast, deterministic generator of numbers in [0, 1). The demo data, the
 * benchmark's data set and operation mix, the generated test documents and the fault soaks all
 * draw from it, so a seed repeats a run exactly.
 */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** One element of `list`, drawn from `random`. */
export const pick = <T>(random: () => number, list: readonly T[]): T => list[Math.floor(random() * list.length)] as T;

/** `count` distinct elements of `list` (count <= list.length), in the order drawn. */
export function pickDistinct<T>(random: () => number, list: readonly T[], count: number): T[] {
  const chosen = new Set<number>();
  while (chosen.size < count) chosen.add(Math.floor(random() * list.length));
  return [...chosen].map((index) => list[index] as T);
}
