import { maskKey } from "../api/redact.js";
import { KeySchema } from "../api/schemas/index.js";

/** A key list (`--keys FILE` of import, audit and sweep) with a line that is not an API key. */
export class KeyListError extends Error {}

/**
 * The API keys of a key file's text: one per line; blank lines and `#` comments skipped, repeats kept once.
 * A line that is not an API key fails naming its line number, masked (it may be a secret of another kind).
 */
export function parseKeyList(text: string, source: string): string[] {
  const keys = new Set<string>();
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    if (!KeySchema.safeParse(line).success || line.startsWith("sk-admin-")) {
      // Echo nothing of a line that is not a key: it may be a secret of another kind.
      const admin = line.startsWith("sk-admin-") ? `: this is an admin key (${maskKey(line)})` : "";
      throw new KeyListError(`${source}, line ${i + 1}: not an API key (sk-...)${admin}`);
    }
    keys.add(line);
  });
  return [...keys];
}
