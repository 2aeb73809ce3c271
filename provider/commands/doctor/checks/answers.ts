import { isObject } from "../../../api/canonical.js";
import { SETTINGS } from "../../../client/settings.js";
import { type Probe, type Raw, clean, describeRefusal, describeShape, meaningOf, namesKey } from "../probe.js";
import type { DoctorRow } from "../report.js";

/** Every field name the spec shows in an answer; another one is a field the spec does not list. */
export const SPEC_FIELDS = new Set(
  (
    "items total page pageSize has_more next_page models model category vendor context_window max_output_tokens pricing balance date cost usage " +
    "key alias enabled security_config ip allow spend_limit monthly geo countries mode created_at id user_id token token_type model_pricing " +
    "pricing_factor monthly_cost updated_at success deleted error code message input_tokens output_tokens cache_read_tokens total_tokens page_size"
  ).split(" "),
);

/** Field names in an answer that the spec does not show (the pricing block and usage block may hold more by the spec). */
export function unknownFields(value: unknown, found = new Set<string>(), parent = ""): Set<string> {
  if (Array.isArray(value)) for (const v of value) unknownFields(v, found, parent);
  else if (isObject(value)) {
    for (const [k, v] of Object.entries(value)) {
      if (!SPEC_FIELDS.has(k) && parent !== "pricing" && parent !== "usage") found.add(clean(k));
      unknownFields(v, found, k);
    }
  }
  return found;
}

/** An id of more digits than a float holds exactly (a snowflake): the form of `snowflake-ids`, not another form. */
export const SNOWFLAKE = /^-?\d{16,}$/;

/** The spec's forms: decimals in strings, ids and counts as numbers, timestamps in ISO 8601 with an offset. Another form seen, or undefined. */
export function otherForm(value: unknown, field = ""): string | undefined {
  if (Array.isArray(value)) return value.map((v) => otherForm(v, field)).find((f) => f !== undefined);
  if (isObject(value))
    return Object.entries(value)
      .map(([k, v]) => otherForm(v, k))
      .find((f) => f !== undefined);
  if (
    ["balance", "monthly_cost", "cost", "text_input_price", "text_output_price"].includes(field) &&
    typeof value !== "string"
  )
    return `${field} as a ${typeof value}`;
  if (["id", "user_id"].includes(field) && typeof value === "string" && SNOWFLAKE.test(value)) return undefined;
  if (["id", "user_id", "total", "context_window", "max_output_tokens"].includes(field) && typeof value !== "number")
    return `${field} as a ${typeof value}`;
  if (
    ["created_at", "updated_at"].includes(field) &&
    !(typeof value === "string" && /T.*(Z|[+-]\d{2}:?\d{2})$/i.test(value))
  )
    return `${field} ${JSON.stringify(value)}`;
  return undefined;
}

/** The first snowflake id of an answer (as the client parses it: digits kept as text), `field: digits`, or undefined. */
export function snowflakeIn(value: unknown, field = ""): string | undefined {
  if (Array.isArray(value)) return value.map((v) => snowflakeIn(v, field)).find((f) => f !== undefined);
  if (isObject(value))
    return Object.entries(value)
      .map(([k, v]) => snowflakeIn(v, k))
      .find((f) => f !== undefined);
  return ["id", "user_id"].includes(field) && typeof value === "string" && SNOWFLAKE.test(value)
    ? `${field} of ${value.replace("-", "").length} digits`
    : undefined;
}

