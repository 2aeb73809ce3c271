#!/usr/bin/env node
// The "current" test lane: the whole `npm test` on the toolchain a user installing today gets, beside the floor
// lane (`npm test` itself: Node.js 22, @pulumi/pulumi and the CLI at PULUMI_VERSION).
//
//   - Node.js 26: the `node` running this script if it is 26 or newer, else the official binary from the npm
//     registry's `node` package, installed once into the cache beside the CLI builds (scripts/lib/node.mjs);
//   - @pulumi/pulumi: the newest release on the npm registry (`latest`);
//   - the Pulumi CLI: the newest release whose Go modules the module proxy serves, asked each run and not capped
//     by the SDK (users upgrade the CLI on its own; see newestBuildableVersion), built once and cached like the floor's.
//
// It tests a copy of the working tree (tracked and untracked files, .gitignore respected) in a temporary folder,
// so that the checkout's own node_modules keep the floor. Usage: `npm run test:current [-- <jest arguments>]`.
// Environment: LLM_ACCOUNTS_LANE_NODE=/path/to/node to use another Node.js 26 binary.

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { envWithNode, nodeBinary } from "./lib/node.mjs";
import { CLI_VERSION_ENV, ensurePulumiCli, newestBuildableVersion } from "./pulumi-cli.mjs";

const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const NODE_MAJOR = 26;
const log = (message) => process.stderr.write(`[lane current] ${message}\n`);

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
  const res = spawnSync("git", ["ls-files", "-z", "--cached", "--others", "--exclude-standard"], {
    cwd: REPO,
    encoding: "utf8",
  });
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
  const node = process.env.LLM_ACCOUNTS_LANE_NODE || nodeBinary(NODE_MAJOR, log);
  const nodeVersion = capture(node, ["--version"]);
  if (Number(nodeVersion.replace(/^v/, "").split(".")[0]) < NODE_MAJOR)
    throw new Error(`${node} is ${nodeVersion}, not Node.js ${NODE_MAJOR}+`);
  const env = envWithNode(node);

  const sdk = capture("npm", ["view", "@pulumi/pulumi", "version"], { env });
  const cliVersion = newestBuildableVersion({ log });
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
    const installed = JSON.parse(
      fs.readFileSync(path.join(work, "node_modules/@pulumi/pulumi/package.json"), "utf8"),
    ).version;
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
