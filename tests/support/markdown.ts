// What tests/docs.test.ts checks in the Markdown of the repository: its fenced code blocks (type-checked, or
// their commands looked up) and its links (files and anchors). Pure functions over text, so that the test can
// show each check failing on a wrong block or link.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

/** A fenced code block: where it starts (1-based line of the opening fence), its info string and its text. */
export interface CodeBlock {
  file: string;
  line: number;
  lang: string;
  markers: string[];
  text: string;
}

/** The Markdown files the docs test reads: the README, every page under docs/, and the examples' READMEs. */
export function markdownFiles(repo: string): string[] {
  const files = ["README.md"];
  const walk = (dir: string) => {
    for (const e of readdirSync(join(repo, dir), { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith(".md")) files.push(p);
    }
  };
  walk("docs");
  for (const e of readdirSync(join(repo, "examples"), { withFileTypes: true })) {
    if (e.isDirectory() && existsSync(join(repo, "examples", e.name, "README.md")))
      files.push(join("examples", e.name, "README.md"));
  }
  return files.sort();
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

/** Every fenced block of a Markdown text, indented ones (inside list items) included, with the indent removed. */
export function codeBlocks(file: string, markdown: string): CodeBlock[] {
  const lines = markdown.split("\n");
  const blocks: CodeBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, info] = open;
    const body: string[] = [];
    let j = i + 1;
    for (; j < lines.length; j++) {
      const close = FENCE.exec(lines[j]);
      if (close && close[2].startsWith(fence[0]) && close[2].length >= fence.length && close[3].trim() === "") break;
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j].trimStart());
    }
    if (j === lines.length) throw new Error(`${file}:${i + 1}: a code block is never closed`);
    const [lang = "", ...markers] = info.trim().split(/\s+/).filter(Boolean);
    blocks.push({ file, line: i + 1, lang, markers, text: body.join("\n") });
    i = j;
  }
  return blocks;
}

/** The Markdown text outside code blocks and inline code, where links and headings are read. */
function prose(markdown: string): string[] {
  const out: string[] = [];
  let fence: string | undefined;
  for (const line of markdown.split("\n")) {
    const f = FENCE.exec(line);
    if (f && fence === undefined) fence = f[2];
    else if (f && f[2].startsWith(fence![0]) && f[3].trim() === "") fence = undefined;
    else out.push(fence === undefined ? line : "");
  }
  return out;
}

/** GitHub's anchor of a heading: lower case, punctuation but `-` and `_` dropped, spaces to `-`. */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, "")
    .replace(/\s/g, "-");
}

/** The anchors of a Markdown text's headings, repeated ones numbered as GitHub numbers them (`-1`, `-2`). */
export function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(markdown)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!h) continue;
    const base = slug(h[1]);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

/** A relative link of a Markdown file: its line and target (`path`, `path#anchor` or `#anchor`). */
export interface Link {
  file: string;
  line: number;
  target: string;
}

