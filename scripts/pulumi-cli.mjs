#!/usr/bin/env node
// Finds or builds the Pulumi CLI (and a Node.js language host) for running real `pulumi` commands on this
// project's machines, which reach no download site of Pulumi: only the npm registry, Debian and the Go module proxy.
//
// Order:
//   (a) `pulumi` on PATH, if `pulumi version` >= the wanted version and `pulumi-language-nodejs` is beside it or on PATH;
//   (b) the cached build in ${PULUMI_LLM_ACCOUNTS_CLI_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/pulumi-llm-accounts}/
//       pulumi-v<version>/ (pulumi, pulumi-language-nodejs, pulumi-resource-pulumi-nodejs);
//   (c) otherwise build it with Go from tools/pulumi-cli (the CLI from Go modules, and the project's own small
//       Node.js language host), into a temporary directory renamed into the cache when complete.
//
// The wanted version is PULUMI_VERSION (the floor: the lowest @pulumi/pulumi the package supports), unless
// $LLM_ACCOUNTS_PULUMI_CLI_VERSION names another release: the "current" test lane (scripts/lane-current.mjs) sets
// it to the newest release the Go module proxy serves (newestBuildableVersion), whatever the newest SDK on npm. tools/pulumi-cli/go.mod pins the
// floor; another version is built from a copy of it with pkg/v3 and sdk/v3 moved to that version.
//
// Usage: `node scripts/pulumi-cli.mjs` prints the absolute path of the `pulumi` binary on stdout (progress on
// stderr); or import { ensurePulumiCli, pulumiEnv } from this file. Plain Node.js, no dependencies.

import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";

/**
 * The one place the floor Pulumi version is set: the lowest @pulumi/pulumi the package supports (package.json's
 * peer range starts here and its devDependency pins it) and the CLI that tools/pulumi-cli/go.mod builds.
 */
export const PULUMI_VERSION = "3.248.0";

/** Environment variable that asks for a CLI release other than PULUMI_VERSION (e.g. "3.259.0"). */
export const CLI_VERSION_ENV = "LLM_ACCOUNTS_PULUMI_CLI_VERSION";

/** The CLI release wanted: $LLM_ACCOUNTS_PULUMI_CLI_VERSION, else PULUMI_VERSION. */
export function wantedVersion() {
  const asked = process.env[CLI_VERSION_ENV]?.trim().replace(/^v/, "");
  if (!asked) return PULUMI_VERSION;
  if (!/^\d+\.\d+\.\d+$/.test(asked))
    throw new Error(`${CLI_VERSION_ENV} must be a release like 3.259.0, not "${asked}"`);
  return asked;
}

/** Passphrase for the secrets of throwaway test stacks, used when PULUMI_CONFIG_PASSPHRASE(_FILE) is not set. */
export const TEST_PASSPHRASE = "pulumi-llm-accounts-test-passphrase";

const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const TOOL_DIR = path.join(REPO_ROOT, "tools", "pulumi-cli");
const CLI_PACKAGE = "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi";
const LANGUAGE_HOST_PACKAGE = "./pulumi-language-nodejs";
const DYNAMIC_PROVIDER_PLUGIN = "pulumi-resource-pulumi-nodejs";
const BINARIES = ["pulumi", "pulumi-language-nodejs", DYNAMIC_PROVIDER_PLUGIN];
const STAMP_FILE = ".build-stamp";
const EXE = process.platform === "win32" ? ".exe" : "";

/** File name of one of BINARIES (the dynamic provider plugin is a shell script, the others are Go programs). */
const binaryFile = (name) => (name === DYNAMIC_PROVIDER_PLUGIN ? name : name + EXE);

const defaultLog = (message) => process.stderr.write(`[pulumi-cli] ${message}\n`);

/** Root of the cache: $PULUMI_LLM_ACCOUNTS_CLI_CACHE, else $XDG_CACHE_HOME/pulumi-llm-accounts, else ~/.cache/... */
export function cacheRoot() {
  if (process.env.PULUMI_LLM_ACCOUNTS_CLI_CACHE) {
    return path.resolve(process.env.PULUMI_LLM_ACCOUNTS_CLI_CACHE);
  }
  const xdg = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  return path.resolve(xdg, "pulumi-llm-accounts");
}

/** Directory of the cached build of the wanted version. */
export function cacheDir() {
  return path.join(cacheRoot(), `pulumi-v${wantedVersion()}`);
}

let lastResult;
let pending;

