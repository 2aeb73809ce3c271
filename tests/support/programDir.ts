import { mkdirSync, mkdtempSync, readdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (this file is tests/support/programDir.ts). */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), "../..");

/**
 * A folder laid out like a user's Pulumi program with this package installed: node_modules links to the
 * repository's own dependencies, and `pulumi-llm-accounts` links to the repository (its built dist/).
 */
export function programDir(prefix = "llm-program-"): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  linkNodeModules(dir);
  return dir;
}

/** Gives `dir` a node_modules that resolves like an installed copy of the package. */
export function linkNodeModules(dir: string): void {
  const modules = join(dir, "node_modules");
  mkdirSync(modules, { recursive: true });
  for (const entry of readdirSync(join(REPO, "node_modules"))) {
    if (entry === ".package-lock.json") continue;
    symlinkSync(join(REPO, "node_modules", entry), join(modules, entry));
  }
  symlinkSync(REPO, join(modules, "pulumi-llm-accounts"));
}
