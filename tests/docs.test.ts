import { afterAll, beforeAll, describe, expect, test } from "@jest/globals";
import { execFile } from "node:child_process";
import { readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { programDir, REPO } from "./support/programDir.js";
import {
  anchors,
  brokenLink,
  checkCommand,
  cliCommands,
  codeBlocks,
  links,
  markdownFiles,
  shellCommands,
  slug,
  type CodeBlock,
  type ShellContext,
} from "./support/markdown.js";

// Every code block of the README, docs/ and the examples' READMEs is checked: TypeScript is type-checked against
// the built package as a user's program, shell commands must name what exists, JSON must parse; and every
// relative link must reach a file and, with an anchor, a heading of it. docs/development.md says how to mark a
// fragment.

const files = markdownFiles(REPO);
const text = new Map(files.map((f) => [f, readFileSync(join(REPO, f), "utf8")]));
const blocks = files.flatMap((f) => codeBlocks(f, text.get(f)!));
const where = (b: CodeBlock) => `${b.file}:${b.line}`;

/** How a block is checked, or why it cannot be. */
type Kind = "ts" | "ts fragment" | "sh" | "json" | "text";
function kindOf(b: CodeBlock): Kind | { refused: string } {
  const info = [b.lang, ...b.markers].join(" ");
  if ((b.lang === "ts" || b.lang === "typescript") && b.markers.length === 0) return "ts";
  if ((b.lang === "ts" || b.lang === "typescript") && info.endsWith(" fragment") && b.markers.length === 1)
    return "ts fragment";
  if ((b.lang === "sh" || b.lang === "bash") && b.markers.length === 0) return "sh";
  if (b.lang === "json" && b.markers.length === 0) return "json";
  if (b.lang === "text" && b.markers.length === 0) return "text";
  return { refused: `"${info}" is not a block the docs test can check (ts, ts fragment, sh, json, text)` };
}

const PRELUDE = 'import * as pulumi from "@pulumi/pulumi";\nimport * as llm from "pulumi-llm-accounts";\n';

/** The TypeScript file a block becomes, and how many lines precede the block's own first line. */
function tsSource(b: CodeBlock, kind: "ts" | "ts fragment"): { source: string; offset: number } {
  if (kind === "ts") return { source: `${b.text}\nexport {};\n`, offset: 0 };
  const given = /^\/\/ given: (.*)$/.exec(b.text.split("\n")[0]);
  const declared = given
    ? given[1]
        .split(";")
        .map((d) => d.trim())
        .filter(Boolean)
        .map((d) => `declare const ${d};\n`)
        .join("")
    : "";
  const head = `${PRELUDE}${declared}`;
  return { source: `${head}${b.text}\nexport {};\n`, offset: head.split("\n").length - 1 };
}

describe("the documentation's code blocks", () => {
  const kinds = blocks.map((b) => [b, kindOf(b)] as const);
  const ts = kinds.filter(
    (k): k is readonly [CodeBlock, "ts" | "ts fragment"] => k[1] === "ts" || k[1] === "ts fragment",
  );

  test("every block is one the test can check (a block it cannot check is refused)", () => {
    const refused = kinds.flatMap(([b, k]) => (typeof k === "object" ? [`${where(b)}: ${k.refused}`] : []));
    expect(refused).toEqual([]);
    expect(ts.length).toBeGreaterThanOrEqual(10);
    const count = (k: Kind) => kinds.filter(([, x]) => x === k).length;
    console.log(
      `docs: ${blocks.length} code blocks in ${files.length} Markdown files: ${count("ts")} ts and ${count("ts fragment")} ts fragment(s) type-checked, ` +
        `${count("sh")} sh checked (${kinds.filter(([, k]) => k === "sh").flatMap(([b]) => shellCommands(b.text)).length} commands), ` +
        `${count("json")} json parsed, ${count("text")} text left as they are`,
    );
  });

  test("a block with an info string the test does not know is refused", () => {
    expect(kindOf({ file: "x.md", line: 1, lang: "ts", markers: ["nocheck"], text: "" })).toEqual({
      refused: expect.stringContaining('"ts nocheck"'),
    });
    expect(kindOf({ file: "x.md", line: 1, lang: "", markers: [], text: "npm test" })).toEqual({
      refused: expect.stringContaining("is not a block"),
    });
  });

  describe("TypeScript, type-checked against the built package as a user's program", () => {
    let dir: string;
    let output: Promise<string>;
    const names = new Map<string, { block: CodeBlock; offset: number }>();
    beforeAll(() => {
      dir = programDir("llm-docs-");
      ts.forEach(([b, kind], i) => {
        const { source, offset } = tsSource(b, kind);
        const name = `block${i}.ts`;
        writeFileSync(join(dir, name), source);
        names.set(name, { block: b, offset });
      });
      // The control: a block as the docs would hold it, wrong, checked in the same compiler run.
      const control: CodeBlock = {
        file: "control.md",
        line: 1,
        lang: "ts",
        markers: ["fragment"],
        text: 'new llm.ApiKey("x", { alias: 1 });',
      };
      writeFileSync(join(dir, "control.ts"), tsSource(control, "ts fragment").source);
      // The tsconfig of `pulumi new typescript` (CommonJS), as tests/typecheck.test.ts checks a program.
      const compilerOptions = {
        strict: true,
        target: "es2020",
        module: "commonjs",
        moduleResolution: "node",
        esModuleInterop: true,
        skipLibCheck: true,
        noEmit: true,
        ignoreDeprecations: "6.0",
        types: ["node"],
      };
      writeFileSync(
        join(dir, "tsconfig.json"),
        JSON.stringify({ compilerOptions, files: [...names.keys(), "control.ts"] }),
      );
      const tsc = join(REPO, "node_modules/typescript/bin/tsc");
      output = promisify(execFile)(process.execPath, [tsc, "-p", "tsconfig.json"], { cwd: dir }).then(
        () => "",
        (e: { stdout: string }) => e.stdout,
      );
    });
    afterAll(() => rmSync(dir, { recursive: true, force: true }));

    test("every ts block type-checks (errors named by the Markdown file and line)", async () => {
      const errors = (await output)
        .split("\n")
        .filter((l) => l.startsWith("block"))
        .map((l) => {
          const m = /^(block\d+\.ts)\((\d+),(\d+)\): (.*)$/.exec(l);
          if (!m) return l;
          const { block, offset } = names.get(m[1])!;
          return `${block.file}:${block.line + Number(m[2]) - offset}: ${m[4]}`;
        });
      expect(errors).toEqual([]);
    }, 180_000);

    test("a wrong block fails the check (the check is real)", async () => {
      expect(await output).toMatch(/control\.ts\(\d+,\d+\): error TS2322/);
    }, 180_000);
  });

  describe("shell commands name what exists", () => {
    let ctx: ShellContext;
    beforeAll(async () => {
      const pkg = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")) as { scripts: Record<string, string> };
      // The top-level help lists the commands; each command's own --help gives its options.
      const help = async (...args: string[]) =>
        (await promisify(execFile)(process.execPath, [join(REPO, "dist/provider/cli.js"), ...args, "--help"])).stdout;
      const top = await help();
      const own = await Promise.all([...cliCommands(top).keys()].map((c) => help(c)));
      ctx = { scripts: new Set(Object.keys(pkg.scripts)), cli: cliCommands([top, ...own].join("\n")) };
    });

    test("llm-accounts --help names its commands and their options", () => {
      expect([...ctx.cli.keys()].sort()).toEqual(["audit", "doctor", "emulator", "import", "sweep"]);
      expect(ctx.cli.get("audit")).toEqual(expect.objectContaining({ has: expect.any(Function) }));
      expect(ctx.cli.get("audit")!.has("--policy-config")).toBe(true);
      expect(ctx.cli.get("emulator")!.has("--clock-offset-hours")).toBe(true);
      expect(ctx.cli.get("emulator")!.has("--reading")).toBe(true);
      expect(ctx.cli.get("doctor")!.has("--write")).toBe(true);
    });

    test("every command of every sh block: npm scripts of package.json, llm-accounts commands and options, npx only with --package", () => {
      const problems = blocks
        .filter((b) => kindOf(b) === "sh")
        .flatMap((b) =>
          shellCommands(b.text).flatMap((c) => {
            const p = checkCommand(c, ctx);
            return p ? [`${where(b)}: ${c}: ${p}`] : [];
          }),
        );
      expect(problems).toEqual([]);
    });

    test("wrong commands are caught", () => {
      expect(checkCommand("npm run nope", ctx)).toMatch(/no such script/);
      expect(checkCommand("npx llm-accounts audit --keys k.txt", ctx)).toMatch(/bare `npx/);
      expect(checkCommand("npx --yes --package ./p.tgz llm-accounts audits", ctx)).toMatch(/no command "audits"/);
      expect(checkCommand("node_modules/.bin/llm-accounts audit --policy-confg p.json", ctx)).toMatch(
        /no option --policy-confg/,
      );
      expect(checkCommand("npm run emulator -- --port 0 --no-such-flag", ctx)).toMatch(/no option --no-such-flag/);
      expect(checkCommand("llm-accounts help audits", ctx)).toMatch(/no command "audits"/);
      expect(checkCommand("llm-accounts --versoin", ctx)).toMatch(/without a command/);
      expect(checkCommand("llm-accounts help audit", ctx)).toBeUndefined();
      expect(checkCommand("pulumi upp", ctx)).toMatch(/not a Pulumi command/);
      expect(checkCommand("frobnicate --now", ctx)).toMatch(/unknown command/);
      expect(
        checkCommand(
          "npx --yes --package ~/pulumi-llm-accounts-0.1.0.tgz llm-accounts import --out . --keys - --stack prod",
          ctx,
        ),
      ).toBeUndefined();
      expect(shellCommands("a && b # c\nd \\\n  --e | f")).toEqual(["a", "b", "d    --e", "f"]);
    });
  });

  test("every json block parses", () => {
    const bad = blocks
      .filter((b) => kindOf(b) === "json")
      .flatMap((b) => {
        try {
          JSON.parse(b.text);
          return [];
        } catch (err) {
          return [`${where(b)}: ${(err as Error).message}`];
        }
      });
    expect(bad).toEqual([]);
  });
});

describe("links", () => {
  test("every relative link of the Markdown reaches a file, and its anchor a heading", () => {
    const all = files.flatMap((f) => links(f, text.get(f)!));
    const broken = all.flatMap((l) => {
      const p = brokenLink(REPO, l.file, l.target);
      return p ? [`${l.file}:${l.line}: ${p}`] : [];
    });
    expect(broken).toEqual([]);
    expect(all.length).toBeGreaterThan(50);
    console.log(`docs: ${all.length} relative links checked in ${files.length} Markdown files`);
  });

  test("a link to a missing file or heading is caught; anchors are GitHub's", () => {
    expect(brokenLink(REPO, "README.md", "docs/nope.md")).toMatch(/does not exist/);
    expect(brokenLink(REPO, "README.md", "#no-such-heading")).toMatch(/no heading #no-such-heading/);
    expect(brokenLink(REPO, "docs/guides/ci.md", "../credentials.md#pulumis-debug-logs")).toBeUndefined();
    expect(slug("After the first `up`: the adoption config")).toBe("after-the-first-up-the-adoption-config");
    expect([...anchors("# A\n## B\n## B\n```sh\n# not a heading\n```\n")]).toEqual(["a", "b", "b-1"]);
    expect(links("x.md", "[a](b.md#c) `[d](e.md)` [f](https://g)\n```\n[h](i.md)\n```\n").map((l) => l.target)).toEqual(
      ["b.md#c"],
    );
  });

  test("the README is the landing page: the two commands, and a link to every page under docs/", () => {
    const readme = text.get("README.md")!;
    expect(readme).toContain("npm ci && npm run demo");
    expect(readme).toMatch(/^npm test\b/m);
    const linked = new Set(links("README.md", readme).map((l) => l.target.split("#")[0]));
    const pages = files.filter((f) => f.startsWith("docs/"));
    expect(pages.filter((p) => !linked.has(p))).toEqual([]);
    expect(readme.split("\n").length).toBeLessThan(150);
  });

  test("references to a Markdown section from code, scripts and tests name a heading that exists", () => {
    const sources: string[] = [];
    const walk = (dir: string) => {
      for (const e of readdirSync(join(REPO, dir), { withFileTypes: true })) {
        const p = join(dir, e.name);
        if (e.isDirectory()) {
          if (e.name !== "node_modules" && e.name !== "programs") walk(p);
        } else if (/\.(ts|mjs|js|cjs)$/.test(e.name)) sources.push(p);
      }
    };
    for (const d of ["provider", "scripts", "tests", "examples"]) walk(d);
    sources.push("jest.config.js", ".ci/run");
    const problems: string[] = [];
    let checked = 0;
    const own = new Set(["tests/docs.test.ts", "tests/support/markdown.ts"]); // their patterns, not references
    for (const f of sources.filter((s) => !own.has(s) && statSync(join(REPO, s)).isFile())) {
      const src = readFileSync(join(REPO, f), "utf8");
      // `README.md#anchor`, `docs/x.md#anchor`
      for (const m of src.matchAll(/((?:README|docs\/[\w/-]+)\.md)#([\w-]+)/g)) {
        checked++;
        const p = brokenLink(REPO, "README.md", `${m[1]}#${m[2]}`);
        if (p) problems.push(`${f}: ${p}`);
      }
      // `README.md, section "Title"`, `docs/x.md ("Title")`, `(README, "Title")`
      for (const m of src.matchAll(
        /((?:README|docs\/[\w/-]+)(?:\.md)?)[,:]?\s*(?:section\s+|\(|\n[#/* ]*)?"([A-Z][^"\n]+)"/g,
      )) {
        if (m[0].includes("describe(")) continue;
        checked++;
        const page = m[1].endsWith(".md") ? m[1] : `${m[1]}.md`;
        const target = join(REPO, page);
        // A section is named by its title or the start of it ("What the spec left open").
        let has = false;
        try {
          has = [...anchors(readFileSync(target, "utf8"))].some(
            (a) => a === slug(m[2]) || a.startsWith(`${slug(m[2])}-`),
          );
        } catch {
          has = false;
        }
        if (!has) problems.push(`${f}: ${relative(REPO, target)} has no section "${m[2]}"`);
      }
    }
    expect(problems).toEqual([]);
    expect(checked).toBeGreaterThan(0);
  });
});

describe("the layout of docs/development.md", () => {
  /** Each line of the map that starts a place (`provider/runtime/    what ...`), with the text of its continuation lines. */
  function layoutEntries(): Map<string, string> {
    const dev = text.get("docs/development.md")!;
    const block = /^## Layout\n[\s\S]*?^```text\n([\s\S]*?)^```/m.exec(dev);
    expect(block).not.toBeNull();
    const entries = new Map<string, string>();
    let current: string | undefined;
    for (const line of block![1].split("\n")) {
      const start = /^(\S+)\s+(.*)$/.exec(line);
      if (start) entries.set((current = start[1]), start[2]);
      else if (current !== undefined && line.trim() !== "")
        entries.set(current, `${entries.get(current)!} ${line.trim()}`);
    }
    return entries;
  }

  test("names every folder and file of provider/, and each file it names under a folder exists there", () => {
    const entries = layoutEntries();
    const places = readdirSync(join(REPO, "provider"), { withFileTypes: true }).map(
      (e) => `provider/${e.name}${e.isDirectory() ? "/" : ""}`,
    );
    expect(places.filter((p) => !entries.has(p))).toEqual([]);
    const missing = [...entries].flatMap(([place, says]) => {
      if (!place.startsWith("provider/")) return [];
      if (!place.endsWith("/")) return statSync(join(REPO, place), { throwIfNoEntry: false })?.isFile() ? [] : [place];
      return [...says.matchAll(/\b([\w/]+\.ts)\b/g)]
        .map((m) => `${place}${m[1]}`)
        .filter((f) => !statSync(join(REPO, f), { throwIfNoEntry: false })?.isFile());
    });
    expect(missing).toEqual([]);
  });

  test("gives no line counts: they go stale with the next change", () => {
    const counted = [...layoutEntries()]
      .filter(([, says]) => /\b\d[\d,]*\s+lines\b/.test(says))
      .map(([place]) => place);
    expect(counted).toEqual([]);
  });
});
