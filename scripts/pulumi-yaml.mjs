#!/usr/bin/env node
// Finds or builds Pulumi's YAML language host (`pulumi-language-yaml`), which runs the YAML programs of the provider
// plugin's tests (docs/provider.md). No package registry these machines reach ships it; it is a Go module,
// github.com/pulumi/pulumi-yaml, built the way scripts/pulumi-cli.mjs builds the CLI: as the tool of a small module
// of our own (tools/pulumi-yaml, which pins the release), once, into the cache beside the CLI's.
//
// Order: `pulumi-language-yaml` on PATH; else the cached build in <cacheRoot>/pulumi-language-yaml-v<version>/
// (built from the same tools/pulumi-yaml sources); else build it with Go (about 4 minutes cold on 2 cores, plus
// the modules' download the first time; seconds with a warm Go build cache).
//
// Usage: `node scripts/pulumi-yaml.mjs` prints the directory holding the host (progress on stderr); or import
// { ensureYamlHost } from this file. Plain Node.js, no dependencies.

import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cacheRoot } from "./pulumi-cli.mjs";

/** The pulumi-yaml release tools/pulumi-yaml/go.mod pins. */
export const YAML_VERSION = "1.25.0";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TOOL_DIR = path.join(REPO_ROOT, "tools", "pulumi-yaml");
const HOST = "pulumi-language-yaml";
const PACKAGE = "github.com/pulumi/pulumi-yaml/cmd/pulumi-language-yaml";
const STAMP_FILE = ".build-stamp";

const defaultLog = (message) => process.stderr.write(`[pulumi-yaml] ${message}\n`);

/** The directory of the cached build. */
export function yamlCacheDir() {
  return path.join(cacheRoot(), `${HOST}-v${YAML_VERSION}`);
}

/** A digest of the module that builds the host: a cache built from other sources is built again. */
function sourceStamp() {
  const hash = createHash("sha256");
  for (const f of ["go.mod", "go.sum"]) hash.update(fs.readFileSync(path.join(TOOL_DIR, f)));
  return hash.digest("hex").slice(0, 16);
}

function onPath() {
  for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
    const file = path.join(dir, HOST);
    try {
      fs.accessSync(file, fs.constants.X_OK);
      return dir;
    } catch {
      // not here
    }
  }
  return undefined;
}

/**
 * Returns `{ binDir, source }`: the directory to put on PATH (it holds `pulumi-language-yaml`) and where it came
 * from ("path", "cache" or "build"). Throws when there is none and Go is missing to build it.
 */
export function ensureYamlHost({ log = defaultLog } = {}) {
  const found = onPath();
  if (found) return { binDir: found, source: "path" };
  const dir = yamlCacheDir();
  const stamp = sourceStamp();
  if (fs.existsSync(path.join(dir, HOST)) && fs.readFileSync(path.join(dir, STAMP_FILE), "utf8").trim() === stamp) {
    return { binDir: dir, source: "cache" };
  }
  fs.mkdirSync(cacheRoot(), { recursive: true });
  const tmp = fs.mkdtempSync(path.join(cacheRoot(), `.build-yaml-`));
  const started = Date.now();
  log(`building ${HOST} v${YAML_VERSION} with Go into ${dir} (once; about 4 minutes cold on 2 cores)`);
  try {
    const args = ["build", "-trimpath", "-ldflags", "-s -w", "-o", tmp + path.sep, PACKAGE];
    const env = { ...process.env, CGO_ENABLED: "0", GONOSUMDB: "github.com/pulumi/pulumi" };
    const res = spawnSync("go", args, { cwd: TOOL_DIR, env, encoding: "utf8", timeout: 1_800_000 });
    if (res.error) throw new Error(`could not run go to build ${HOST}: ${res.error.message}; install Go 1.24 or newer`);
    if (res.status !== 0) throw new Error(`go ${args.join(" ")} failed:\n${(res.stderr ?? "").slice(-4000)}`);
    fs.writeFileSync(path.join(tmp, STAMP_FILE), `${stamp}\n`);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  }
  log(`built ${HOST} in ${Math.round((Date.now() - started) / 1000)}s`);
  return { binDir: dir, source: "build" };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${ensureYamlHost().binDir}\n`);
}
