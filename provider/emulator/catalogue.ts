import type { z } from "zod";
import { USAGE_MODEL_FIELD } from "../api/assumptions.js";
import type { ModelSchema, UsageRowSchema } from "../api/schemas/index.js";
import { formatMicros } from "../api/money.js";
import { addDays } from "./format.js";
import { hashString, seededRandom } from "./random.js";

type ModelEntry = z.infer<typeof ModelSchema>;
type UsageRow = z.infer<typeof UsageRowSchema>;

function model(
  name: string,
  category: string,
  vendor: string,
  contextWindow: number,
  maxOutput: number,
  input: string,
  output: string,
  cacheReadRate: number,
): ModelEntry {
  return {
    model: name,
    category,
    vendor,
    context_window: contextWindow,
    max_output_tokens: maxOutput,
    pricing: { text_input_price: input, text_output_price: output, cache_read_rate: cacheReadRate },
  };
}

/** The fixed model list the emulator answers `GET models` with (wire form, prices in CNY per 1M tokens). */
export const MODEL_CATALOGUE: readonly ModelEntry[] = Object.freeze([
  model("model-a", "chat", "acme", 128_000, 8_192, "2.000000", "8.000000", 0.1),
  model("model-a-mini", "chat", "acme", 128_000, 8_192, "0.500000", "2.000000", 0.1),
  model("model-b", "chat", "globex", 64_000, 4_096, "1.000000", "2.000000", 0.2),
  model("deepseek-chat", "chat", "deepseek", 64_000, 8_192, "2.000000", "3.000000", 0.1),
  model("deepseek-reasoner", "reasoning", "deepseek", 64_000, 32_768, "4.000000", "16.000000", 0.25),
  model("reasoner-x", "reasoning", "globex", 200_000, 65_536, "12.000000", "48.000000", 0.25),
  model("vision-1", "multimodal", "initech", 32_000, 4_096, "3.000000", "9.000000", 0.5),
  model("embed-1", "embedding", "initech", 8_192, 0, "0.500000", "0.000000", 0),
]);

/** How many of the latest days carry token statistics; older rows have no `usage` block (spec 4.7 rule 5). */
export const USAGE_STATS_DAYS = 90;

/** What one key spent on one model on one day. */
interface DayUsage {
  input: number;
  output: number;
  cacheRead: number;
  costMicros: number;
}

/** Each key uses three models of the catalogue, chosen by its fingerprint. */
function modelsOf(seed: string): ModelEntry[] {
  const rand = seededRandom(hashString(`models|${seed}`));
  const pool = [...MODEL_CATALOGUE];
  const chosen: ModelEntry[] = [];
  while (chosen.length < 3) chosen.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]);
  return chosen;
}

function dayUsage(seed: string, date: string, entry: ModelEntry, today: string): DayUsage | undefined {
  const rand = seededRandom(hashString(`${seed}|${date}|${entry.model}`));
  if (rand() >= 0.85) return undefined;
  // Day T is still being collected (T+1 data, spec 4.7 rule 3): it shows about half a day.
  const share = date === today ? 0.5 : 1;
  const input = Math.floor((20_000 + rand() * 1_980_000) * share);
  const cacheRead = Math.floor(input * 0.6 * rand());
  const output = entry.max_output_tokens === 0 ? 0 : Math.floor(input * (0.05 + 0.3 * rand()));
  const inPrice = Number(entry.pricing.text_input_price);
  const outPrice = Number(entry.pricing.text_output_price);
  // Prices are per 1,000,000 tokens, so one token at price p costs p millionths.
  const costMicros = Math.round(
    (input - cacheRead) * inPrice + cacheRead * inPrice * entry.pricing.cache_read_rate + output * outPrice,
  );
  return { input, output, cacheRead, costMicros };
}

/** What a usage summary is asked for, after validation; `seeds` are the fingerprints of the keys counted. */
export interface UsageRowsQuery {
  seeds: readonly string[];
  start: string;
  end: string;
  today: string;
  withModel: boolean;
  withUsage: boolean;
}

function toRow(date: string, modelName: string | undefined, total: DayUsage, withStats: boolean): UsageRow {
  return {
    date,
    ...(modelName === undefined ? {} : { [USAGE_MODEL_FIELD]: modelName }),
    cost: formatMicros(BigInt(total.costMicros)),
    ...(withStats
      ? {
          usage: {
            input_tokens: total.input,
            output_tokens: total.output,
            cache_read_tokens: total.cacheRead,
            total_tokens: total.input + total.output,
          },
        }
      : {}),
  };
}

function add(into: DayUsage, u: DayUsage): void {
  into.input += u.input;
  into.output += u.output;
  into.cacheRead += u.cacheRead;
  into.costMicros += u.costMicros;
}

/**
 * Every row of a usage summary, generated: deterministic per key fingerprint and date, summed over the keys
 * given. Rows are sorted by date, then model; a day (or model) with no spend has no row.
 */
export function usageRows(q: UsageRowsQuery): UsageRow[] {
  const statsFrom = addDays(q.today, -(USAGE_STATS_DAYS - 1));
  const keyModels = q.seeds.map((seed) => ({ seed, models: modelsOf(seed) }));
  const rows: UsageRow[] = [];
  for (let date = q.start; date <= q.end && date <= q.today; date = addDays(date, 1)) {
    const perModel = new Map<string, DayUsage>();
    for (const { seed, models } of keyModels) {
      for (const entry of models) {
        const u = dayUsage(seed, date, entry, q.today);
        if (!u) continue;
        const acc = perModel.get(entry.model) ?? { input: 0, output: 0, cacheRead: 0, costMicros: 0 };
        add(acc, u);
        perModel.set(entry.model, acc);
      }
    }
    if (perModel.size === 0) continue;
    const withStats = q.withUsage && date >= statsFrom;
    if (q.withModel) {
      for (const name of [...perModel.keys()].sort()) rows.push(toRow(date, name, perModel.get(name)!, withStats));
    } else {
      const total = { input: 0, output: 0, cacheRead: 0, costMicros: 0 };
      for (const u of perModel.values()) add(total, u);
      rows.push(toRow(date, undefined, total, withStats));
    }
  }
  return rows;
}