/** The rows every answer the doctor got speaks to: envelope, fields the spec does not list, value forms, ids, transient answers. */
export function answerRows(probe: Probe): DoctorRow[] {
  const extra = new Set<string>();
  for (const a of probe.answers) unknownFields(a, extra);
  const form = probe.answers.map((a) => otherForm(a)).find((f) => f !== undefined);
  const forms = "decimals in strings, ids as numbers, ISO 8601 timestamps with an offset";
  return [
    {
      point: "answer envelope",
      assumes: "answers as the spec shows them",
      observed: probe.envelope.seen ? "wrapped as {code, message, data}" : "not wrapped",
      verdict: probe.envelope.seen ? "handled" : "holds",
      reading: probe.envelope.seen ? (probe.envelope.withoutData ? "envelope-no-data" : "envelope") : undefined,
    },
    {
      point: "fields the spec does not list",
      assumes: "none needed; any is ignored",
      observed: extra.size ? `${[...extra].slice(0, 6).join(", ")}${extra.size > 6 ? ", ..." : ""}` : "none seen",
      verdict: extra.size ? "handled" : "holds",
      reading: extra.size ? "extra-fields" : undefined,
    },
    // Judged with the client's own schemas: "handled" only when the client reads every answer the doctor got.
    probe.unreadable
      ? {
          point: "value forms",
          assumes: forms,
          observed: `the client cannot read ${probe.unreadable}${form ? ` (${form})` : ""}`,
          verdict: "setting",
          setting: "none exists: report this platform's value form",
          reading: form ? "other-forms" : undefined,
        }
      : {
          point: "value forms",
          assumes: forms,
          observed: form ? `${form}: read by the client` : "as assumed",
          verdict: form ? "handled" : "holds",
          reading: form ? "other-forms" : undefined,
        },
    probe.snowflake
      ? {
          point: "ids",
          assumes: "whole numbers (spec 2.5)",
          observed: `beyond 2^53 (${probe.snowflake}): the client keeps them as their digits, never rounded`,
          verdict: "handled",
          reading: "snowflake-ids",
        }
      : { point: "ids", assumes: "whole numbers (spec 2.5)", observed: "within 2^53", verdict: "holds" },
    {
      point: "transient answers",
      assumes: "429 (or 5xx) when the platform cannot answer now",
      observed: probe.transient ? `${probe.transient.text}: the client tries it again` : "none seen",
      verdict: probe.transient ? "handled" : "holds",
      reading: probe.transient ? "transient-200" : undefined,
    },
    {
      point: "rate limit answer",
      assumes: "429 with Retry-After",
      observed: "not reached (it takes 60 writes a minute)",
      verdict: "not checked",
    },
  ];
}

/**
 * The row of what an answer about something that does not exist means to the package: gone (as a 404), or a
 * refusal it looks behind (a key's refusal naming the key: one get per key; a sub-account's: one list), or neither.
 */
export function goneRow(what: string, answer: Raw, group: "management" | "sub-account"): DoctorRow {
  const point = `gone: ${what}`;
  const assumes = "404 (or an answer that says not found)";
  if (meaningOf(answer) === "gone")
    return {
      point,
      assumes,
      observed: `${describeShape(answer)}: read as gone`,
      verdict: answer.status === 404 ? "holds" : "handled",
    };
  if (group === "management" && namesKey(answer)) {
    return {
      point,
      assumes,
      observed: `${describeShape(answer)} (${describeRefusal(answer)}): a refusal of a key the package holds that names the key, read as gone`,
      verdict: "handled",
      reading: "gone-400",
    };
  }
  if (group === "sub-account" && meaningOf(answer) === "refused") {
    return {
      point,
      assumes,
      observed: `${describeShape(answer)} (${describeRefusal(answer)}): a refused edit or delete is followed by one list, and what it does not show is gone`,
      verdict: "handled",
      reading: "gone-400",
    };
  }
  return {
    point,
    assumes,
    observed: `${describeShape(answer)} (${describeRefusal(answer)}): the client does not read it as gone`,
    verdict: "setting",
    setting: `${SETTINGS.profile.config} (llm-accounts doctor --write --save), which names this answer gone`,
  };
}

/** The row of an error answer's shape. */
export function errorShapeRow(
  point: string,
  answer: Raw,
  envelope: { seen: boolean; withoutData: boolean },
): DoctorRow {
  const assumes = "non-2xx {error: {code, message}}";
  if (answer.status < 300) {
    // The envelope wraps every refusal: a shape of the group's own (success: false, a bare {code, message}) does not show behind it.
    const hides = "the envelope wraps every refusal, and hides any other refusal shape behind it";
    if (envelope.seen && envelope.withoutData)
      return {
        point,
        assumes,
        observed: `HTTP ${answer.status} {code, message} without data: ${hides}`,
        verdict: "handled",
        reading: "envelope-no-data",
      };
    if (envelope.seen)
      return {
        point,
        assumes,
        observed: `HTTP ${answer.status} with an envelope's code: ${hides}`,
        verdict: "handled",
        reading: "envelope",
      };
    if (isObject(answer.wire) && answer.wire.success === false)
      return {
        point,
        assumes,
        observed: `HTTP ${answer.status} with success: false`,
        verdict: "handled",
        reading: "refusals-200",
      };
    return {
      point,
      assumes,
      observed: `HTTP ${answer.status} without a refusal the package recognises`,
      verdict: "setting",
      setting: "none exists: report this platform's refusal shape",
    };
  }
  if (isObject(answer.wire) && isObject(answer.wire.error))
    return { point, assumes, observed: `${answer.status} {error: {code, message}}`, verdict: "holds" };
  if (isObject(answer.wire) && ("code" in answer.wire || "message" in answer.wire))
    return { point, assumes, observed: `${answer.status} {code, message}`, verdict: "handled", reading: "bare-errors" };
  return {
    point,
    assumes,
    observed: `${answer.status} ${answer.wire === undefined ? "without JSON" : "in another shape"} (the status decides)`,
    verdict: "handled",
  };
}
