import type { ApiKeyView } from "../api/schemas/index.js";
import type { LlmAccountsClient } from "../client/client.js";
import type { Progress } from "./progress.js";

/**
 * API key reads in flight at once (import, audit --keys, sweep --keys): the client's limiter paces them to the
 * platform's rate (600 a minute); the bound keeps thousands of listed keys from becoming thousands of requests
 * waiting at once (their sockets, their timers, and a first answer only after every request was queued).
 */
export const KEY_READS_AT_ONCE = 32;

/** Runs `read` over items with at most `width` at once, reporting each answer; answers in item order. */
export async function pool<T, R>(
  items: readonly T[],
  width: number,
  read: (item: T, i: number) => Promise<R>,
  onAnswer: () => void = () => {},
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await read(items[i], i);
      onAnswer();
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return out;
}

/**
 * The one reader of many API keys: one get per key, KEY_READS_AT_ONCE at a time, each answer counted on `progress`.
 * A key the platform does not have answers `gone(key, i)`, by the runtime's own rule (ApiKeysApi.find: a 404 in the
 * platform's JSON, or a 400 naming the key once the admin key is known to be taken). Any other failure is the
 * caller's to judge (`failed`: a refused credential, an answer that is not the platform's): what it returns stands
 * for that key's answer, and what it throws ends the read.
 */
export function readKeys<G, F>(
  client: LlmAccountsClient,
  keys: readonly string[],
  answers: { gone: (key: string, i: number) => G; failed: (err: unknown, key: string, i: number) => F },
  progress: Progress = () => {},
): Promise<(ApiKeyView | G | F)[]> {
  let answered = 0;
  return pool(
    keys,
    KEY_READS_AT_ONCE,
    async (key, i): Promise<ApiKeyView | G | F> => {
      try {
        return (await client.apiKeys.find(key)) ?? answers.gone(key, i);
      } catch (err) {
        return answers.failed(err, key, i);
      }
    },
    () => progress(++answered, keys.length),
  );
}
