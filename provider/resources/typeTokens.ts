/** The type token of a resource of this package: what `pulumi.dynamic.Resource` registers, for every state ever written. */
export function dynamicType(module: string, type: string): string {
  return `pulumi-nodejs:dynamic/${module}:${type}`;
}

/** The module under which this package's resources register. */
export const MODULE = "llm-accounts";

/** The type tokens by which engines, states and policies know this package's resources (never by shape). */
export const RESOURCE_TYPES = {
  ApiKey: dynamicType(MODULE, "ApiKey"),
  SubAccountBatch: dynamicType(MODULE, "SubAccountBatch"),
} as const;

/** Whether `obj` is a resource of type token `type`, even one made by another copy of this package: each class's `isInstance`. */
export function isResourceOf(obj: unknown, type: string): boolean {
  return typeof obj === "object" && obj !== null && (obj as { __pulumiType?: unknown }).__pulumiType === type;
}
