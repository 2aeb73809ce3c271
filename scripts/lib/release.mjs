// Builds an earlier release of this package from git, so that states written by it can be made and measured
// with the real CLI (the upgrade test, the benchmark's before/after rows). Plain Node.js.

import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, rmSync, symlinkSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { REPO } from "./stack.mjs";

/** The commit of release 0.1.0 (the last commit of main before the scale work). */
export const RELEASE_0_1_0 = "178f3af";

/**
 * Every version of this package a user may have written states with (issue 30), oldest first: release 0.1.0,
 * the one release named in code, and the main of each later round of work. No git tag exists and package.json
 * still says 0.1.0 at each of them, but each is what the README's install steps (a tarball packed from a clone,
 * `pulumi-llm-accounts-0.1.0.tgz`) gave a user that day, and each writes a state of its own shape (the serialized
 * provider of 0.1.0, then the runtime export path, rotation and adoption outputs). Each has a fixture written by
 * itself (scripts/upgrade-fixtures.mjs) that tests/e2e/upgrade.test.ts runs on today's code.
 */
export const RELEASES = [
  { name: "0.1.0", commit: RELEASE_0_1_0, why: "release 0.1.0 (scripts/lib/release.mjs, README)" },
  {
    name: "main-2026-11-22",
    commit: "645849c",
    why: "main at the end of the 2026-11-22 round (scale work, shim export path)",
  },
  {
    name: "main-2026-11-23",
    commit: "4beec5a",
    why: "main at the end of the 2026-11-23 round (adoption, rotation, policy)",
  },
  {
    name: "main-2026-11-24",
    commit: "8f35b78",
    why: "main at the end of the 2026-11-24 round (adoption day two; its provider/ is that of e91003e, which CI passed on a fresh clone)",
  },
];

/**
 * The package as it was at `commit`, built (tsc) into a folder of its own, once per machine and checkout: a
 * folder that can stand in for node_modules/pulumi-llm-accounts. Its dependencies resolve to this checkout's.
 */
export function buildRelease(commit = RELEASE_0_1_0) {
  const full = execFileSync("git", ["rev-parse", `${commit}^{commit}`], { cwd: REPO, encoding: "utf8" }).trim();
  // One folder per checkout: the two CI lanes run at once, each with its own @pulumi/pulumi, and a folder shared
  // between them would load one lane's SDK into the other's programs.
  const checkout = createHash("sha256").update(REPO).digest("hex").slice(0, 8);
  const dir = join(tmpdir(), `pulumi-llm-accounts-${full.slice(0, 12)}-${checkout}`);
  mkdirSync(dir, { recursive: true });
  // The build is kept, but its dependencies must be those of the checkout asking now: the one that built it may
  // be gone and its folder path reused (a temporary clone, the current lane's copy).
  try {
    unlinkSync(join(dir, "node_modules"));
  } catch {
    // no link yet
  }
  symlinkSync(join(REPO, "node_modules"), join(dir, "node_modules"));
  if (existsSync(join(dir, "dist", "provider", "runtime", "index.js"))) return dir;
  const tar = execFileSync(
    "git",
    ["archive", full, "package.json", "tsconfig.json", "tsconfig.build.json", "provider"],
    { cwd: REPO, maxBuffer: 64 << 20 },
  );
  execFileSync("tar", ["-x", "-C", dir], { input: tar });
  // Emitted without a type check (--noCheck): the release's sources were typed against its own dependencies
  // (zod 3), not this checkout's, and the JavaScript tsc emits does not depend on types. Checked, a machine
  // without the build kept failed here.
  const tsc = [join(REPO, "node_modules", "typescript", "bin", "tsc"), "-p", "tsconfig.build.json", "--noCheck"];
  try {
    execFileSync(process.execPath, tsc, { cwd: dir, stdio: "pipe" });
  } catch (e) {
    rmSync(join(dir, "dist"), { recursive: true, force: true });
    throw new Error(`building ${commit} failed: ${String(e.stdout ?? "")}${String(e.stderr ?? "")}`.trim());
  }
  return dir;
}
