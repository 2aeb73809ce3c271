import { readdirSync } from "node:fs";
import { join } from "node:path";
import { REPO } from "./programDir.js";

/** The package's source folder. */
export const PROVIDER = join(REPO, "provider");

/** Every TypeScript file under a folder (provider/ unless told), as absolute paths. */
export function providerSources(dir = PROVIDER): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? providerSources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}
