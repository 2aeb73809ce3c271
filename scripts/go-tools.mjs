#!/usr/bin/env node
// Finds or builds the two Go programs the provider plugin's tests need besides the Pulumi CLI (docs/provider.md),
// each from a small module of our own under tools/ that pins its release, the way scripts/pulumi-cli.mjs builds the
// CLI, once, into the cache beside the CLI's:
//   pulumi-language-yaml  Pulumi's YAML language host (github.com/pulumi/pulumi-yaml v1.25.0, tools/pulumi-yaml),
//                         which runs YAML programs; no package registry these machines reach ships it.
//   pulumi-gen-sdk        Pulumi's Go and Python SDK generators (pkg/v3/codegen/go and codegen/python at the floor
//                         CLI's release, tools/pulumi-gen-sdk): what `pulumi package gen-sdk --language go|python`
//                         runs inside Pulumi's Go and Python language hosts, which the Go module proxy does not serve.
// Order: the program on PATH; else the cached build in <cacheRoot>/<name>-<digest of its module>/; else built with
// Go. Measured on 2 cores shared with other builds: pulumi-language-yaml cold 2 min of module download and 4 min of
// build, warm 5 s; pulumi-gen-sdk 25 s with the CLI's modules and build cache, which it shares.
//
// Usage: `node scripts/go-tools.mjs <name>` prints the directory holding it (progress on stderr); or import
// { ensureGoTool } from this file. Plain Node.js, no dependencies.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cacheRoot } from "./pulumi-cli.mjs";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The tools: the module that builds each, and the package of it that is the program. */
export const GO_TOOLS = {
  "pulumi-language-yaml": {
    module: "tools/pulumi-yaml",
    package: "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml",
  },
  "pulumi-gen-sdk": { module: "tools/pulumi-gen-sdk", package: "." },
};

const defaultLog = (message) => process.stderr.write(`[go-tools] ${message}\n`);

/** A digest of the module that builds a tool: a cache built from other sources is another folder. */
function sourceDigest(moduleDir) {
  const hash = createHash("sha256");
  for (const f of fs.readdirSync(moduleDir).sort()) hash.update(f).update(fs.readFileSync(path.join(moduleDir, f)));
  return hash.digest("hex").slice(0, 16);
}

function onPath(name) {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    try {
      fs.accessSync(path.join(dir, name), fs.constants.X_OK);
      return dir;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** Builds a tool into a fresh folder of the cache root, renamed to `dir` when complete. */
function build(name, dir, log) {
  const tool = GO_TOOLS[name];
  const tmp = fs.mkdtempSync(path.join(cacheRoot(), `.build-${name}-`));
  const started = Date.now();
  log(`building ${name} with Go into ${dir} (once)`);
  try {
    const args = ["build", "-trimpath", "-ldflags", "-s -w", "-o", tmp + path.sep, tool.package];
    const env = { ...process.env, CGO_ENABLED: "0", GONOSUMDB: "github.com/pulumi/pulumi" };
    const res = spawnSync("go", args, {
      cwd: path.join(REPO_ROOT, tool.module),
      env,
      encoding: "utf8",
      timeout: 1_800_000,
    });
    if (res.error) throw new Error(`could not run go to build ${name}: ${res.error.message}; install Go 1.24 or newer`);
    if (res.status !== 0) throw new Error(`go ${args.join(" ")} failed:\n${(res.stderr ?? "").slice(-4000)}`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  log(`built ${name} in ${Math.round((Date.now() - started) / 1000)}s`);
}

/**
 * Returns `{ binDir, source }`: the directory to put on PATH (it holds the tool) and where it came from ("path",
 * "cache" or "build"). Throws when there is none and Go is missing to build it.
 */
export function ensureGoTool(name, { log = defaultLog } = {}) {
  const tool = GO_TOOLS[name];
  if (!tool) throw new Error(`no Go tool named ${name} (${Object.keys(GO_TOOLS).join(", ")})`);
  const found = onPath(name);
  if (found) return { binDir: found, source: "path" };
  const dir = path.join(cacheRoot(), `${name}-${sourceDigest(path.join(REPO_ROOT, tool.module))}`);
  if (fs.existsSync(path.join(dir, name))) return { binDir: dir, source: "cache" };
  fs.mkdirSync(cacheRoot(), { recursive: true });
  build(name, dir, log);
  return { binDir: dir, source: "build" };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${ensureGoTool(process.argv[2] ?? "")?.binDir}\n`);
}
