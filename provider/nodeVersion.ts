/** The oldest Node.js release line the package supports and tests: package.json's engines, the floor lane. */
export const OLDEST_NODE_MAJOR = 22;

/** One line naming the Node.js needed when `version` (this process's by default) is older, else undefined. */
export function nodeTooOld(version: string = process.versions.node): string | undefined {
  if (Number(version.replace(/^v/, "").split(".")[0]) >= OLDEST_NODE_MAJOR) return undefined;
  return `pulumi-llm-accounts needs Node.js ${OLDEST_NODE_MAJOR} or newer (22, 24 and 26 are tested); this is Node.js ${version.replace(/^v?/, "v")}.`;
}
