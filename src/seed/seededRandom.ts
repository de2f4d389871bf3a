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
