#!/usr/bin/env node
// `npm run demo`: the demo program (Pulumi.yaml at the repository root, which runs examples/demo/index.ts) through
// `pulumi up`, `pulumi preview --expect-no-changes` and `pulumi destroy` with the real Pulumi CLI, against an
// emulator of the platform started in this process. Needs no account and no configuration; leaves nothing behind:
// the stack lives in a temporary file backend, and its config file (the passphrase salt) in a temporary folder.
// On a Node.js older than 22 it fetches Node.js 22 from the npm registry's `node` package and runs itself under it.

import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runUnderNode } from "./lib/node.mjs";
import { PulumiStack, REPO } from "./lib/stack.mjs";
import { ensurePulumiCli, wantedVersion } from "./pulumi-cli.mjs";

await runUnderNode(22, "demo");

const STACK = "demo";
const started = Date.now();
const out = (line = "") => process.stdout.write(`${line}\n`);
const progress = (line) => process.stderr.write(`${line}\n`);
const seconds = (ms) => `${(ms / 1000).toFixed(1)}s`;

/** Everything to remove at the end, also on Ctrl-C. */
const cleanups = [];
function cleanUp() {
  while (cleanups.length > 0) {
    try {
      cleanups.pop()();
    } catch {
      // best effort: temporary folders only
    }
  }
}
process.on("SIGINT", () => {
  progress("\ninterrupted: removing the temporary folders (the emulator's data goes with this process)");
  cleanUp();
  process.exit(130);
});

async function loadEmulator() {
  if (
    !existsSync(join(REPO, "dist/provider/emulator/index.js")) ||
    !existsSync(join(REPO, "dist/provider/runtime/index.js"))
  ) {
    throw new Error("dist/ is missing or incomplete: run `npm run build` first (`npm run demo` does it)");
  }
  // The program imports the package by its name; at the repository root that resolves to dist/ by self-reference.
  const resolved = import.meta.resolve("pulumi-llm-accounts");
  if (resolved !== new URL("../dist/provider/index.js", import.meta.url).href) {
    throw new Error(`"pulumi-llm-accounts" resolves to ${resolved} here, not to this repository's dist/`);
  }
  return import("../dist/provider/emulator/index.js");
}

/** Calls the emulator answered since the last call, by operation, with the non-200 answers counted apart. */
function takeCalls(emulator) {
  const calls = {};
  for (const r of emulator.requests()) {
    const c = (calls[r.op] ??= { n: 0, failed: 0 });
    c.n += 1;
    if (r.status !== 200) c.failed += 1;
  }
  emulator.clearRequests();
  return calls;
}

/** The lines of `pulumi up`/`destroy` output that say what happened to each resource. */
function resourceLines(stdout) {
  return stdout
    .split("\n")
    .filter((l) => /dynamic\/llm-accounts:\S+ \S+ (created|deleted|updated)/.test(l))
    .map((l) => l.replace("pulumi-nodejs:dynamic/llm-accounts:", "llm-accounts:").trim());
}

function show(value) {
  return typeof value === "string" ? value : JSON.stringify(value);
}

