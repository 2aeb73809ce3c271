import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { linkNodeModules, REPO } from "../../scripts/lib/stack.mjs";

export { linkNodeModules, REPO };

/**
 * A folder laid out like a user's Pulumi program with this package installed: node_modules links to the
 * repository's own dependencies, and `pulumi-llm-accounts` links to the repository (its built dist/).
 */
export function programDir(prefix = "llm-program-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  linkNodeModules(dir);
  return dir;
}
