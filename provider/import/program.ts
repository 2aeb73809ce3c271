import { maskKey } from "../api/redact.js";
import type { ImportedAccount, ImportedBatch, ImportedKey } from "./account.js";
import type { StateOptions } from "./stackState.js";

/**
 * The stack config key of the one secret object that holds every adopted API key, by resource name. One value
 * (one `pulumi config set`), and only the keys: sub-accounts are adopted by id, so that the whole stack config,
 * which Pulumi's Node.js language hosts hand to the program in one environment variable, stays small.
 */
export const KEYS_CONFIG_KEY = "adoptKeys";

/**
 * Largest `adoptKeys` value, in bytes as the language host passes it (JSON text inside the JSON of the whole
 * config): Linux caps one environment variable at 128 KiB, and the rest of the stack config needs room too.
 */
export const KEYS_CONFIG_MAX_BYTES = 120 * 1024;

/** The `adoptKeys` value: a JSON object of resource name to key, in program order. Never printed or passed as an argument. */
export function keysConfigValue(account: ImportedAccount): string {
  return JSON.stringify(Object.fromEntries(account.keys.filter(declaresAdoptKey).map((k) => [k.name, k.key])));
}

/**
 * Whether the program declares the key's `adoptKey`: for a key it adopts, not for one the stack holds already. A
 * held key needs none (its resource is in the state), and one would go stale: once the resource rotates, the key
 * of the import is neither its key, its previous key nor the key it adopted, and the preview would refuse it. Nor
 * a held key gone from the platform: after a refresh its next up creates a new one in its place.
 */
function declaresAdoptKey(k: ImportedKey): boolean {
  return !k.kept;
}

/** Bytes the `adoptKeys` value takes in the environment variable that carries the stack config to the program. */
export function keysConfigEnvBytes(value: string, project: string): number {
  return Buffer.byteLength(JSON.stringify({ [`${project}:${KEYS_CONFIG_KEY}`]: value }));
}

/**
 * Characters a value must never carry into the program as they are: every line terminator JavaScript knows
 * (\n and \r are escaped by JSON already; U+2028 and U+2029 are not, and end a `//` comment), NEL, the
 * invisible and bidirectional controls that make code read otherwise than it runs, and what could end a
 * comment or open a template (`*` + `/`, backtick, `${`).
 */
const UNSAFE =
  /[\u0000-\u001f\u007f-\u009f\u00ad\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u206f\ufeff\ufff9-\ufffb`]|\*\/|\$\{/g;
const escapeUnsafe = (text: string): string =>
  text.replace(UNSAFE, (c) =>
    [...c]
      .map((ch, i) => (i === 0 || c !== "*/" ? `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}` : ch))
      .join(""),
  );

/** A value as TypeScript source: JSON, with every character that could end a comment or string escaped (UNSAFE). */
export const literal = (value: unknown): string => escapeUnsafe(JSON.stringify(value));

/** Text for a `//` comment: on one line whatever it holds (line terminators as spaces), nothing that ends it. */
export function comment(text: string): string {
  return text
    .replace(/\r\n|[\n\r\u0085\u2028\u2029]/g, " ")
    .replace(UNSAFE, (c) => (c === "*/" ? "* /" : c === "${" ? "$ {" : c === "`" ? "'" : "\uFFFD"));
}

/** Resource options the state recorded, written again: protect, retainOnDelete, and an alias to a parented URN. */
function optionsOf(options: StateOptions | undefined): string {
  if (!options) return "";
  const o: Record<string, unknown> = {};
  if (options.protect) o.protect = true;
  if (options.retainOnDelete) o.retainOnDelete = true;
  if (options.parentedUrn) o.aliases = [options.parentedUrn];
  return Object.keys(o).length > 0 ? `, ${literal(o)}` : "";
}