/**
 * Returns a usable Pulumi CLI: `{ pulumi, binDir, version, source }`, where `pulumi` is the absolute path of the
 * binary, `binDir` the directory to put first on PATH (it holds the language host and the dynamic provider plugin
 * too), `version` what `pulumi version` says (e.g. "v3.248.0"), and `source` one of "path", "cache", "build".
 * Throws when no CLI is found and Go is not installed to build one.
 */
export async function ensurePulumiCli({ log = defaultLog } = {}) {
  if (!pending) {
    pending = findOrBuild(log).then(
      (result) => {
        lastResult = result;
        return result;
      },
      (err) => {
        pending = undefined;
        throw err;
      },
    );
  }
  return pending;
}

/**
 * Environment additions for a fully offline Pulumi run against a local file backend in `backendDir`:
 * merge them over process.env. `cli` defaults to the result of the last ensurePulumiCli() call, else the cache.
 */
export function pulumiEnv(backendDir, cli = lastResult) {
  const binDir = cli?.binDir ?? cacheDir();
  const backend = path.resolve(backendDir).split(path.sep).join("/");
  const env = {
    PATH: [binDir, process.env.PATH].filter(Boolean).join(path.delimiter),
    PULUMI_BACKEND_URL: `file://${backend.startsWith("/") ? "" : "/"}${backend}`,
    PULUMI_SKIP_UPDATE_CHECK: "true",
    PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true",
    PULUMI_AUTOMATION_API_SKIP_VERSION_CHECK: "true",
  };
  if (process.env.PULUMI_CONFIG_PASSPHRASE !== undefined) {
    env.PULUMI_CONFIG_PASSPHRASE = process.env.PULUMI_CONFIG_PASSPHRASE;
  } else if (!process.env.PULUMI_CONFIG_PASSPHRASE_FILE) {
    env.PULUMI_CONFIG_PASSPHRASE = TEST_PASSPHRASE;
  }
  return env;
}

async function findOrBuild(log) {
  checkSdkVersion(log);

  const onPath = findOnPath(log);
  if (onPath) {
    return onPath;
  }

  const cached = checkCache(log);
  if (cached) {
    return cached;
  }

  return build(log);
}

// --- (a) PATH ---------------------------------------------------------------------------------------------------

function findOnPath(log) {
  const pulumi = which("pulumi");
  if (!pulumi) {
    return undefined;
  }
  const version = pulumiVersion(pulumi);
  if (!version) {
    log(`ignoring ${pulumi}: \`pulumi version\` did not answer`);
    return undefined;
  }
  if (compareVersions(version, wantedVersion()) < 0) {
    log(`ignoring ${pulumi}: version ${version} is older than v${wantedVersion()}`);
    return undefined;
  }
  const binDir = path.dirname(pulumi);
  const beside = (name) => isExecutable(path.join(binDir, name + EXE));
  if (!beside("pulumi-language-nodejs") && !which("pulumi-language-nodejs")) {
    log(`ignoring ${pulumi}: pulumi-language-nodejs is neither beside it nor on PATH`);
    return undefined;
  }
  if (!beside(DYNAMIC_PROVIDER_PLUGIN) && !which(DYNAMIC_PROVIDER_PLUGIN)) {
    log(`warning: ${DYNAMIC_PROVIDER_PLUGIN} is neither beside ${pulumi} nor on PATH: dynamic resources will fail`);
  }
  log(`using ${pulumi} (${version}) from PATH`);
  return { pulumi, binDir, version, source: "path" };
}

// --- (b) cache --------------------------------------------------------------------------------------------------

function checkCache(log) {
  const dir = cacheDir();
  if (!fs.existsSync(dir)) {
    return undefined;
  }
  const missing = BINARIES.filter((name) => !isExecutable(path.join(dir, binaryFile(name))));
  if (missing.length > 0) {
    log(`cache ${dir} lacks ${missing.join(", ")}: rebuilding`);
    return undefined;
  }
  const stamp = readFileOr(path.join(dir, STAMP_FILE), "").trim();
  const want = sourceStamp();
  if (want && stamp !== want) {
    log(`cache ${dir} was built from other sources of tools/pulumi-cli: rebuilding`);
    return undefined;
  }
  const pulumi = path.join(dir, "pulumi" + EXE);
  const version = pulumiVersion(pulumi);
  if (version !== `v${wantedVersion()}`) {
    log(`cache ${dir} holds pulumi ${version ?? "(not runnable)"}: rebuilding`);
    return undefined;
  }
  log(`using cached ${pulumi} (${version})`);
  return { pulumi, binDir: dir, version, source: "cache" };
}

