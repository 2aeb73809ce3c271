import { open, readFile, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import {
  AccountKeySchema,
  AdminKeySchema,
  DecimalStringSchema,
  KeySchema,
  SecurityConfigRequestSchema,
  SubAccountSchema,
  TimestampSchema,
} from "../api/schemas/index.js";
import { randomToken } from "./random.js";

/** A sub-account as the emulator keeps it: every field of spec 2.5, which the client reads tolerantly, present. */
export const SubAccountRecordSchema = SubAccountSchema.extend({
  // The emulator's own ids are counters; a reading may answer them in other forms (readings.ts).
  id: z.number().int(),
  user_id: z.number().int(),
  token_type: z.string(),
  monthly_cost: DecimalStringSchema,
  updated_at: TimestampSchema,
});

/** An API key as the emulator stores it (wire form, the key value included; its security config as it was sent). */
export const ApiKeyRecordSchema = z.object({
  key: KeySchema,
  alias: z.string(),
  enabled: z.boolean(),
  // A file written before the record had its own schema may hold null for "no restriction".
  security_config: z.preprocess((value) => value ?? {}, SecurityConfigRequestSchema),
  created_at: TimestampSchema,
});

/** The whole emulator state as the state file holds it (keys included: the file is written with mode 0600). */
export const StateSnapshotSchema = z
  .object({
    version: z.literal(1),
    admin_key: AdminKeySchema,
    account_key: AccountKeySchema,
    balance: DecimalStringSchema,
    next_sub_account_id: z.number().int().positive(),
    next_user_id: z.number().int().positive(),
    api_keys: z.array(ApiKeyRecordSchema),
    sub_accounts: z.array(SubAccountRecordSchema),
  })
  .superRefine((snapshot, ctx) => {
    for (const { path, message } of inconsistencies(snapshot)) ctx.addIssue({ code: "custom", path, message });
  });
export type StateSnapshot = z.infer<typeof StateSnapshotSchema>;

type Issue = { path: (string | number)[]; message: string };

/**
 * What the shape cannot say: each secret is one credential (an admin key equal to the account key would open
 * the management group with the account key), ids are unique and the counters are past every id in use (else
 * the next create reuses one). Paths only in the messages: never a key.
 */
function inconsistencies(snapshot: Omit<StateSnapshot, "version">): Issue[] {
  const issues: Issue[] = [];
  const firstAt = new Map<string, string>();
  const unique = (value: string | number, path: (string | number)[], what: string, space: string) => {
    const id = `${space}|${value}`;
    const at = path.join(".");
    const earlier = firstAt.get(id);
    if (earlier === undefined) firstAt.set(id, at);
    else issues.push({ path, message: `is the same ${what} as ${earlier}` });
  };
  unique(snapshot.admin_key, ["admin_key"], "key", "secret");
  unique(snapshot.account_key, ["account_key"], "key", "secret");
  snapshot.api_keys.forEach((k, i) => unique(k.key, ["api_keys", i, "key"], "key", "secret"));
  snapshot.sub_accounts.forEach((sub, i) => {
    unique(sub.token, ["sub_accounts", i, "token"], "key", "secret");
    unique(sub.id, ["sub_accounts", i, "id"], "id", "id");
    unique(sub.user_id, ["sub_accounts", i, "user_id"], "user id", "user_id");
  });
  const past = (field: "next_sub_account_id" | "next_user_id", used: number[], what: string) => {
    const highest = used.reduce((a, b) => Math.max(a, b), 0);
    if (snapshot[field] <= highest)
      issues.push({
        path: [field],
        message: `must be above the highest ${what} in use (${highest}), or a new sub-account reuses it`,
      });
  };
  past(
    "next_sub_account_id",
    snapshot.sub_accounts.map((sub) => sub.id),
    "id",
  );
  past(
    "next_user_id",
    snapshot.sub_accounts.map((sub) => sub.user_id),
    "user id",
  );
  return issues;
}

/** Why the given credentials cannot go with a saved state (one of them is already another key of it), if so. */
export function credentialClash(snapshot: StateSnapshot, adminKey: string, accountKey: string): string | undefined {
  const issue = inconsistencies({ ...snapshot, admin_key: adminKey, account_key: accountKey })[0];
  return issue && `${issue.path.join(".")}: ${issue.message}`;
}

function isMissing(err: unknown): boolean {
  return (err as NodeJS.ErrnoException).code === "ENOENT";
}

/** The state file: read once at start, then rewritten whole and atomically after every committed change. */
export class StateFile {
  private last: Promise<void> = Promise.resolve();
  private queued: Promise<void> | undefined;

  constructor(readonly path: string) {}

  /** The saved state, or undefined when the file does not exist yet. */
  async load(): Promise<StateSnapshot | undefined> {
    let text: string;
    try {
      text = await readFile(this.path, "utf8");
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new Error(`state file ${this.path} is not JSON`);
    }
    const parsed = StateSnapshotSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(
        `state file ${this.path} is not an emulator state: ${issue.path.join(".") || "(whole file)"}: ${issue.message}`,
      );
    }
    return parsed.data;
  }

  /**
   * Writes the state soon; resolves once a write that includes every change made before this call is on disk.
   * Calls made while a write is running share the one next write, so writes never overlap or pile up.
   */
  save(snapshot: () => StateSnapshot): Promise<void> {
    if (this.queued) return this.queued;
    const queued = this.last
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.write(snapshot());
      });
    this.queued = queued;
    this.last = queued;
    return queued;
  }

  private async write(state: StateSnapshot): Promise<void> {
    // A temporary file in the same directory, then a rename: a reader (or a crash) sees the old file or the new one.
    const temp = join(dirname(this.path), `.${basename(this.path)}.${process.pid}.${randomToken(8)}.tmp`);
    const handle = await open(temp, "wx", 0o600);
    try {
      try {
        await handle.writeFile(`${JSON.stringify(state, null, 2)}\n`, "utf8");
        await handle.sync();
      } finally {
        await handle.close();
      }
      await rename(temp, this.path);
    } catch (err) {
      await unlink(temp).catch(() => undefined);
      throw err;
    }
  }
}