function keyDeclaration(k: ImportedKey): string {
  const lines = [`new llm.ApiKey(${literal(k.name)}, {`, `  alias: ${literal(k.alias)},`, `  enabled: ${k.enabled},`];
  if (Object.keys(k.securityConfig).length > 0) lines.push(`  securityConfig: ${literal(k.securityConfig)},`);
  if (k.rotation !== undefined) lines.push(`  rotation: ${literal(k.rotation)},`);
  if (k.connection !== undefined) lines.push(`  connection: ${literal(k.connection)},`);
  if (declaresAdoptKey(k)) lines.push(`  adoptKey: consoleKey(${literal(k.name)}), // ${maskKey(k.key)}`);
  else if (k.gone)
    lines.push(
      `  // ${maskKey(k.key)}: held by the stack, no longer on the platform: after a refresh, the next up creates a new key`,
    );
  else lines.push(`  // ${maskKey(k.key)}: held by the stack already, no adoptKey needed`);
  lines.push(`}${optionsOf(k.options)});`);
  return lines.join("\n");
}

function batchDeclaration(b: ImportedBatch): string {
  return [
    `new llm.SubAccountBatch(${literal(b.name)}, {`,
    `  alias: ${literal(b.alias)},`,
    `  balance: ${b.balance}, // for sub-accounts created later; adopted ones keep their balances`,
    `  count: ${b.count},`,
    `  modelPricing: ${literal(b.modelPricing)},`,
    ...(b.connection !== undefined ? [`  connection: ${literal(b.connection)},`] : []),
    // A batch the state holds that adopted nothing (it created its sub-accounts) declares no adoptTokens.
    ...(b.ids.length > 0 || !b.kept ? [`  adoptTokens: tokensOf(${literal(b.name)}, ${literal(b.ids)}),`] : []),
    `}${optionsOf(b.options)});`,
  ].join("\n");
}

/** What the generated program reads the API keys with: the one secret config object, read where used. */
const KEYS_PRELUDE = [
  `// The console keys, by resource name: one secret object in the stack's encrypted config (${KEYS_CONFIG_KEY}).`,
  `const consoleKeys = config.requireSecretObject<Record<string, string>>(${literal(KEYS_CONFIG_KEY)});`,
  "const consoleKey = (name: string) => consoleKeys.apply((keys) => keys[name]);",
  "",
];

/**
 * How the generated program finds the tokens of the sub-accounts it adopts: ids are not secret, tokens are, and
 * the account's one list (a secret Output) holds them. An id no longer listed (deleted since the import) gives
 * no token: the batch then creates a sub-account in its place to reach `count`, and the warning says so.
 */
const TOKENS_PRELUDE = [
  "// The account's sub-accounts, tokens included (secret): one list each time the program runs. A batch adopts",
  "// its sub-accounts by id, which is not secret; their tokens stay encrypted in the state.",
  "const subAccounts = llm.getSubAccountsOutput().subAccounts;",
  "const tokensOf = (batch: string, ids: (number | string)[]) =>",
  "  subAccounts.apply((all) => {",
  "    const byId = new Map(all.map((s) => [s.id, s.token]));",
  "    const gone = ids.filter((id) => !byId.has(id));",
  "    // Once `pulumi up` has made the batch's new ones, delete the gone ids from its tokensOf list: the warning ends.",
  '    if (gone.length > 0) pulumi.log.warn(`${batch}: sub-account ${gone.join(", ")} no longer listed; the batch creates one in place of each to reach count. Once an up has, delete ${gone.join(", ")} from tokensOf("${batch}", ...) in index.ts to end this warning`);',
  "    return ids.filter((id) => byId.has(id)).map((id) => byId.get(id)!);",
  "  });",
  "",
];

