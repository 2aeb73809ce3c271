import { expect, test } from "@jest/globals";
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import ts from "typescript";
import { REPO } from "./support/programDir.js";

// Issue 42: the provider keeps per-process state in one place, the session (runtime/command/session.ts). A module
// that keeps a registry of its own (a top-level `let`, or a top-level const made a new container or instance)
// holds state that startFresh never resets and a second run of the program in one process shares.

const PROVIDER = join(REPO, "provider");
const SESSION = "provider/runtime/command/session.ts";

/** Module-level values that are made once and never change, each with why it is not per-process state. */
const CONSTANTS: Record<string, string> = {
  // The emulator's routing table: filled from OPERATIONS as the module loads, only read after.
  "provider/emulator/server.ts ROUTES": "a table made at load",
  // got, imported at the first request rather than with the module: the library itself, the same for every caller.
  "provider/client/http.ts loaded": "a module loaded late",
  // Not a constant, but not the session's either: the platform counts calls per credential over windows that do not
  // restart with a session, so every session and every client made alone (import, audit, sweep) waits on these.
  "provider/client/limiter.ts PROCESS_LIMITERS": "the platform's rate windows outlive a session",
};

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sources(join(dir, e.name)) : e.name.endsWith(".ts") ? [join(dir, e.name)] : [],
  );
}

/** The expression under `as`, `satisfies`, `!` and parentheses. */
function bare(e: ts.Expression): ts.Expression {
  while (
    ts.isAsExpression(e) ||
    ts.isSatisfiesExpression(e) ||
    ts.isParenthesizedExpression(e) ||
    ts.isNonNullExpression(e)
  )
    e = e.expression;
  return e;
}

/** Classes whose instance, made from a non-empty argument, is a table or pattern fixed at load. */
const TABLES = new Set(["Map", "Set", "RegExp"]);

/**
 * Whether a const's initialiser makes something to fill or change: an instance (`new X()`; a Map, Set or RegExp
 * only when made empty), or an empty `[]` or `{}`.
 */
function mutable(init: ts.Expression | undefined): boolean {
  if (init === undefined) return false;
  const e = bare(init);
  if (ts.isNewExpression(e)) {
    const args = (e.arguments ?? []).map(bare);
    const empty =
      args.length === 0 || (args.length === 1 && ts.isArrayLiteralExpression(args[0]) && args[0].elements.length === 0);
    return !(ts.isIdentifier(e.expression) && TABLES.has(e.expression.text)) || empty;
  }
  if (ts.isArrayLiteralExpression(e)) return e.elements.length === 0;
  if (ts.isObjectLiteralExpression(e)) return e.properties.length === 0;
  return false;
}

/** `file NAME` of each module-level `let`/`var`, and of each const made mutable, in a source file. */
function registriesOf(file: string): string[] {
  const name = relative(REPO, file);
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  return source.statements.filter(ts.isVariableStatement).flatMap((statement) => {
    const list = statement.declarationList;
    const isConst = (list.flags & ts.NodeFlags.Const) !== 0;
    return list.declarations
      .filter((d) => !isConst || mutable(d.initializer))
      .map((d) => `${name} ${d.name.getText(source)}`);
  });
}

test("no module of provider/ keeps a mutable registry at module level but the session (and the listed constants)", () => {
  const found = sources(PROVIDER)
    .flatMap(registriesOf)
    .filter((r) => !r.startsWith(`${SESSION} `) && !(r in CONSTANTS));
  expect(found).toEqual([]);
});

test("the scan finds what it looks for (each form once), so that an empty answer means something", () => {
  const probe = join(REPO, "tests", "moduleState.test.ts");
  // This file's own module-level consts are constants; a synthetic source holds every form the scan must catch.
  expect(registriesOf(probe)).toEqual([]);
  const text =
    "let a = 1;\nvar b;\nconst c = new Map();\nconst d = new WeakMap<object, string>();\nconst e = [] as string[];\nconst f = {};\nconst g = { x: 1 };\nconst h = [1, 2];\nexport const i = new Set<string>();\nconst j = new Set(['x']);\nconst k = new Map([]);\nconst l = new RegExp('x');\nconst m = new Limiter(1);\n";
  const source = ts.createSourceFile("x.ts", text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS);
  const names = source.statements
    .filter(ts.isVariableStatement)
    .flatMap((s) =>
      s.declarationList.declarations
        .filter((d) => (s.declarationList.flags & ts.NodeFlags.Const) === 0 || mutable(d.initializer))
        .map((d) => d.name.getText(source)),
    );
  expect(names).toEqual(["a", "b", "c", "d", "e", "f", "i", "k", "m"]);
});

test("every listed constant still exists, so that the list cannot keep a name that moved", () => {
  const all = new Set(sources(PROVIDER).flatMap(registriesOf));
  expect(Object.keys(CONSTANTS).filter((k) => !all.has(k))).toEqual([]);
});
