import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** The package's name and version, read from its package.json (found from source or built output alike). */
function readPackage(): { name: string; version: string } {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 5; i += 1) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: string; version?: string };
      if (pkg.name === "pulumi-llm-accounts" && pkg.version) return { name: pkg.name, version: pkg.version };
    } catch {
      // not at this level: go up
    }
    dir = dirname(dir);
  }
  return { name: "pulumi-llm-accounts", version: "0.0.0" };
}

export const PACKAGE = readPackage();
export const USER_AGENT = `${PACKAGE.name}/${PACKAGE.version} (+node ${process.version})`;

/** The oldest Node.js release line the package supports and tests: package.json's engines, the floor lane. */
export const OLDEST_NODE_MAJOR = 22;

/** One line naming the Node.js needed when `version` (this process's by default) is older, else undefined. */
export function nodeTooOld(version: string = process.versions.node): string | undefined {
  if (Number(version.replace(/^v/, "").split(".")[0]) >= OLDEST_NODE_MAJOR) return undefined;
  return `pulumi-llm-accounts needs Node.js ${OLDEST_NODE_MAJOR} or newer (22, 24 and 26 are tested); this is Node.js ${version.replace(/^v?/, "v")}.`;
}
