import { expect, test } from "@jest/globals";
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { REPO } from "./support/programDir.js";
import { PROVIDER, providerSources } from "./support/providerSources.js";

// The floors of provider/ (docs/development.md, Layout): a file imports from its own folder or from a lower floor,
// never from a folder of its own floor or above, so that the path a request takes reads top-down and no circle
// can form between folders. The commands (provider/commands/<command>) stand above the engines they run (import,
// policy); what they share (the rest of provider/commands/: the kit, the key reader, progress) stands below those.
const FLOORS: Record<string, number> = {
  api: 0,
  "version.ts": 0,
  "usageError.ts": 0,
  client: 1,
  emulator: 1,
  runtime: 2,
  resources: 3,
  commands: 3,
  import: 4,
  policy: 4,
  plugin: 4,
  "index.ts": 4,
  "commands/import.ts": 5,
  "commands/audit.ts": 5,
  "commands/sweep.ts": 5,
  "commands/emulator.ts": 5,
  "commands/doctor": 5,
  "cli.ts": 6,
};

/** The folder (or top-level file) of provider/ that a file belongs to; a command under provider/commands/ is its own. */
const placeOf = (file: string) => {
  const [top, next] = relative(PROVIDER, file).split("/");
  return `${top}/${next}` in FLOORS ? `${top}/${next}` : top;
};

/** The relative imports of a file (static, re-exports and dynamic), as files of provider/. */
function importsOf(file: string): string[] {
  const text = readFileSync(file, "utf8");
  return [...text.matchAll(/(?:from|import\()\s*"(\.{1,2}\/[^"]+)"/g)].map((m) =>
    resolve(dirname(file), m[1]).replace(/\.js$/, ".ts"),
  );
}

test("every folder and top-level file of provider/ has a floor", () => {
  expect(readdirSync(PROVIDER).filter((name) => !(name in FLOORS))).toEqual([]);
});

test("provider/ imports only downwards: from its own folder or a lower floor (the commands run the engines; policy does not reach into import)", () => {
  const upward = providerSources().flatMap((file) =>
    importsOf(file)
      .filter((target) => placeOf(target) !== placeOf(file) && FLOORS[placeOf(target)] >= FLOORS[placeOf(file)])
      .map((target) => `${relative(REPO, file)} -> ${relative(REPO, target)}`),
  );
  expect(upward).toEqual([]);
});

/** The runtime's wings (docs/development.md, Layout), each above the ones it may import. */
const WINGS: Record<string, number> = { engine: 0, command: 1, apiKey: 2, subAccountBatch: 2 };
const RUNTIME = join(PROVIDER, "runtime");
const wingOf = (file: string) => relative(RUNTIME, file).split("/")[0];

test("the runtime is its front (index.ts) and its wings, each file in one wing", () => {
  const outside = providerSources(RUNTIME).filter(
    (file) => file !== join(RUNTIME, "index.ts") && !(wingOf(file) in WINGS && relative(RUNTIME, file).includes("/")),
  );
  expect(outside.map((file) => relative(REPO, file))).toEqual([]);
});

test("a wing is reached through its front only, and imports only the wings below it", () => {
  const wrong = providerSources().flatMap((file) =>
    importsOf(file)
      .filter((target) => target.startsWith(RUNTIME + "/") && target !== join(RUNTIME, "index.ts"))
      .filter((target) => {
        const from = file.startsWith(RUNTIME + "/") && file !== join(RUNTIME, "index.ts") ? wingOf(file) : undefined;
        const to = wingOf(target);
        if (from === to) return false;
        const throughFront = target === join(RUNTIME, to, "index.ts");
        return !throughFront || (from !== undefined && WINGS[to] >= WINGS[from]);
      })
      .map((target) => `${relative(REPO, file)} -> ${relative(REPO, target)}`),
  );
  expect(wrong).toEqual([]);
});

/** What may stand under tests/ beside the tests themselves: their helpers' home, and the programs and models some tests run. */
const NOT_HELPERS = [
  /^tests\/e2e\/support\.ts$/, // the e2e step helper (upSettled, expectSettled): the e2e tests' own
  /^tests\/e2e\/(programs|fixtures)\//, // programs the CLI runs, states written by earlier releases
  /^tests\/convergence\//, // the generated histories: their model, engine and soak runner
  /^tests\/typecheck\//, // the program type-checked as a user's
];

test("test helpers have one home, tests/support: no other module under tests/ but programs and models tests run", () => {
  const walk = (dir: string): string[] =>
    readdirSync(join(REPO, dir), { withFileTypes: true }).flatMap((e) =>
      e.isDirectory() ? (e.name === "node_modules" ? [] : walk(`${dir}/${e.name}`)) : [`${dir}/${e.name}`],
    );
  const elsewhere = walk("tests").filter(
    (f) =>
      /\.(ts|mts|mjs|cjs|js)$/.test(f) &&
      !f.endsWith(".test.ts") &&
      !f.startsWith("tests/support/") &&
      !NOT_HELPERS.some((allowed) => allowed.test(f)),
  );
  expect(elsewhere).toEqual([]);
});