async function main() {
  out("pulumi-llm-accounts demo: the real Pulumi CLI against the built-in emulator of the platform");
  out();

  const { startEmulator } = await loadEmulator();
  const emulator = await startEmulator({ port: 0 });
  cleanups.push(() => void emulator.close());
  out(`1. Emulator listening on ${emulator.baseUrl} (in this process; its keys are generated and never printed)`);

  progress(
    `Looking for the Pulumi CLI v${wantedVersion()}+ (on PATH, or built once into ~/.cache/pulumi-llm-accounts). ` +
      "If there is none, it is built now from Go modules: the first time this takes several minutes.",
  );
  const cliStarted = Date.now();
  const cli = await ensurePulumiCli({ log: (m) => progress(`[pulumi-cli] ${m}`) });
  const sdk = JSON.parse(readFileSync(join(REPO, "node_modules/@pulumi/pulumi/package.json"), "utf8")).version;
  out(`2. Pulumi CLI ${cli.version} (${cli.source}: ${cli.pulumi}) in ${seconds(Date.now() - cliStarted)}`);
  out(`   with Node.js ${process.version} and @pulumi/pulumi ${sdk}`);

  // `pulumi stack init` writes Pulumi.<stack>.yaml beside Pulumi.yaml: make it in a scratch copy of the project
  // file, and point every command that runs the program at the repository root to that config file.
  const scratch = mkdtempSync(join(tmpdir(), "llm-accounts-demo-"));
  cleanups.push(() => rmSync(scratch, { recursive: true, force: true }));
  copyFileSync(join(REPO, "Pulumi.yaml"), join(scratch, "Pulumi.yaml"));
  const stack = await PulumiStack.create({
    dir: scratch,
    stack: STACK,
    account: { baseUrl: emulator.baseUrl, adminKey: emulator.adminKey, accountKey: emulator.accountKey },
  });
  cleanups.push(() => stack.dispose());
  stack.dir = REPO;
  const configFile = ["--config-file", join(scratch, `Pulumi.${STACK}.yaml`)];
  out(`3. Stack "${STACK}" of the program in Pulumi.yaml (examples/demo/index.ts), in a temporary file backend`);
  out();

  const calls = {};
  const cliText = [];
  const step = async (name, run) => {
    const r = await run();
    calls[name] = takeCalls(emulator);
    cliText.push(r.stdout, r.stderr);
    return r;
  };

  const up = await step("up", () => stack.up(configFile));
  out(`4. pulumi up: done in ${seconds(up.ms)}`);
  for (const l of resourceLines(up.stdout)) out(`     ${l}`);
  const secrets = [
    emulator.adminKey,
    emulator.accountKey,
    ...emulator.state.listKeys().map((k) => k.key),
    ...emulator.state.listSubAccounts().map((s) => s.token),
  ];
  out(
    `   On the platform now: ${emulator.state.listKeys().length} API key(s), ${emulator.state.listSubAccounts().length} sub-account(s).`,
  );
  out();

  const outputs = await stack.outputs();
  out("   Stack outputs (secrets masked; `pulumi stack output <name> --show-secrets` shows them):");
  const width = Math.max(...Object.keys(outputs).map((k) => k.length));
  for (const [name, value] of Object.entries(outputs)) out(`     ${name.padEnd(width)}  ${show(value)}`);
  out();

  const preview = await step("preview", () => stack.preview(["--expect-no-changes", ...configFile]));
  const unchanged = /(\d+) unchanged/.exec(preview.stdout)?.[1];
  out(
    `5. pulumi preview --expect-no-changes: passed in ${seconds(preview.ms)}: the program and the platform agree${unchanged ? ` (${unchanged} resources unchanged)` : ""}`,
  );
  out();

  const destroy = await step("destroy", () => stack.destroy(configFile));
  out(`6. pulumi destroy: done in ${seconds(destroy.ms)}`);
  for (const l of resourceLines(destroy.stdout)) out(`     ${l}`);
  const leftKeys = emulator.state.listKeys().length;
  const leftSubAccounts = emulator.state.listSubAccounts().length;
  if (leftKeys + leftSubAccounts > 0) {
    throw new Error(`pulumi destroy left ${leftKeys} API key(s) and ${leftSubAccounts} sub-account(s) on the emulator`);
  }
  out("   Nothing is left on the platform.");
  out();

  const ops = [...new Set(Object.values(calls).flatMap((c) => Object.keys(c)))].sort();
  const steps = Object.keys(calls);
  const opWidth = Math.max("operation".length, ...ops.map((o) => o.length));
  out("7. API calls the emulator answered, by operation and step:");
  out(`     ${"operation".padEnd(opWidth)}  ${steps.map((s) => s.padStart(7)).join("  ")}`);
  for (const op of ops) {
    const cells = steps.map((s) => {
      const c = calls[s][op];
      return (c ? `${c.n}${c.failed ? ` (${c.failed} failed)` : ""}` : "-").padStart(7);
    });
    out(`     ${op.padEnd(opWidth)}  ${cells.join("  ")}`);
  }
  const total = Object.values(calls).reduce((sum, c) => sum + Object.values(c).reduce((a, b) => a + b.n, 0), 0);
  out(`     ${total} calls in all.`);

  const leaked = secrets.filter((s) => s && cliText.some((t) => t.includes(s)));
  if (leaked.length > 0) throw new Error(`${leaked.length} key value(s) appeared in the Pulumi CLI's output`);
  out("   No key value appeared in the Pulumi CLI's output.");
  out();

  out(`Demo passed in ${seconds(Date.now() - started)}.`);
  out();
  out("Run it yourself, from the repository root:");
  if (cli.source !== "path") {
    // A new user's `pulumi` is often the one built into the cache above, which is not on PATH.
    out("  with the Pulumi CLI this demo ran, which is not on your PATH (`npm run -s pulumi-cli` prints where it is):");
    out(`    export PATH="${cli.binDir}:$PATH"`);
  }
  out("  against the emulator:");
  // The clone's own bin, never a bare `npx llm-accounts`: the package's bin is not on npx's path in its own folder,
  // so npx would fetch and run whatever a registry serves under that name.
  out(
    "    npm run -s emulator -- --port 8787              # keep it running; its first line holds adminKey and accountKey",
  );
  out("    export LLM_ACCOUNTS_BASE_URL=http://127.0.0.1:8787");
  out("    export LLM_ACCOUNTS_ADMIN_KEY=sk-admin-...      # adminKey from that line");
  out("    export LLM_ACCOUNTS_ACCOUNT_KEY=sk-...          # accountKey from that line");
  out("    pulumi login --local && pulumi stack init dev && pulumi up");
  out("  against the platform, instead of the emulator's values:");
  out("    pulumi config set llm-accounts:baseUrl https://<the platform's API address>");
  out("    pulumi config set --secret llm-accounts:adminKey sk-admin-...");
  out("    pulumi config set --secret llm-accounts:accountKey sk-...");
  out("    pulumi up");
  out("  then, to delete what it made and the stack:");
  out("    pulumi destroy && pulumi stack rm dev");
  out("More programs: examples/quickstart, examples/sub-accounts, examples/multi-team, examples/ci-drift-gate.");
}

main().then(
  () => {
    cleanUp();
  },
  (err) => {
    cleanUp();
    process.stderr.write(`\ndemo failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
