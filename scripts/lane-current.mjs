#!/usr/bin/env node
// The "current" test lane: the whole `npm test` on the toolchain a user installing today gets, beside the floor
// lane (`npm test` itself: the machine's Node.js 20.19+, @pulumi/pulumi and the CLI at PULUMI_VERSION).
//
//   - Node.js 24: the `node` running this script if it is 24 or newer (a contributor who has it), else the
//     official binary from the npm registry's `node` package, installed once into the cache beside the CLI builds;
//   - @pulumi/pulumi: the newest release on the npm registry (`latest`);
//   - the Pulumi CLI: the newest release, no newer than that SDK, whose Go modules the module proxy serves
//     (asked each run, see newestBuildableVersion), built once and cached like the floor's.
//
// It tests a copy of the working tree (tracked and untracked files, .gitignore respected) in a temporary folder,
// so that the checkout's own node_modules keep the floor. Usage: `npm run test:current [-- <jest arguments>]`.
// Environment: LLM_ACCOUNTS_LANE_NODE=/path/to/node to use another Node.js 24 binary.

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cacheRoot, CLI_VERSION_ENV, ensurePulumiCli, newestBuildableVersion } from "./pulumi-cli.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const NODE_MAJOR = 24;
const log = (message) => process.stderr.write(`[lane current] ${message}\n`);

/** A Node.js 24 binary: LLM_ACCOUNTS_LANE_NODE, this process's own if new enough, else the cached npm `node@24`. */
function nodeBinary() {
  const given = process.env.LLM_ACCOUNTS_LANE_NODE;
  if (given) return given;
  if (Number(process.versions.node.split(".")[0]) >= NODE_MAJOR) return process.execPath;
  const dir = path.join(cacheRoot(), `node-${NODE_MAJOR}`);
  const bin = path.join(dir, "node_modules", "node", "bin", "node");
  if (!fs.existsSync(bin)) {
    log(`installing Node.js ${NODE_MAJOR} from the npm registry's node package into ${dir}`);
    const tmp = `${dir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    run("npm", ["install", "--prefix", tmp, "--no-save", "--no-package-lock", "--no-audit", "--no-fund", `node@${NODE_MAJOR}`]);
    fs.rmSync(dir, { recursive: true, force: true });
    fs.renameSync(tmp, dir);
  }
  return bin;
}

function run(cmd, args, options = {}) {
  const res = spawnSync(cmd, args, { stdio: ["ignore", "inherit", "inherit"], ...options });
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed (${res.signal ?? `exit code ${res.status}`})`);
}

function capture(cmd, args, options = {}) {
  const res = spawnSync(cmd, args, { encoding: "utf8", ...options });
  if (res.status !== 0) throw new Error(`${cmd} ${args.join(" ")} failed: ${(res.stderr || "").trim()}`);
  return res.stdout.trim();
}

/** The working tree's files (tracked and untracked, ignored ones left out), or everything but build output. */
function filesToCopy() {
  const res = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], { cwd: REPO, encoding: "utf8" });
  if (res.status === 0) return res.stdout.split("\0").filter((f) => f && fs.existsSync(path.join(REPO, f)));
  return undefined;
}

function copyTree(dest) {
  const files = filesToCopy();
  if (!files) {
    fs.cpSync(REPO, dest, { recursive: true, filter: (p) => !/[/\\](node_modules|dist|\.git)([/\\]|$)/.test(p) });
    return;
  }
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(dest, f)), { recursive: true });
    fs.copyFileSync(path.join(REPO, f), path.join(dest, f));
    fs.chmodSync(path.join(dest, f), fs.statSync(path.join(REPO, f)).mode);
  }
}

async function main() {
  const started = Date.now();
  const node = nodeBinary();
  const nodeVersion = capture(node, ["--version"]);
  if (Number(nodeVersion.replace(/^v/, "").split(".")[0]) < NODE_MAJOR) throw new Error(`${node} is ${nodeVersion}, not Node.js ${NODE_MAJOR}+`);
  const env = { ...process.env, PATH: [path.dirname(node), process.env.PATH].join(path.delimiter) };

  const sdk = capture("npm", ["view", "@pulumi/pulumi", "version"], { env });
  const cliVersion = newestBuildableVersion({ ceiling: sdk, log });
  env[CLI_VERSION_ENV] = cliVersion;
  log(`Node.js ${nodeVersion}, @pulumi/pulumi ${sdk}, Pulumi CLI v${cliVersion}`);

  // Build (or find) the CLI first, with this lane's version, so that its minutes are reported apart.
  process.env[CLI_VERSION_ENV] = cliVersion;
  const cliStarted = Date.now();
  const cli = await ensurePulumiCli({ log: (m) => log(`[pulumi-cli] ${m}`) });
  log(`Pulumi CLI ${cli.version} (${cli.source}) ready in ${Math.round((Date.now() - cliStarted) / 1000)}s`);

  const work = fs.mkdtempSync(path.join(os.tmpdir(), "llm-accounts-lane-current-"));
  try {
    copyTree(work);
    const installStarted = Date.now();
    run("npm", ["ci", "--no-audit", "--no-fund"], { cwd: work, env });
    run("npm", ["install", "--no-save", "--no-audit", "--no-fund", `@pulumi/pulumi@${sdk}`], { cwd: work, env });
    const installed = JSON.parse(fs.readFileSync(path.join(work, "node_modules/@pulumi/pulumi/package.json"), "utf8")).version;
    if (installed !== sdk) throw new Error(`@pulumi/pulumi ${installed} was installed, not ${sdk}`);
    log(`installed in ${Math.round((Date.now() - installStarted) / 1000)}s`);

    // The copy has no .git: tests that build an earlier release from git (tests/e2e/upgrade.test.ts) read the
    // checkout's history through GIT_DIR.
    const gitDir = spawnSync("git", ["rev-parse", "--absolute-git-dir"], { cwd: REPO, encoding: "utf8" });
    if (gitDir.status === 0) env.GIT_DIR = gitDir.stdout.trim();
    const testStarted = Date.now();
    const code = await new Promise((resolve) => {
      const child = spawn("npm", ["test", "--", ...process.argv.slice(2)], { cwd: work, env, stdio: "inherit" });
      child.on("close", (c, signal) => resolve(signal ? 1 : c));
    });
    const minutes = (ms) => `${(ms / 60_000).toFixed(1)} min`;
    log(
      `${code === 0 ? "passed" : "FAILED"}: Node.js ${nodeVersion}, @pulumi/pulumi ${sdk}, Pulumi CLI ${cli.version}; ` +
        `tests ${minutes(Date.now() - testStarted)}, whole lane ${minutes(Date.now() - started)}`,
    );
    return code;
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err) => {
    log(`error: ${err.message}`);
    process.exit(1);
  },
);
