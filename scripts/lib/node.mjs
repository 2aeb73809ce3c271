// A Node.js of a given major release for the scripts that run the tests and the demo: this process's own when it
// is new enough, else the official binary from the npm registry's `node` package, installed once into the cache
// beside the CLI builds (<cache>/node-<major>). This project's machines reach the npm registry but no Node.js
// download site, and their system Node.js (20) is older than the package supports (22).
//
//   nodeBinary(major)     the path of a Node.js <major>+ binary (installing it when needed);
//   runUnderNode(major)   re-runs the calling script under that binary when this process is older, and exits
//                         with its code; returns at once when this process is new enough;
//   `node scripts/lib/node.mjs <major>` prints the path nodeBinary(major) gives (for .ci/run).

import { spawn, spawnSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cacheRoot } from "../pulumi-cli.mjs";

const major = (version) => Number(version.replace(/^v/, "").split(".")[0]);
const rank = (version) =>
  version
    .replace(/^v/, "")
    .split(".")
    .reduce((sum, n) => sum * 1000 + (Number.parseInt(n, 10) || 0), 0);
/** The package's floor (package.json's `engines`, `>=22.12.0`): an older 22 cannot `require` the package. */
const FLOOR = JSON.parse(fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8")).engines.node.replace(
  /^>=/,
  "",
);
/** Whether Node.js `version` serves where `wanted` is asked for: that major or newer, and not below the floor. */
const serves = (version, wanted) => major(version) >= wanted && rank(version) >= rank(FLOOR);

/** A Node.js `wanted`+ binary: this process's own if new enough, else the cached npm `node@<wanted>`. */
export function nodeBinary(wanted, log = (m) => process.stderr.write(`${m}\n`)) {
  if (serves(process.versions.node, wanted)) return process.execPath;
  const dir = path.join(cacheRoot(), `node-${wanted}`);
  const bin = path.join(dir, "node_modules", "node", "bin", "node");
  if (!fs.existsSync(bin)) {
    log(`installing Node.js ${wanted} from the npm registry's node package into ${dir}`);
    const tmp = `${dir}.tmp-${process.pid}`;
    fs.rmSync(tmp, { recursive: true, force: true });
    fs.mkdirSync(tmp, { recursive: true });
    const args = [
      "install",
      "--prefix",
      tmp,
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      `node@${wanted}`,
    ];
    const res = spawnSync("npm", args, { stdio: ["ignore", "inherit", "inherit"] });
    if (res.status !== 0) throw new Error(`npm ${args.join(" ")} failed (${res.signal ?? `exit code ${res.status}`})`);
    try {
      fs.renameSync(tmp, dir);
    } catch (err) {
      // Another process installed it first: keep theirs.
      fs.rmSync(tmp, { recursive: true, force: true });
      if (!fs.existsSync(bin)) throw err;
    }
  }
  const version = spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout?.trim() ?? "";
  if (!serves(version, wanted)) throw new Error(`${bin} answers "${version}", not Node.js ${wanted}+`);
  return bin;
}

/** The environment for processes run under `bin`: its folder first on PATH, so that every child `node` is it. */
export function envWithNode(bin, env = process.env) {
  return { ...env, PATH: [path.dirname(bin), env.PATH].filter(Boolean).join(path.delimiter) };
}

/**
 * When this process's Node.js is older than `wanted`, says so in one line, runs the same script with the same
 * arguments under Node.js `wanted` (its folder first on PATH, so that jest, the Pulumi CLI's language host and the
 * programs use it too) and exits with its code. Returns when this process is new enough.
 */
export async function runUnderNode(wanted, label) {
  if (serves(process.versions.node, wanted)) return;
  const bin = nodeBinary(wanted, (m) => process.stderr.write(`[${label}] ${m}\n`));
  const version = spawnSync(bin, ["--version"], { encoding: "utf8" }).stdout.trim();
  process.stderr.write(
    `[${label}] this machine's Node.js is ${process.version}, older than the Node.js ${wanted} (at least ${FLOOR}) the package needs: running under Node.js ${version} (${bin})\n`,
  );
  const child = spawn(bin, [...process.execArgv, ...process.argv.slice(1)], {
    env: envWithNode(bin),
    stdio: "inherit",
  });
  // Ctrl-C reaches the child too (same process group): let it clean up and exit first.
  const forward = (signal) => child.kill(signal);
  process.on("SIGINT", () => {});
  process.on("SIGTERM", forward);
  const code = await new Promise((resolve) => child.on("close", (c, signal) => resolve(signal ? 1 : (c ?? 1))));
  process.exit(code);
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url))) {
  const wanted = Number(process.argv[2]);
  if (!Number.isInteger(wanted)) {
    process.stderr.write("usage: node scripts/lib/node.mjs <major>\n");
    process.exit(2);
  }
  try {
    process.stdout.write(`${nodeBinary(wanted)}\n`);
  } catch (err) {
    process.stderr.write(`${err.message}\n`);
    process.exit(1);
  }
}
