// Secrets at the provider protocol's boundary. The plugin tells the engine it accepts secrets, so a secret reaches
// it as Pulumi's marker object ({ <sig>: <secret>, value }) and leaves it the same way: the runtime's methods see
// plain values (revealed here, once), and what they return is marked again (concealed) before the engine has it.

/** The signature key of a marked value in the provider protocol, and the value that says "secret". */
const SIG = "4dabf18193072939515e22adb298388d";
const SECRET = "1b47061264138c4ac30d75fd1eb44270";

type Marked = { [SIG]: typeof SECRET; value?: unknown };

function isMarked(value: unknown): value is Marked {
  return value !== null && typeof value === "object" && (value as Record<string, unknown>)[SIG] === SECRET;
}

/** The value with every secret marker inside it removed; `found` is set when there was one. */
function plain(value: unknown, found: { secret: boolean }): unknown {
  if (isMarked(value)) {
    found.secret = true;
    return plain(value.value, found);
  }
  if (Array.isArray(value)) return value.map((v) => plain(v, found));
  if (value !== null && typeof value === "object")
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, plain(v, found)]));
  return value;
}

/** Properties as the runtime reads them (no marker), and the names of the top-level ones that held a secret. */
export function reveal(props: Record<string, unknown> | undefined): {
  plain: Record<string, unknown>;
  secret: Set<string>;
} {
  const secret = new Set<string>();
  const out: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(props ?? {})) {
    const found = { secret: false };
    out[name] = plain(value, found);
    if (found.secret) secret.add(name);
  }
  return { plain: out, secret };
}

/** A value marked secret. */
export const secretValue = (value: unknown): Marked => ({ [SIG]: SECRET, value });

/** The value without undefined fields at any depth (the protocol's Struct has no undefined). */
function defined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map((v) => (v === undefined ? null : defined(v)));
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(Object.entries(value).flatMap(([k, v]) => (v === undefined ? [] : [[k, defined(v)]])));
  }
  return value;
}

/** Properties with the named top-level ones (those present) marked secret, whole; undefined fields dropped. */
export function conceal(props: Record<string, unknown>, names: Iterable<string>): Record<string, unknown> {
  const secret = new Set(names);
  const clean = defined(props) as Record<string, unknown>;
  return Object.fromEntries(Object.entries(clean).map(([k, v]) => [k, secret.has(k) ? secretValue(v) : v]));
}
