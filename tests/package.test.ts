import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { programDir, REPO } from "./support/programDir.js";

/** The ready policy pack: its manifest, its package.json (name, version) and its JavaScript entry point. */
const READY_PACK = ["policy-pack/PulumiPolicy.yaml", "policy-pack/package.json", "policy-pack/index.js"];

test("npm pack ships only what a user needs: built JS, types, the ready policy pack, README, LICENSE, package.json", async () => {
  const { stdout } = await promisify(execFile)("npm", ["pack", "--dry-run", "--json", "--ignore-scripts"], {
    cwd: REPO,
  });
  const [pack] = JSON.parse(stdout.slice(stdout.indexOf("["))) as [{ files: { path: string }[] }];
  const paths = pack.files.map((f) => f.path);
  for (const p of paths) {
    expect(
      ["README.md", "LICENSE", "package.json", ...READY_PACK].includes(p) || /^dist\/provider\/.+\.(js|d\.ts)$/.test(p),
    ).toBe(true);
  }
  expect(paths).toEqual(
    expect.arrayContaining([
      "dist/provider/index.js",
      "dist/provider/index.d.ts",
      "dist/provider/runtime/index.js",
      "dist/provider/cli.js",
      "README.md",
      "LICENSE",
    ]),
  );
  // Each built file has its source today: a file renamed or removed in provider/ leaves no old build of it to ship
  // (npm run build empties dist/provider first).
  const stale = paths.filter(
    (p) =>
      p.startsWith("dist/provider/") &&
      !existsSync(join(REPO, p.replace(/^dist\//, "").replace(/\.(js|d\.ts)$/, ".ts"))),
  );
  expect(stale).toEqual([]);
  // The ready pack, compiled: run-policy-pack loads it with nothing to type-check; its entry loads built code only.
  expect(paths).toEqual(expect.arrayContaining([...READY_PACK, "dist/provider/policy/readyPack.js"]));
  expect(paths.filter((p) => p.startsWith("policy-pack/") && p.endsWith(".ts"))).toEqual([]);
  const entry = readFileSync(join(REPO, "policy-pack/index.js"), "utf8");
  expect([...entry.matchAll(/import\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1])).toEqual([
    "../dist/provider/policy/readyPack.js",
  ]);
  // The pack's version (what `Policy Packs run:` shows, read by @pulumi/policy from the pack's package.json) is the package's.
  const manifest = (file: string) =>
    JSON.parse(readFileSync(join(REPO, file), "utf8")) as { version: string; name: string; main: string };
  expect(manifest("policy-pack/package.json")).toMatchObject({
    version: manifest("package.json").version,
    name: "llm-accounts-policies",
    main: "index.js",
  });
  expect(readFileSync(join(REPO, "policy-pack/PulumiPolicy.yaml"), "utf8")).toMatch(
    /^name: llm-accounts-policies$[\s\S]*^runtime: nodejs$/m,
  );
  expect(paths.some((p) => p.startsWith("dist/tests"))).toBe(false);
}, 120_000);

test("package.json says where the package lives (npm provenance checks `repository` against the repository it is built in)", () => {
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as Record<string, unknown>;
  const home = "https://github.com/pulumi-llm-accounts/pulumi-llm-accounts";
  expect(pkg).toMatchObject({
    repository: { type: "git", url: `git+${home}.git` },
    homepage: `${home}#readme`,
    bugs: { url: `${home}/issues` },
    keywords: expect.arrayContaining(["pulumi"]),
  });
});

test("npm publish --dry-run passes with nothing for npm to correct in package.json", async () => {
  const { stdout, stderr } = await promisify(execFile)("npm", ["publish", "--dry-run", "--ignore-scripts", "--json"], {
    cwd: REPO,
  });
  expect(stderr).not.toMatch(/auto-corrected|errors corrected/);
  const reports = JSON.parse(stdout.slice(stdout.indexOf("{"))) as Record<
    string,
    { name: string; files: { path: string }[] }
  >;
  const report = reports["pulumi-llm-accounts"];
  expect(report.name).toBe("pulumi-llm-accounts");
  expect(report.files.map((f) => f.path)).toEqual(
    expect.arrayContaining(["dist/provider/cli.js", "dist/provider/index.js"]),
  );
}, 120_000);

test("a CommonJS program (the `pulumi new typescript` template's output) loads the package with require, without a flag", async () => {
  const dir = programDir("llm-cjs-");
  try {
    writeFileSync(join(dir, "package.json"), JSON.stringify({ name: "program", private: true }));
    writeFileSync(
      join(dir, "index.js"),
      'const llm = require("pulumi-llm-accounts");\nconsole.log(typeof llm.ApiKey, typeof llm.getModelsOutput);\n',
    );
    const { stdout } = await promisify(execFile)(process.execPath, ["--no-warnings", "index.js"], { cwd: dir });
    expect(stdout).toBe("function function\n");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 60_000);

describe("@pulumi/pulumi is a peer dependency: a program never holds two copies", () => {
  const run = promisify(execFile);
  let tarball: string;
  let scratch: string;
  beforeAll(async () => {
    scratch = mkdtempSync(join(tmpdir(), "llm-peer-"));
    const { stdout } = await run("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", scratch], {
      cwd: REPO,
    });
    const [pack] = JSON.parse(stdout.slice(stdout.indexOf("["))) as [{ filename: string }];
    tarball = join(scratch, pack.filename);
  }, 120_000);
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  /** Resolves (without installing) a program that depends on `sdk` and then adds the packed package. */
  async function resolveProgram(
    sdk: string,
  ): Promise<{ ok: boolean; output: string; lock?: { packages: Record<string, { version?: string }> } }> {
    const dir = mkdtempSync(join(scratch, "program-"));
    writeFileSync(
      join(dir, "package.json"),
      JSON.stringify({ name: "program", private: true, dependencies: { "@pulumi/pulumi": sdk } }),
    );
    const install = (freshness: string) =>
      run(
        "npm",
        ["install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund", freshness, tarball],
        { cwd: dir },
      ).then(
        (r) => ({ ok: true, output: r.stdout + r.stderr }),
        (e: { stdout: string; stderr: string }) => ({ ok: false, output: e.stdout + e.stderr }),
      );
    // npm's cache of package metadata, from earlier runs on this machine, answers the resolution (3 s, against
    // 12 s online; a cold cache pays the 12 s once); a version the cache does not know yet (ETARGET) is asked of
    // the registry.
    let result = await install("--prefer-offline");
    if (!result.ok && /ETARGET|notarget/.test(result.output)) result = await install("--prefer-online");
    const lock = result.ok ? JSON.parse(readFileSync(join(dir, "package-lock.json"), "utf8")) : undefined;
    return { ...result, lock };
  }

  test("the program's own @pulumi/pulumi, when newer than our floor, is the only copy", async () => {
    const { stdout } = await run("npm", ["view", "@pulumi/pulumi", "version"]);
    const newest = stdout.trim();
    const { ok, output, lock } = await resolveProgram(newest);
    expect({ ok, output: ok ? "" : output }).toEqual({ ok: true, output: "" });
    const copies = Object.entries(lock!.packages).filter(([p]) => p.endsWith("node_modules/@pulumi/pulumi"));
    expect(copies).toEqual([["node_modules/@pulumi/pulumi", expect.objectContaining({ version: newest })]]);
  }, 300_000);

  test("a program whose @pulumi/pulumi is older than the floor is refused by npm, naming the peer conflict", async () => {
    const { ok, output } = await resolveProgram("3.150.0");
    expect(ok).toBe(false);
    expect(output).toMatch(/ERESOLVE/);
    expect(output).toMatch(/peer @pulumi\/pulumi@"\^3\.248\.0"/);
  }, 300_000);
});