// --- (c) build --------------------------------------------------------------------------------------------------

async function build(log) {
  const wanted = wantedVersion();
  const go = which("go");
  if (!go) {
    throw new Error(
      `No Pulumi CLI v${wanted} or newer was found on PATH, none is cached in ${cacheDir()}, ` +
        `and Go is not installed to build one.\n` +
        `Install the Pulumi CLI (with its pulumi-language-nodejs) from https://www.pulumi.com/docs/install/ , ` +
        `or install Go (https://go.dev/doc/install; 1.25.11 or newer, or any Go from 1.21 on with ` +
        `GOTOOLCHAIN=auto, which fetches the toolchain tools/pulumi-cli/go.mod asks for) and run ` +
        `\`node scripts/pulumi-cli.mjs\` again to build it from Go modules.`,
    );
  }
  if (!fs.existsSync(path.join(TOOL_DIR, "go.mod"))) {
    throw new Error(`cannot build the Pulumi CLI: ${path.join(TOOL_DIR, "go.mod")} is missing`);
  }

  const root = cacheRoot();
  fs.mkdirSync(root, { recursive: true });
  removeStaleBuilds(root, log);
  const tmp = fs.mkdtempSync(path.join(root, `.build-v${wanted}-`));
  fs.chmodSync(tmp, 0o755);
  const started = Date.now();
  log(`building the Pulumi CLI v${wanted} and the Node.js language host with ${go} into ${cacheDir()}`);
  log("a cold build downloads about 1 GB of Go modules and takes 3-25 minutes; later builds reuse the Go caches");

  let source;
  try {
    source = wanted === PULUMI_VERSION ? TOOL_DIR : await moduleAt(go, wanted, log);
    await runGoBuild(go, source, wanted, tmp, log);
    const plugin = dynamicProviderPlugin();
    fs.copyFileSync(plugin, path.join(tmp, DYNAMIC_PROVIDER_PLUGIN));
    fs.chmodSync(path.join(tmp, DYNAMIC_PROVIDER_PLUGIN), 0o755);
    fs.writeFileSync(path.join(tmp, STAMP_FILE), `${sourceStamp()}\n`);

    const version = pulumiVersion(path.join(tmp, "pulumi" + EXE));
    if (version !== `v${wanted}`) {
      throw new Error(`the freshly built pulumi reports version ${version ?? "(none)"}, expected v${wanted}`);
    }
    installIntoCache(tmp, log);
  } catch (err) {
    fs.rmSync(tmp, { recursive: true, force: true });
    throw err;
  } finally {
    if (source && source !== TOOL_DIR) fs.rmSync(source, { recursive: true, force: true });
  }

  const seconds = Math.round((Date.now() - started) / 1000);
  const dir = cacheDir();
  log(`built the Pulumi CLI v${wanted} in ${seconds}s: ${dir}`);
  return { pulumi: path.join(dir, "pulumi" + EXE), binDir: dir, version: `v${wanted}`, source: "build" };
}

/** Pulumi's modules are not all in the checksum database yet: take their sums from the module proxy. */
const GO_ENV = { GONOSUMDB: "github.com/pulumi/pulumi", GOFLAGS: "-mod=mod" };

/**
 * A copy of tools/pulumi-cli with pkg/v3 and sdk/v3 moved to `version` and go.sum completed: the language
 * host is built against the same sdk as the CLI. Returned directory is the caller's to remove.
 */
async function moduleAt(go, version, log) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `pulumi-cli-module-v${version}-`));
  fs.cpSync(TOOL_DIR, dir, { recursive: true });
  const requires = ["pkg", "sdk"].map((m) => `-require=github.com/pulumi/pulumi/${m}/v3@v${version}`);
  await runGo(go, ["mod", "edit", ...requires], dir, log);
  await runGo(go, ["mod", "tidy"], dir, log);
  return dir;
}

/**
 * The newest Pulumi release, at or above PULUMI_VERSION, whose CLI modules (pkg/v3 and sdk/v3) the Go module proxy
 * actually serves. It is asked each run, never guessed, and not capped by any SDK version: users upgrade the CLI
 * on its own. `go list -m -versions` names the releases the proxy lists; the proxy answers some of them with 403
 * (as it did for 3.249.0 and 3.260.0 on 2026-11-22), so each is tried, newest first, with `go mod download`.
 */