/** Relative links (inline `[text](target)`), outside code. Links with a scheme (https:, mailto:) are not followed. */
export function links(file: string, markdown: string): Link[] {
  const out: Link[] = [];
  prose(markdown).forEach((text, i) => {
    const line = text.replace(/`[^`]*`/g, "``");
    for (const m of line.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (!/^[a-z][a-z0-9+.-]*:/i.test(m[1])) out.push({ file, line: i + 1, target: m[1] });
    }
  });
  return out;
}

/**
 * What is wrong with a link, or undefined: a file or folder that does not exist, an anchor no heading of the
 * target makes. `from` is the repository-relative file the link is in.
 */
export function brokenLink(repo: string, from: string, target: string): string | undefined {
  const [path, anchor] = target.split("#", 2) as [string, string | undefined];
  const file = path === "" ? join(repo, from) : resolve(repo, dirname(from), decodeURI(path));
  if (!file.startsWith(repo)) return `${target}: outside the repository`;
  if (!existsSync(file)) return `${target}: ${relative(repo, file)} does not exist`;
  if (anchor === undefined) return undefined;
  if (statSync(file).isDirectory() || !file.endsWith(".md"))
    return `${target}: an anchor into a file that is not Markdown`;
  if (!anchors(readFileSync(file, "utf8")).has(anchor))
    return `${target}: ${relative(repo, file)} has no heading #${anchor}`;
  return undefined;
}

/** The `llm-accounts` commands and, for each, the options its help names (parsed from `llm-accounts --help`). */
export function cliCommands(help: string): Map<string, Set<string>> {
  const commands = new Map<string, Set<string>>();
  const listed = /Commands:\n((?:\s{2}\S.*\n)+)/.exec(help);
  if (!listed) throw new Error("llm-accounts --help lists no commands");
  for (const line of listed[1].split("\n")) {
    const name = /^\s+([a-z-]+)\s/.exec(line)?.[1];
    if (name) commands.set(name, new Set(["--help", "-h"]));
  }
  let current: Set<string> | undefined;
  for (const line of help.split("\n")) {
    const section = /^Options of "([a-z-]+)"/.exec(line);
    if (section) current = commands.get(section[1]);
    else if (/^\S/.test(line)) current = undefined;
    else if (current) for (const m of line.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)) current.add(m[0]);
  }
  return commands;
}

/** Commands a shell block may run besides npm, npx, pulumi and llm-accounts: the shell's own, and a few tools. */
const SHELL = new Set([
  "export",
  "cd",
  "mkdir",
  "cat",
  "echo",
  "rm",
  "cp",
  "mv",
  "ls",
  "git",
  "node",
  "go",
  "curl",
  "jq",
  "sleep",
  "kill",
  "tar",
  "unset",
  "source",
  "true",
]);
/** npm commands a block may use (its own subcommands; `run` is checked against package.json). */
const NPM = new Set(["ci", "install", "i", "test", "pack", "run", "exec", "view", "ls", "uninstall"]);
/** Pulumi CLI commands a block may use. */
const PULUMI = new Set([
  "login",
  "logout",
  "new",
  "config",
  "preview",
  "up",
  "refresh",
  "destroy",
  "stack",
  "import",
  "policy",
  "plugin",
  "whoami",
  "cancel",
  "version",
  "state",
  "about",
  "install",
  "package",
]);

/** What a shell block of the docs may name: the scripts of package.json and the commands of `llm-accounts`. */
export interface ShellContext {
  scripts: Set<string>;
  cli: Map<string, Set<string>>;
}

/** The commands of a shell block: continuation lines joined, comments dropped, split at `&&`, `||`, `;`, `|`. */
export function shellCommands(block: string): string[] {
  const joined = block.replace(/\\\n/g, " ");
  const out: string[] = [];
  for (const raw of joined.split("\n")) {
    const line = raw.replace(/(^|\s)#.*$/, "").trim();
    if (line === "") continue;
    for (const part of line.split(/&&|\|\||;|\|/)) if (part.trim() !== "") out.push(part.trim());
  }
  return out;
}

/** The words of a command, outer quotes kept out of the way (a `$(...)` counts as one word). */
function words(command: string): string[] {
  return command.match(/"(?:[^"\\]|\\.)*"|'[^']*'|\$\([^)]*\)|\S+/g) ?? [];
}

/** What is wrong with one `llm-accounts` call (its words after the program name), or undefined. */
function checkCli(args: string[], ctx: ShellContext): string | undefined {
  const [sub, ...rest] = args;
  if (sub === undefined || sub.startsWith("-"))
    return ["--help", "-h", "--version", "-V"].includes(sub ?? "") ? undefined : "llm-accounts without a command";
  if (sub === "help")
    return rest.length === 0 || ctx.cli.has(rest[0]) ? undefined : `llm-accounts help: no command "${rest[0]}"`;
  const options = ctx.cli.get(sub);
  if (!options) return `llm-accounts has no command "${sub}" (it has ${[...ctx.cli.keys()].join(", ")})`;
  for (const w of rest) {
    const flag = /^\[?(--[a-z][a-z-]*)/.exec(w)?.[1];
    if (flag && !options.has(flag)) return `llm-accounts ${sub} has no option ${flag}`;
  }
  return undefined;
}

/** What is wrong with one command of a shell block, or undefined when it names only what exists. */
export function checkCommand(command: string, ctx: ShellContext): string | undefined {
  let w = words(command);
  while (w.length > 0 && /^[A-Za-z_][A-Za-z0-9_]*=/.test(w[0])) w = w.slice(1); // FOO=bar cmd
  const [cmd, ...args] = w;
  if (cmd === undefined) return undefined;
  if (cmd === "llm-accounts" || cmd.endsWith("/.bin/llm-accounts")) return checkCli(args, ctx);
  if (cmd === "node" && args[0] === "dist/provider/cli.js") return checkCli(args.slice(1), ctx);
  if (cmd === "npx") {
    const pkg = args.findIndex((a) => a === "--package" || a === "-p" || a.startsWith("--package="));
    if (pkg < 0)
      return `a bare \`npx ${args.join(" ")}\` runs whatever a registry serves under that name: name the package (npx --package ...) or use the installed bin`;
    const bin = args.findIndex((a, i) => i > pkg + (args[pkg].includes("=") ? 0 : 1) && !a.startsWith("-"));
    if (bin < 0) return "npx --package without a command";
    return args[bin] === "llm-accounts"
      ? checkCli(args.slice(bin + 1), ctx)
      : `npx runs ${args[bin]}, not llm-accounts`;
  }
  if (cmd === "npm") {
    const sub = args.find((a) => !a.startsWith("-"));
    if (sub === undefined || !NPM.has(sub)) return `npm ${sub ?? ""}: not an npm command the docs use`;
    if (sub === "run") {
      const script = args.slice(args.indexOf("run") + 1).find((a) => !a.startsWith("-"));
      if (script === undefined || !ctx.scripts.has(script))
        return `npm run ${script ?? ""}: package.json has no such script`;
      if (script === "emulator") {
        const dashes = args.indexOf("--");
        if (dashes >= 0) return checkCli(["emulator", ...args.slice(dashes + 1)], ctx);
      }
    }
    return undefined;
  }
  if (cmd === "pulumi") {
    const sub = args.find((a) => !a.startsWith("-"));
    return sub !== undefined && PULUMI.has(sub) ? undefined : `pulumi ${sub ?? ""}: not a Pulumi command the docs know`;
  }
  if (SHELL.has(cmd)) return undefined;
  return `unknown command "${cmd}"`;
}
