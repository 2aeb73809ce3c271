/** True for a JSON object (`{...}`): not an array, not null. */
export const isObject = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** JSON with sorted keys: equal values give equal text, whatever the key order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    isObject(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) : v,
  );
}

/** Deep equality by canonical JSON (the values here are plain JSON). */
export function same(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}
