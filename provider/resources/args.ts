import type * as pulumi from "@pulumi/pulumi";

/**
 * A settings value as a program gives it: the value or an Output of it at every level (each field, each array and
 * each element), so that a setting can come from another resource or from config.
 */
export type InputsOf<T> = T extends readonly (infer E)[]
  ? pulumi.Input<InputsOf<E>>[]
  : T extends object
    ? { [K in keyof T]: pulumi.Input<InputsOf<Exclude<T[K], undefined>>> }
    : T;

/**
 * A resource's Args from the input type of the schema its check validates them by (`z.input`): each field a value
 * or an Output at every level, optional where the schema lets it be left out (a null the schema reads as absent is
 * left out of the type). A field whose schema reads any value first (`z.preprocess`: securityConfig, modelPricing)
 * or takes unknown fields so as to name them in a failure (settings objects: connection, rotation) has no useful
 * input type: `Typed` gives its type, made from that schema's output, and must name fields of the schema.
 */
export type ArgsOf<T, Typed extends { [K in keyof Typed]: K extends keyof T ? unknown : never }> = {
  [K in keyof Omit<T, keyof Typed>]: pulumi.Input<InputsOf<Exclude<T[K], null | undefined>>>;
} & { [K in keyof Typed]: pulumi.Input<Typed[K]> };
