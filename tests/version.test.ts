import { expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { nodeTooOld, OLDEST_NODE } from "../provider/version.js";
import { REPO } from "./support/programDir.js";

/**
 * Runs `args` with this Node.js made to report `version` as its own (process.versions.node, which the check reads),
 * from the start of the process: the built CLI or a module of the built package, as a newcomer on an older Node.js runs it.
 */
function asNode(version: string, args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const pretend = `Object.defineProperty(process.versions, "node", { value: ${JSON.stringify(version)} });`;
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--import", `data:text/javascript,${encodeURIComponent(pretend)}`, ...args],
      { cwd: REPO },
      (err, stdout, stderr) => {
        resolve({ code: err ? (typeof err.code === "number" ? err.code : 1) : 0, stdout, stderr });
      },
    );
  });
}

const NEEDED = "pulumi-llm-accounts needs Node.js 22.12 or newer (22, 24 and 26 are tested); this is Node.js v20.19.0.";

test("the oldest supported Node.js is package.json's engines", () => {
  const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { engines: { node: string } };
  expect(pkg.engines.node).toBe(`>=${OLDEST_NODE}`);
});

test("22.12 is the floor: 22.11 and older are too old, 22.12 and every later release are not", () => {
  expect(["20.19.0", "v22.0.0", "22.11.9"].map((v) => nodeTooOld(v) !== undefined)).toEqual([true, true, true]);
  expect(["22.12.0", "v22.23.3", "23.0.0", "24.1.0", "26.10.0"].map((v) => nodeTooOld(v))).toEqual([
    undefined,
    undefined,
    undefined,
    undefined,
    undefined,
  ]);
});

test("llm-accounts on Node.js 20 stops with one line naming the Node.js needed, no stack trace; on 22.12 it runs", async () => {
  const old = await asNode("20.19.0", ["dist/provider/cli.js", "--help"]);
  expect(old).toEqual({ code: 1, stdout: "", stderr: `llm-accounts: ${NEEDED}\n` });
  const floor = await asNode("22.12.0", ["dist/provider/cli.js", "--help"]);
  expect(floor.code).toBe(0);
  expect(floor.stdout).toContain("Usage: llm-accounts <command>");
});

test("a program importing the package on Node.js 20 is warned in one line and runs on; on 22.12 it is not warned", async () => {
  const load = [
    "--input-type=module",
    "-e",
    `const pkg = await import(${JSON.stringify(join(REPO, "dist/provider/index.js"))}); console.log(typeof pkg.ApiKey);`,
  ];
  expect(await asNode("20.19.0", load)).toEqual({ code: 0, stdout: "function\n", stderr: `warning: ${NEEDED}\n` });
  expect(await asNode("22.12.0", load)).toEqual({ code: 0, stdout: "function\n", stderr: "" });
});
