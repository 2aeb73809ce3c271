/**
 * Whether a Pulumi CLI version (`pulumi version`: "v3.276.0", possibly with a pre-release or build suffix) is at
 * least `min` ("3.254.0"): for the tests of what a newer CLI added, which assert the floor's refusal below it.
 */
export function cliAtLeast(version: string, min: string): boolean {
  const parts = (v: string) => (/^v?(\d+)\.(\d+)\.(\d+)/.exec(v.trim()) ?? []).slice(1).map(Number);
  const have = parts(version);
  const want = parts(min);
  if (have.length !== 3 || want.length !== 3) throw new Error(`not a Pulumi CLI version: "${version}" or "${min}"`);
  for (let i = 0; i < 3; i++) if (have[i] !== want[i]) return have[i] > want[i];
  return true;
}
