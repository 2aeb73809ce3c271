import { expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { REPO } from "./support/programDir.js";

test("npm pack ships only what a user needs: built JS, types, README, LICENSE, package.json", async () => {
  const { stdout } = await promisify(execFile)("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], { cwd: REPO });
  const [pack] = JSON.parse(stdout.slice(stdout.indexOf("["))) as [{ files: { path: string }[] }];
  const paths = pack.files.map((f) => f.path);
  for (const p of paths) {
    expect(["README.md", "LICENSE", "package.json"].includes(p) || /^dist\/provider\/.+\.(js|d\.ts)$/.test(p)).toBe(true);
  }
  expect(paths).toEqual(expect.arrayContaining(["dist/provider/index.js", "dist/provider/index.d.ts", "dist/provider/runtime/index.js", "dist/provider/cli.js", "README.md", "LICENSE"]));
  expect(paths.some((p) => p.startsWith("dist/tests"))).toBe(false);
}, 120_000);
