/** A server value as JSON carries it: times as ISO text, absent values left out, the rest as they are. */
export type Wire<T> = T extends Date
  ? string
  : T extends readonly (infer Item)[]
    ? readonly Wire<Item>[]
    : T extends object
      ? { readonly [K in keyof T]: Wire<T[K]> }
      : T;
