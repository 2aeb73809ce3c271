/** How JSON writes the control characters that have a short escape; every other one is written \u00XX. */
const SHORT_ESCAPES: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };

/**
 * Text from the platform (a console alias) as a command prints it: every control character (C0, DEL, C1; line
 * separators and bidi controls too) escaped as JSON escapes it, so that it can neither start a line, nor drive the
 * terminal, nor reorder what it shows. Used by `llm-accounts audit` (its table cells) and `llm-accounts sweep`.
 */
export function printable(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g, (c) => SHORT_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
