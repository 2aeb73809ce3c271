import { readFileSync } from "node:fs";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { PACKAGE } from "../version.js";

/**
 * Where the running package was installed from, so that the program `import` writes installs the same thing:
 * - `tarball`: a `.tgz` file (npm records it in the lock of the folder it installed into, npx's cache included);
 * - `folder`: a folder (a clone run directly, or a folder npm linked);
 * - `spec`: a registry version or a URL npm can fetch from anywhere.
 */
export type InstallSource =
  | { kind: "tarball"; path: string }
  | { kind: "folder"; path: string }
  | { kind: "spec"; spec: string };

/** The folder of the running package (its package.json), symbolic links resolved as Node.js resolves modules. */
export function runningPackageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    try {
      if ((JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { name?: unknown }).name === PACKAGE.name)
        return dir;
    } catch {
      // Not at this level: go up.
    }
    dir = dirname(dir);
  }
  throw new Error(`cannot find the package.json of ${PACKAGE.name} above ${fileURLToPath(import.meta.url)}`);
}

/** The lock entry npm wrote for the package in the folder it installed into, if any. */
function lockEntry(installRoot: string): { resolved?: unknown } | undefined {
  // npm keeps a hidden lockfile in node_modules after every install, npx's cache included; the project's own
  // lockfile is the fallback (an install with --no-package-lock writes neither).
  for (const lock of [
    join(installRoot, "node_modules", ".package-lock.json"),
    join(installRoot, "package-lock.json"),
  ]) {
    try {
      const entry = (JSON.parse(readFileSync(lock, "utf8")) as { packages?: Record<string, { resolved?: unknown }> })
        .packages?.[`node_modules/${PACKAGE.name}`];
      if (entry) return entry;
    } catch {
      // No such lock, or not one npm wrote: try the next.
    }
  }
  return undefined;
}

/**
 * Where the package at `packageRoot` came from, or undefined when that cannot be told (installed without a
 * lock, or from a tarball that is gone). A package not inside a `node_modules` folder is run from its folder.
 */
export function installSource(packageRoot: string): InstallSource | undefined {
  if (basename(dirname(packageRoot)) !== "node_modules") return { kind: "folder", path: packageRoot };
  const installRoot = dirname(dirname(packageRoot));
  const resolved = lockEntry(installRoot)?.resolved;
  if (typeof resolved !== "string") return undefined;
  if (resolved.startsWith("file:")) {
    const target = resolve(installRoot, resolved.slice("file:".length));
    return /\.(tgz|tar\.gz|tar)$/.test(target) ? { kind: "tarball", path: target } : { kind: "folder", path: target };
  }
  // A registry's tarball URL: the version range installs it, from whichever registry the user's npm uses.
  if (/^https?:\/\//.test(resolved) && resolved.includes(`/${PACKAGE.name}/-/`))
    return { kind: "spec", spec: `^${PACKAGE.version}` };
  // A git or other URL installs from anywhere as it is; a bare path (a link npm made) is a folder.
  return /^[a-z+]+:/.test(resolved) && !isAbsolute(resolved)
    ? { kind: "spec", spec: resolved }
    : { kind: "folder", path: resolve(installRoot, resolved) };
}
