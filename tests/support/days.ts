/** The UTC date `offset` days before today (after it, for a negative offset), as the usage API writes dates. */
export function day(offset: number): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()) - offset * 86_400_000)
    .toISOString()
    .slice(0, 10);
}
