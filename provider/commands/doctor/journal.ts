import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { chmodSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";

/**
 * The doctor's journal of the API keys it made and has not deleted yet: the API cannot list keys, so a key whose
 * delete did not land (a refusal, a kill) could only be found again in the console. Each key is written sealed
 * (AES-256-GCM) under a key derived from the admin key of the account it was made on, never in plain text: the
 * file says which accounts it holds keys of (a keyed hash) and nothing a reader without that admin key can use.
 * The next doctor run with the same admin key opens it and deletes those keys first. What it cannot do: know a key
 * whose create's answer never came (the platform may have made it: the console shows it by its alias); a key made
 * on another machine or under another HOME; a key made while the file could not be written (said on stderr).
 */
export class Journal {
  private readonly file: string | undefined;
  private readonly scope: string;
  private readonly secret: Buffer;

  constructor(env: NodeJS.ProcessEnv, account: { baseUrl: string; adminKey?: string }) {
    // The user's state folder ($XDG_STATE_HOME, else ~/.local/state); none without a home (nothing is journalled).
    const home = env.HOME || env.USERPROFILE;
    const state = env.XDG_STATE_HOME || (home ? join(home, ".local", "state") : undefined);
    this.file = state === undefined ? undefined : join(state, "llm-accounts", "doctor-keys.json");
    const admin = account.adminKey ?? "";
    const origin = new URL(account.baseUrl).origin;
    this.scope = createHmac("sha256", admin)
      .update(`llm-accounts doctor journal scope ${origin}`)
      .digest("hex")
      .slice(0, 32);
    this.secret = Buffer.from(hkdfSync("sha256", admin, origin, "llm-accounts doctor journal key", 32));
  }

  /** Where the journal is kept (for messages). */
  get path(): string {
    return this.file ?? "(none: no HOME)";
  }

  /** Records a key just made (sealed); false when the file could not be written. */
  add(key: string, alias: string): boolean {
    return this.write([...this.read(), { scope: this.scope, alias, sealed: this.seal(key) }]);
  }

  /** Forgets a key deleted (or known gone). */
  remove(key: string): void {
    const entries = this.read();
    const kept = entries.filter((e) => e.scope !== this.scope || this.open(e.sealed) !== key);
    if (kept.length !== entries.length) this.write(kept);
  }

  /** The keys earlier runs made on this account and did not delete, with their aliases. */
  earlier(): { key: string; alias: string }[] {
    return this.read().flatMap((e) => {
      const key = e.scope === this.scope ? this.open(e.sealed) : undefined;
      return key === undefined ? [] : [{ key, alias: e.alias }];
    });
  }

  private seal(key: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.secret, iv);
    const body = Buffer.concat([cipher.update(key, "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64");
  }

  private open(sealed: string): string | undefined {
    try {
      const raw = Buffer.from(sealed, "base64");
      const decipher = createDecipheriv("aes-256-gcm", this.secret, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
    } catch {
      return undefined;
    }
  }

  private read(): JournalEntry[] {
    if (this.file === undefined) return [];
    try {
      const parsed = JournalSchema.safeParse(JSON.parse(readFileSync(this.file, "utf8")));
      return parsed.success ? parsed.data.keys : [];
    } catch {
      return [];
    }
  }

  private write(keys: JournalEntry[]): boolean {
    if (this.file === undefined) return false;
    try {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
      const temporary = `${this.file}.${process.pid}.tmp`;
      writeFileSync(temporary, `${JSON.stringify({ version: 1, keys })}\n`, { mode: 0o600 });
      chmodSync(temporary, 0o600);
      renameSync(temporary, this.file);
      return true;
    } catch {
      return false;
    }
  }
}

const JournalEntrySchema = z.object({ scope: z.string(), alias: z.string(), sealed: z.string() });
type JournalEntry = z.infer<typeof JournalEntrySchema>;
const JournalSchema = z.object({ version: z.literal(1), keys: z.array(JournalEntrySchema) });
