import { expect, test } from "@jest/globals";
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import ts from "typescript";
import { REPO } from "./support/programDir.js";
import { providerSources } from "./support/providerSources.js";

// A function a reader can follow fits on a screen: no function in provider/ is longer than this (issue 42), counted
// from its first line to its last, blank lines and comments included (what a reader scrolls through).
const MAX_FUNCTION_LINES = 60;

/**
 * The functions over the limit today, each with its length when it was listed. The list only shrinks: split one,
 * then remove its line (the test fails while a listed function is back under the limit, or is longer than listed).
 */
const TOO_LONG_TODAY: Record<string, number> = {
  // Over the limit since the whole-tree formatting (Biome's line breaks of lines that were over 120 characters), not
  // by what they do: each to be split by what a reader can name.
  "provider/commands/doctor/checks/account.ts connect": 72,
  "provider/commands/doctor/checks/answers.ts answerRows": 61,
  "provider/commands/doctor/checks/pricing.ts pricingRows": 68,
  "provider/commands/doctor/checks/subAccounts.ts listRows": 68,
  "provider/import/batches.ts keptBatch": 70,
  "provider/runtime/subAccountBatch/lifecycle.ts changeBatch": 69,
};

/** What a function is called where it stands: its own name, the variable or property it is assigned to, Class.method. */
function nameOf(node: ts.FunctionLikeDeclaration, source: ts.SourceFile): string {
  const named = (n: ts.Node | undefined): string | undefined =>
    n && (ts.isIdentifier(n) || ts.isStringLiteral(n) || ts.isPrivateIdentifier(n))
      ? n.text
      : n && ts.isComputedPropertyName(n)
        ? n.expression.getText(source)
        : undefined;
  let own = named(node.name);
  if (own === undefined && ts.isConstructorDeclaration(node)) own = "constructor";
  const parent = node.parent;
  if (
    own === undefined &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent) || ts.isPropertyDeclaration(parent))
  )
    own = named(parent.name);
  const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  if (own === undefined) return `(anonymous, line ${line})`;
  const owner = ts.isClassLike(parent) ? named(parent.name) : undefined;
  return owner === undefined ? own : `${owner}.${own}`;
}

/** Every source file of provider/, parsed. */
function parsed(): ts.SourceFile[] {
  return providerSources().map((file) =>
    ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true),
  );
}

/** Every function, method and arrow of provider/ with its length in lines, from its first line to its last. */
function functionLengths(): Map<string, number> {
  const lengths = new Map<string, number>();
  for (const source of parsed()) {
    const visit = (node: ts.Node): void => {
      if (ts.isFunctionLike(node) && "body" in node && node.body !== undefined) {
        const fn = node as ts.FunctionLikeDeclaration;
        const first = source.getLineAndCharacterOfPosition(fn.getStart(source)).line;
        const last = source.getLineAndCharacterOfPosition(fn.getEnd()).line;
        const key = `${relative(REPO, source.fileName)} ${nameOf(fn, source)}`;
        lengths.set(key, Math.max(lengths.get(key) ?? 0, last - first + 1));
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return lengths;
}

test(`no function in provider/ is over ${MAX_FUNCTION_LINES} lines, but those listed as too long today, and none of those grew`, () => {
  const lengths = functionLengths();
  expect(lengths.size).toBeGreaterThan(500);
  const over = [...lengths].filter(([, n]) => n > MAX_FUNCTION_LINES);
  expect(over.filter(([name]) => !(name in TOO_LONG_TODAY)).map(([name, n]) => `${name}: ${n} lines`)).toEqual([]);
  expect(
    over
      .filter(([name, n]) => n > TOO_LONG_TODAY[name])
      .map(([name, n]) => `${name}: ${n} lines, listed at ${TOO_LONG_TODAY[name]}`),
  ).toEqual([]);
});

test("the list of functions too long today names only functions still over the limit (remove one once it is split)", () => {
  const lengths = functionLengths();
  const fixed = Object.keys(TOO_LONG_TODAY).filter((name) => (lengths.get(name) ?? 0) <= MAX_FUNCTION_LINES);
  expect(fixed).toEqual([]);
});

/** What every command does alike, and the JSON object test, each written once: the name and its one home. */
const WRITTEN_ONCE: Record<string, string> = {
  isObject: "provider/api/canonical.ts",
  readAll: "provider/commands/kit.ts",
  readOptionFile: "provider/commands/kit.ts",
  readKeyList: "provider/commands/kit.ts",
  parseKeyList: "provider/commands/kit.ts",
  refusedCredential: "provider/commands/kit.ts",
  credentialError: "provider/commands/kit.ts", // refusedCredential's old name, written twice before the kit
  printable: "provider/commands/kit.ts",
  commandOptions: "provider/commands/kit.ts",
  usageText: "provider/commands/kit.ts",
  readKeys: "provider/commands/keyReads.ts",
  progressOn: "provider/commands/progress.ts",
};

test("the commands' kit is written once: no file of provider/ declares its helpers again", () => {
  const elsewhere = parsed().flatMap((source) => {
    const file = relative(REPO, source.fileName);
    const declared: string[] = [];
    const visit = (node: ts.Node): void => {
      if ((ts.isFunctionDeclaration(node) || ts.isVariableDeclaration(node)) && node.name && ts.isIdentifier(node.name))
        declared.push(node.name.text);
      ts.forEachChild(node, visit);
    };
    visit(source);
    return declared
      .filter((name) => Object.hasOwn(WRITTEN_ONCE, name) && WRITTEN_ONCE[name] !== file)
      .map((name) => `${file}: ${name}`);
  });
  expect(elsewhere).toEqual([]);
});
