import { readdirSync, readFileSync } from "node:fs";

/**
 * Every process below `pid` (Linux's /proc). The Pulumi CLI starts its plugins in process groups of their own,
 * which a kill of its group misses.
 */
export function descendantsOf(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      parentOf.set(Number(name), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const below: number[] = [];
  const walk = (p: number) => {
    for (const [child, parent] of parentOf) if (parent === p) below.push(child), walk(child);
  };
  walk(pid);
  return below;
}

/** SIGKILL to a process started `detached` (its group) and to every process below it: a machine that lost power, for the command. */
export function killTree(pid: number): void {
  const below = descendantsOf(pid);
  for (const target of [-pid, ...below]) {
    try {
      process.kill(target, "SIGKILL");
    } catch {
      // Already gone with its group.
    }
  }
}
