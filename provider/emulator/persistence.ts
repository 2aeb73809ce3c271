import { open, readFile, rename, unlink } from "node:fs/promises";
import { basename, dirname, join } from "node:path";
import { z } from "zod";
import { ApiKeyCreatedSchema, DecimalStringSchema, SubAccountSchema } from "../api/schemas/index.js";
import { randomToken } from "./random.js";

/** The whole emulator state as the state file holds it (keys included: the file is written with mode 0600). */
export const StateSnapshotSchema = z.object({
  version: z.literal(1),
  admin_key: z.string(),
  account_key: z.string(),
  balance: DecimalStringSchema,
  next_sub_account_id: z.number().int().positive(),
  next_user_id: z.number().int().positive(),
  api_keys: z.array(ApiKeyCreatedSchema),
  sub_accounts: z.array(SubAccountSchema),
});
export type StateSnapshot = z.infer<typeof StateSnapshotSchema>;

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
      throw new Error(`state file ${this.path} is not an emulator state: ${issue.path.join(".")}: ${issue.message}`);
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
