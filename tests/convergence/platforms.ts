import fc from "fast-check";
import { READING_NAMES, Readings, type Reading } from "../../provider/emulator/readings.js";
import { CONSOLE_MODEL_STAYS, STOPS } from "../support/emulator.js";

// Which platform a history plays (issue 53, "the histories play it"): the emulator's readings one at a time, or two
// and three at a time, drawn from every combination of them that can coexist, so that the invariant checks each
// rule under the others.

/**
 * The readings a history may be played under (issue 43): every one the emulator lists (READING_NAMES, so a reading
 * added there is drawn with no list here to update) but those whose lifecycle stops by design (STOPS) or cannot
 * repair a console's pricing by design (CONSOLE_MODEL_STAYS): the invariant holds under each, faults, kills,
 * restarts and re-imports included.
 */
export const HISTORY_READINGS: readonly Reading[] = READING_NAMES.filter(
  (r) => !STOPS.includes(r) && !CONSOLE_MODEL_STAYS.includes(r),
);

/** The readings that keep a value written in another form (the values `normalising` draws are for them). */
export const NORMALISING_READINGS: readonly Reading[] = [
  "normalised-values",
  "lowercase-aliases",
  "cut-aliases",
  "rounded-factors",
];

/** The readings that refuse an alias past CUT_ALIAS_LENGTH: a program under them declares none (docs/decisions.md, aliasMax). */
export const ALIASES_CAPPED: readonly Reading[] = ["short-aliases"];

/**
 * The readings under which a user has run `llm-accounts doctor --write --save`, as docs/decisions.md asks of such a
 * platform: the platforms that keep a value in another form (NORMALISING_READINGS): the runtime takes a cut,
 * lower-cased, rounded or range form for the value declared only under a profile that measured it (issue 53), and
 * `cut-aliases`' aliasCut places a create's mark within the cut, so a lost create can be found.
 */
export const PROFILED_READINGS: readonly Reading[] = NORMALISING_READINGS;

/**
 * Pairs of readings that give two different answers to one and the same request, so that no platform plays both:
 * in the emulator one of them shadows the other, and a history under the pair would play one reading under two names.
 */
const CONTRADICTIONS: readonly { pair: readonly [Reading, Reading]; why: string }[] = [
  {
    pair: ["short-aliases", "cut-aliases"],
    why: "an alias past 32 characters is either refused or kept cut; the emulator cuts it before it checks, so the pair plays cut-aliases alone",
  },
  {
    pair: ["refusals-200", "envelope"],
    why: "a sub-account refusal is either {success: false, code, message} or the envelope's {code, message, data}; the envelope's shape is taken first",
  },
  {
    pair: ["refusals-200", "envelope-no-data"],
    why: "a sub-account refusal is either {success: false, code, message} or the envelope's {code, message}; the envelope's shape is taken first",
  },
  {
    pair: ["list-no-total", "total-unfiltered"],
    why: "the sub-account list either answers without `total` or with one that ignores the filters; without it, total-unfiltered plays nothing",
  },
];

/**
 * Why readings `a` and `b` cannot be played together, or undefined when they can: the emulator refuses the pair
 * (its own declaration: `new Readings` throws, as for the two forms of one envelope), or the pair is a contradiction
 * (CONTRADICTIONS).
 */
export function cannotCoexist(a: Reading, b: Reading): string | undefined {
  const pair = [a, b].sort().join(" ");
  if (!coexistence.has(pair)) coexistence.set(pair, whyNotTogether(a, b));
  return coexistence.get(pair);
}
const coexistence = new Map<string, string | undefined>();

function whyNotTogether(a: Reading, b: Reading): string | undefined {
  try {
    new Readings([a, b]);
  } catch (err) {
    return `the emulator refuses to play them together: ${(err as Error).message}`;
  }
  return CONTRADICTIONS.find(({ pair }) => pair.includes(a) && pair.includes(b) && a !== b)?.why;
}

/**
 * Every combination of `size` distinct readings of `pool` that can coexist pairwise (cannotCoexist), in the pool's
 * order: a generator, so that readings added to the emulator are combined without a list to update.
 */
export function* readingCombinations(size: number, pool: readonly Reading[] = HISTORY_READINGS): Generator<Reading[]> {
  function* from(start: number, chosen: Reading[]): Generator<Reading[]> {
    if (chosen.length === size) {
      yield chosen;
      return;
    }
    for (let i = start; i < pool.length; i++) {
      if (chosen.every((c) => cannotCoexist(c, pool[i]) === undefined)) yield* from(i + 1, [...chosen, pool[i]]);
    }
  }
  yield* from(0, []);
}

/**
 * One combination of readings per history: its size drawn among `sizes` (each as often), then one of every
 * combination of that size (readingCombinations) that holds one of `including`, when given. The combination does not
 * shrink: a failing history shrinks to fewer steps on the same platform (`npm run soak -- --replay FILE --subsets`
 * tells which of its readings it needs).
 */
export function combinationArb(sizes: readonly number[], including?: readonly Reading[]): fc.Arbitrary<Reading[]> {
  const bySize = sizes.map((size) => {
    const all = [...readingCombinations(size)].filter((c) => !including || c.some((r) => including.includes(r)));
    if (all.length === 0)
      throw new RangeError(
        `no combination of ${size} readings can be played${including ? ` with one of ${including.join(", ")}` : ""}`,
      );
    return fc.noShrink(fc.constantFrom(...all));
  });
  return fc.oneof(...bySize);
}

/** Whether a platform of these readings needs the doctor's profile (PROFILED_READINGS). */
export const needsProfile = (readings: readonly Reading[]): boolean =>
  readings.some((r) => PROFILED_READINGS.includes(r));

/** Every proper combination of `readings` but the empty one, smallest first: what a failing combination is replayed under. */
export function subsets(readings: readonly Reading[]): Reading[][] {
  const out: Reading[][] = [];
  for (let size = 1; size < readings.length; size++) out.push(...readingCombinations(size, readings));
  return out;
}
