/** JSON with sorted keys: equal values give equal text, whatever the key order. */
export function canonical(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}

/** Deep equality by canonical JSON (the values here are plain JSON). */
export function same(a: unknown, b: unknown): boolean {
  return canonical(a) === canonical(b);
}
