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

/**
 * The oldest Node.js the package supports: package.json's engines. 22.12 is the first 22 that loads an ES module
 * from `require` without a flag, which a CommonJS program (the `pulumi new typescript` template) needs
 * (docs/decisions.md ("Node.js 22.12, the floor")).
 */
export const OLDEST_NODE = "22.12.0";

/** Whether version `a` (`v22.11.0`, `22.11.0`) is older than `b`. */
function isOlder(a: string, b: string): boolean {
  const [x, y] = [a, b].map((v) =>
    v
      .replace(/^v/, "")
      .split(".")
      .map((n) => Number.parseInt(n, 10) || 0),
  );
  const i = y.findIndex((n, j) => (x[j] ?? 0) !== n);
  return i >= 0 && (x[i] ?? 0) < y[i];
}

/** One line naming the Node.js needed when `version` (this process's by default) is older, else undefined. */
export function nodeTooOld(version: string = process.versions.node): string | undefined {
  if (!isOlder(version, OLDEST_NODE)) return undefined;
  return `pulumi-llm-accounts needs Node.js ${OLDEST_NODE.replace(/\.0$/, "")} or newer (22, 24 and 26 are tested); this is Node.js ${version.replace(/^v?/, "v")}.`;
}