export function newestBuildableVersion({ log = defaultLog } = {}) {
  const go = which("go");
  if (!go) throw new Error("Go is needed to build the Pulumi CLI of the current lane, and none is on PATH");
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-cli-probe-"));
  try {
    const env = { ...process.env, ...GO_ENV };
    const listed = spawnSync(go, ["list", "-m", "-versions", "github.com/pulumi/pulumi/pkg/v3"], {
      cwd: scratch,
      encoding: "utf8",
      timeout: 120_000,
      env,
    });
    if (listed.status !== 0)
      throw new Error(`go list -m -versions github.com/pulumi/pulumi/pkg/v3 failed: ${(listed.stderr || "").trim()}`);
    const releases = listed.stdout
      .trim()
      .split(/\s+/)
      .slice(1)
      .map((v) => v.replace(/^v/, ""))
      .filter((v) => /^\d+\.\d+\.\d+$/.test(v) && compareVersions(v, PULUMI_VERSION) >= 0)
      .sort((a, b) => compareVersions(b, a));
    for (const v of releases) {
      const mods = ["pkg", "sdk"].map((m) => `github.com/pulumi/pulumi/${m}/v3@v${v}`);
      const res = spawnSync(go, ["mod", "download", ...mods], {
        cwd: scratch,
        encoding: "utf8",
        timeout: 600_000,
        env,
      });
      if (res.status === 0) return v;
      log(
        `v${v}: not served by the Go module proxy (${res.stderr
          .split("\n")
          .map((l) => l.trim())
          .filter(Boolean)
          .pop()})`,
      );
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
  throw new Error(`the Go module proxy serves no Pulumi CLI release from v${PULUMI_VERSION} on`);
}

function runGo(go, args, cwd, log) {
  log(`(cd ${cwd} && go ${args.map(shellQuote).join(" ")})`);
  const res = spawnSync(go, args, { cwd, encoding: "utf8", timeout: 1_200_000, env: { ...process.env, ...GO_ENV } });
  if (res.status !== 0) throw new Error(`go ${args.join(" ")} failed:\n${(res.stderr || "").trim().slice(-4000)}`);
}

function runGoBuild(go, cwd, version, outDir, log) {
  const args = [
    "build",
    "-trimpath",
    "-ldflags",
    `-s -w -X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=v${version}`,
    "-o",
    outDir + path.sep,
    CLI_PACKAGE,
    LANGUAGE_HOST_PACKAGE,
  ];
  log(`(cd ${cwd} && CGO_ENABLED=0 go ${args.map(shellQuote).join(" ")})`);
  return new Promise((resolve, reject) => {
    const child = spawn(go, args, {
      cwd,
      env: { ...process.env, ...(cwd === TOOL_DIR ? {} : GO_ENV), CGO_ENABLED: "0" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const started = Date.now();
    const heartbeat = setInterval(() => {
      log(`still building (${Math.round((Date.now() - started) / 1000)}s)...`);
    }, 30_000);
    let tail = "";
    const forward = (chunk) => {
      const text = chunk.toString();
      tail = (tail + text).slice(-8000);
      for (const line of text.split("\n")) {
        if (line.trim()) log(`go: ${line}`);
      }
    };
    child.stdout.on("data", forward);
    child.stderr.on("data", forward);
    child.on("error", (err) => {
      clearInterval(heartbeat);
      reject(new Error(`could not run go: ${err.message}`));
    });
    child.on("close", (code, signal) => {
      clearInterval(heartbeat);
      if (code === 0) {
        resolve();
      } else {
        reject(new Error(`go build failed (${signal ?? `exit code ${code}`}):\n${tail.trim()}`));
      }
    });
  });
}

/** Moves a complete build into the cache directory; a concurrent, valid build that got there first wins. */
function installIntoCache(tmp, log) {
  const dir = cacheDir();
  try {
    fs.renameSync(tmp, dir);
    return;
  } catch (err) {
    if (!["EEXIST", "ENOTEMPTY", "EPERM"].includes(err.code)) throw err;
  }
  if (checkCache(() => {})) {
    log(`another process finished a build into ${dir} first: using it`);
    fs.rmSync(tmp, { recursive: true, force: true });
    return;
  }
  const trash = `${tmp}-old`;
  fs.renameSync(dir, trash);
  fs.renameSync(tmp, dir);
  fs.rmSync(trash, { recursive: true, force: true });
}

/** Removes the temporary directories of builds that were killed more than 6 hours ago. */
function removeStaleBuilds(root, log) {
  for (const entry of fs.readdirSync(root)) {
    if (!entry.startsWith(".build-")) continue;
    const p = path.join(root, entry);
    try {
      if (Date.now() - fs.statSync(p).mtimeMs > 6 * 3600_000) {
        fs.rmSync(p, { recursive: true, force: true });
        log(`removed the leftovers of an interrupted build: ${p}`);
      }
    } catch {
      // gone already
    }
  }
}

// --- helpers ----------------------------------------------------------------------------------------------------

function sdkPackageJson() {
  const require = createRequire(path.join(REPO_ROOT, "package.json"));
  return require.resolve("@pulumi/pulumi/package.json");
}

function dynamicProviderPlugin() {
  let pkg;
  try {
    pkg = sdkPackageJson();
  } catch {
    throw new Error(`@pulumi/pulumi is not installed in ${REPO_ROOT}: run npm install first`);
  }
  const plugin = path.join(path.dirname(pkg), DYNAMIC_PROVIDER_PLUGIN);
  if (!fs.existsSync(plugin)) {
    throw new Error(`${plugin} is missing from the installed @pulumi/pulumi`);
  }
  return plugin;
}

function checkSdkVersion(log) {
  let installed;
  try {
    installed = JSON.parse(fs.readFileSync(sdkPackageJson(), "utf8")).version;
  } catch {
    log(`warning: @pulumi/pulumi is not installed in ${REPO_ROOT} (run npm install)`);
    return;
  }
  if (wantedVersion() === PULUMI_VERSION && installed !== PULUMI_VERSION) {
    log(
      `warning: the installed @pulumi/pulumi is ${installed} but scripts/pulumi-cli.mjs pins the CLI at ` +
        `${PULUMI_VERSION}: update PULUMI_VERSION and tools/pulumi-cli/go.mod together with package.json`,
    );
  }
}

/** Hash of the sources the cached binaries are built from, so that a change to them triggers a rebuild. */
function sourceStamp() {
  const files = ["go.mod", "go.sum", path.join("pulumi-language-nodejs", "main.go")];
  const hash = createHash("sha256");
  hash.update(`v${wantedVersion()}\n`);
  for (const f of files) {
    const p = path.join(TOOL_DIR, f);
    if (!fs.existsSync(p)) return "";
    hash.update(`${f}\n`);
    hash.update(fs.readFileSync(p));
  }
  return hash.digest("hex");
}

function pulumiVersion(pulumi) {
  const res = spawnSync(pulumi, ["version"], {
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, PULUMI_SKIP_UPDATE_CHECK: "true" },
  });
  if (res.status !== 0) return undefined;
  const match = /v?\d+\.\d+\.\d+[^\s]*/.exec(res.stdout);
  if (!match) return undefined;
  return match[0].startsWith("v") ? match[0] : `v${match[0]}`;
}

/** Compares two versions by major.minor.patch (a pre-release counts as older than its release). */
function compareVersions(a, b) {
  const parse = (v) => {
    const m = /^v?(\d+)\.(\d+)\.(\d+)(-.+)?/.exec(v);
    return m ? [Number(m[1]), Number(m[2]), Number(m[3]), m[4] ? 0 : 1] : [0, 0, 0, 0];
  };
  const pa = parse(a);
  const pb = parse(b);
  for (let i = 0; i < pa.length; i++) {
    if (pa[i] !== pb[i]) return pa[i] - pb[i];
  }
  return 0;
}

function which(name) {
  const exts = process.platform === "win32" ? (process.env.PATHEXT || ".EXE;.CMD;.BAT").split(";") : [""];
  for (const dir of (process.env.PATH || "").split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const p = path.join(dir, name + ext);
      if (isExecutable(p)) return path.resolve(p);
    }
  }
  return undefined;
}

function isExecutable(p) {
  try {
    if (!fs.statSync(p).isFile()) return false;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

function readFileOr(p, fallback) {
  try {
    return fs.readFileSync(p, "utf8");
  } catch {
    return fallback;
  }
}

function shellQuote(s) {
  return /^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

function isMain() {
  if (!process.argv[1]) return false;
  try {
    return fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  ensurePulumiCli().then(
    ({ pulumi }) => {
      process.stdout.write(`${pulumi}\n`);
    },
    (err) => {
      process.stderr.write(`[pulumi-cli] error: ${err.message}\n`);
      process.exit(1);
    },
  );
}