/** The program's index.ts: a header saying where it came from and what to review, then one declaration per object. */
export function renderProgram(account: ImportedAccount, origin: string, at: Date): string {
  const subAccounts = account.batches.reduce((n, b) => n + b.count, 0);
  const header = [
    `// Generated by \`llm-accounts import\` from ${comment(origin)} on ${at.toISOString().slice(0, 10)}:`,
    `// ${account.keys.length} API key(s) and ${subAccounts} sub-account(s) in ${account.batches.length} batch(es), as they were.`,
    ...(account.leftOut.length > 0
      ? [
          `// Left out: ${account.leftOut.length} object(s) this package's check refuses as they are (change them in the`,
          "// console and import again, or declare them yourself):",
          ...account.leftOut.map((l) => `// - ${comment(l)}`),
        ]
      : []),
    ...reimportHeader(account),
    `// The API keys are not here: they are in the stack's encrypted config (${KEYS_CONFIG_KEY}). Sub-accounts are adopted by id.`,
    "// Review before the first `pulumi up`, which should then change nothing:",
    "// - names and aliases; sub-accounts were grouped by alias and model pricing, at most 100 to a batch;",
    "// - `balance` only applies to sub-accounts a batch creates later;",
    "// - `pulumi destroy` deletes every object below: add `{ retainOnDelete: true }` to keep one.",
    ...AFTER_ADOPTION,
  ];
  return [
    ...header,
    'import * as pulumi from "@pulumi/pulumi";',
    'import * as llm from "pulumi-llm-accounts";',
    "",
    "const config = new pulumi.Config();",
    "",
    ...(account.keys.some(declaresAdoptKey) ? KEYS_PRELUDE : []),
    ...(account.batches.length > 0 ? TOKENS_PRELUDE : []),
    ...account.keys.map(keyDeclaration).flatMap((d) => [d, ""]),
    ...account.batches.map(batchDeclaration).flatMap((d) => [d, ""]),
  ].join("\n");
}

/** What a re-import kept of the stack's state, and what it was asked to drop. */
function reimportHeader(account: ImportedAccount): string[] {
  const kept = [...account.keys, ...account.batches].filter((o) => o.kept).length;
  if (kept === 0 && account.dropped.length === 0) return [];
  return [
    `// Kept under their resource names: ${kept} object(s) the stack's state holds (matched by key and sub-account, not alias).`,
    ...account.notes.map((n) => `// - ${comment(n)}`),
    ...(account.dropped.length > 0
      ? ["// Dropped (--drop-unlisted):", ...account.dropped.map((d) => `// - ${comment(d)}`)]
      : []),
  ];
}

/** What the user may do with the adoption inputs once the first `pulumi up` has adopted everything. */
const AFTER_ADOPTION = [
  "// After the first `pulumi up` the state owns what it adopted, and the adoption config may stay or go: to drop it,",
  "// delete every `adoptKey:` and `adoptTokens:` line, then the lines that read them (consoleKeys, consoleKey,",
  `// subAccounts, tokensOf), and run \`pulumi config rm ${KEYS_CONFIG_KEY}\`. Nothing is released, replaced or recreated,`,
  "// and the program stops reading the account at each run. Never shorten an `adoptTokens` list you keep: a token",
  "// taken out of it is released.",
];

/** Pulumi.yaml of a new project. */
export function renderProjectFile(project: string): string {
  return `name: ${project}\nruntime: nodejs\ndescription: The account's API keys and sub-accounts, imported by llm-accounts import\n`;
}

/** The tsconfig of `pulumi new typescript`: a CommonJS program. */
export const TSCONFIG = {
  compilerOptions: {
    strict: true,
    outDir: "bin",
    target: "es2020",
    module: "commonjs",
    moduleResolution: "node",
    sourceMap: true,
    experimentalDecorators: true,
    pretty: true,
    noFallthroughCasesInSwitch: true,
    noImplicitReturns: true,
    forceConsistentCasingInFileNames: true,
  },
  files: ["index.ts"],
};

/**
 * package.json with the entries the program needs added; entries already there (versions included) are kept.
 * `packageSpec` is what installs the package the import ran from (undefined: not known, so not written). The
 * Pulumi range is the oldest release this package is tested with.
 */
export function mergePackageJson(
  existing: Record<string, unknown> | undefined,
  project: string,
  packageSpec: string | undefined,
): Record<string, unknown> {
  const pkg: Record<string, unknown> = existing ?? { name: project, main: "index.ts", private: true };
  const wanted: Record<string, Record<string, string>> = {
    dependencies: { "@pulumi/pulumi": "^3.248.0", ...(packageSpec ? { "pulumi-llm-accounts": packageSpec } : {}) },
    devDependencies: { "@types/node": "^20.0.0", typescript: "^5.0.0" },
  };
  for (const [field, entries] of Object.entries(wanted)) {
    const current = { ...((pkg[field] as Record<string, string> | undefined) ?? {}) };
    for (const [name, range] of Object.entries(entries)) if (!(name in current)) current[name] = range;
    pkg[field] = current;
  }
  return pkg;
}

