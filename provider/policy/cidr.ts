import { BlockList, isIP } from "node:net";

/** An address or CIDR range, parsed: a bare address is a range of one (/32, /128). */
export interface Range {
  address: string;
  prefix: number;
  family: "ipv4" | "ipv6";
}

/** Parses `10.0.0.0/8`, `2001:db8::/32` or a bare address; undefined for anything else. */
export function parseRange(text: string): Range | undefined {
  const slash = text.indexOf("/");
  const address = slash < 0 ? text : text.slice(0, slash);
  const version = isIP(address);
  if (version === 0) return undefined;
  const max = version === 4 ? 32 : 128;
  const bits = slash < 0 ? String(max) : text.slice(slash + 1);
  if (!/^\d{1,3}$/.test(bits) || Number(bits) > max) return undefined;
  return { address, prefix: Number(bits), family: version === 4 ? "ipv4" : "ipv6" };
}

/**
 * True when every address of `entry` lies inside `range`: same family, a prefix at least as long, and its
 * address inside the range (then so is every address sharing its first `range.prefix` bits).
 */
export function insideRange(entry: Range, range: Range): boolean {
  if (entry.family !== range.family || entry.prefix < range.prefix) return false;
  const list = new BlockList();
  list.addSubnet(range.address, range.prefix, range.family);
  return list.check(entry.address, entry.family);
}