/**
 * The data file of a program adopted through the stack's state (stackImport.ts): every object as the program
 * declares it, keys shown by their masked hint only. No secret: the keys and tokens are in the state, encrypted.
 */
export const DATA_FILE = "account.json";

/** The data file's text: `keys` and `batches`, in program order. */
export function renderAccountData(account: ImportedAccount): string {
  const keys = account.keys.map((k) => ({
    name: k.name,
    hint: maskKey(k.key),
    alias: k.alias,
    enabled: k.enabled,
    securityConfig: k.securityConfig,
  }));
  const batches = account.batches.map((b) => ({
    name: b.name,
    alias: b.alias,
    balance: b.balance,
    count: b.count,
    modelPricing: b.modelPricing,
  }));
  return `${JSON.stringify({ keys, batches }, null, 1)}\n`;
}

/**
 * The index.ts of a program adopted through the stack's state: one loop over the data file per kind, no adoption
 * input (the state holds every object already, so the first `pulumi up` makes no call). The import writes the data
 * file last, once the state holds everything: without it the program stops, and no `up` creates what it lists.
 */
/**
 * The line by which a program written for a stack adopted through its state is known (renderStateProgram): a
 * re-import in its folder keeps that route even when the data file is missing (an import killed between the
 * state's write and the data file's), since a program written through the config over objects the state import
 * wrote makes the engine write the whole state at each of them (hours at thousands of objects).
 */
export const STATE_PROGRAM_LINE = `const dataFile = path.join(__dirname, ${literal(DATA_FILE)});`;

export function renderStateProgram(account: ImportedAccount, origin: string, at: Date): string {
  const subAccounts = account.batches.reduce((n, b) => n + b.count, 0);
  return [
    `// Generated by \`llm-accounts import\` from ${comment(origin)} on ${at.toISOString().slice(0, 10)}:`,
    `// ${account.keys.length} API key(s) and ${subAccounts} sub-account(s) in ${account.batches.length} batch(es), as they were, listed in ${DATA_FILE}.`,
    ...(account.leftOut.length > 0
      ? [
          `// Left out: ${account.leftOut.length} object(s) this package's check refuses as they are (change them in the`,
          "// console and import again, or declare them yourself):",
          ...account.leftOut.map((l) => `// - ${comment(l)}`),
        ]
      : []),
    "// They were adopted into the stack's state by the import (pulumi stack import, secrets encrypted by the stack's",
    "// secrets provider): no key or token is in this folder or the stack config, and the first `pulumi up` changes nothing.",
    `// Edit ${DATA_FILE} (or this loop) as you would declarations: \`pulumi destroy\` deletes every object it lists.`,
    'import * as fs from "fs";',
    'import * as path from "path";',
    'import * as llm from "pulumi-llm-accounts";',
    "",
    "interface AccountData {",
    "  keys: { name: string; alias: string; enabled: boolean; securityConfig?: llm.SecurityConfigArgs }[];",
    "  batches: { name: string; alias: string; balance: number; count: number; modelPricing: llm.ModelPricingArgs[] }[];",
    "}",
    "",
    STATE_PROGRAM_LINE,
    "if (!fs.existsSync(dataFile)) {",
    `  throw new Error(\`\${dataFile} is missing: llm-accounts import writes it once the stack's state holds every object it lists; run the import again\`);`,
    "}",
    'const data: AccountData = JSON.parse(fs.readFileSync(dataFile, "utf8"));',
    "for (const k of data.keys) new llm.ApiKey(k.name, { alias: k.alias, enabled: k.enabled, securityConfig: k.securityConfig });",
    "for (const b of data.batches) new llm.SubAccountBatch(b.name, { alias: b.alias, balance: b.balance, count: b.count, modelPricing: b.modelPricing });",
    "",
  ].join("\n");
}
