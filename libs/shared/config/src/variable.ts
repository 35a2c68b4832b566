import { z } from 'zod';

/**
 * One environment variable: its name, its doc string and the zod schema that parses it (default
 * included). Where it sits in a slice's tree is its place in `Config`: a variable is
 * declared once and nothing maps it by hand.
 */
export class Variable<Out, Omittable extends boolean = false> {
  /** The parsed value's type; carried by the type only (no runtime field). */
  declare readonly out: Out;
  /** Whether a configuration built by hand (a test's) may leave the key out; type only. */
  declare readonly omittable: Omittable;

  constructor(
    readonly env: string,
    readonly doc: string,
    readonly schema: z.ZodType,
    /** Read when this variable parses to `undefined` (`DEVNET_REDIS_URL` falls back to `REDIS_URL`). */
    readonly orElse?: Variable<unknown>,
  ) {}
}

/** Declares a variable: `env` is its name, `doc` one line on what it sets, `schema` its parsing and default. */
export function variable<S extends z.ZodType>(env: string, doc: string, schema: S): Variable<z.output<S>>;
/** A variable that takes `orElse`'s value when it is unset. */
export function variable<S extends z.ZodType, F>(
  env: string,
  doc: string,
  schema: S,
  orElse: Variable<F>,
): Variable<Exclude<z.output<S>, undefined> | F>;
export function variable(env: string, doc: string, schema: z.ZodType, orElse?: Variable<unknown>): Variable<unknown> {
  return new Variable(env, doc, schema.describe(doc), orElse);
}

/** Marks `v`'s key optional in {@link Output}, for an `undefined`-able key that hand-built configurations may omit. */
export function omittable<O>(v: Variable<O>): Variable<O, undefined extends O ? true : false> {
  return v as Variable<O, undefined extends O ? true : false>;
}

/** Where variables sit in the configuration: keys are the configuration's property names. */
export interface Tree {
  readonly [key: string]: Variable<unknown, boolean> | Tree;
}

/** A parsed value as {@link loadConfig} hands it out: frozen all the way down. */
export type Frozen<T> = T extends Date
  ? T
  : T extends readonly (infer E)[]
    ? readonly Frozen<E>[]
    : T extends object
      ? { readonly [K in keyof T]: Frozen<T[K]> }
      : T;

/** The configuration a tree of variables parses to. */
export type Output<T> = Flat<
  { readonly [K in keyof T as Unset<T[K]> extends true ? never : K]: Value<T[K]> } & {
    readonly [K in keyof T as Unset<T[K]> extends true ? K : never]?: Value<T[K]>;
  }
>;

type Value<N> = N extends Variable<infer O, boolean> ? Frozen<O> : Output<N>;
type Unset<N> = N extends Variable<unknown, true> ? true : false;
type Flat<T> = { [K in keyof T]: T[K] };

/** A rule across parsed values; `env` names the variable the message is about. */
export interface Refusal {
  readonly env: string;
  readonly message: string;
  /** false: the rule is about a missing value, so the message quotes none. */
  readonly quote?: false;
}

/**
 * A scope's part of the configuration: its variables in the place they take in `Config`,
 * and the rules that span several of them. A tree may name a variable another slice declares
 * (the same object) to read it in a rule.
 */
export interface Slice<T extends Tree> {
  readonly tree: T;
  /** The rules `config` breaks (a method, so a slice of any tree is a `Slice<Tree>`). */
  refusals(config: Output<T>): Refusal[];
}

export function slice<T extends Tree>(
  tree: T,
  ...rules: readonly ((config: Output<T>) => Refusal | undefined)[]
): Slice<T> {
  return {
    tree,
    refusals: (config) => rules.flatMap((rule) => rule(config) ?? []),
  };
}

type UnionToIntersection<U> = (U extends unknown ? (u: U) => void : never) extends (i: infer I) => void ? I : never;

/** The trees of several slices, merged at the root. */
export type Merged<S extends readonly Slice<Tree>[]> = UnionToIntersection<S[number]['tree']>;

/**
 * Composes slices into one zod schema: its input is the environment (each variable read by its
 * name, in slice order), its output the frozen configuration. Every rule runs on the parsed
 * values; each broken one is an issue whose path is the variable it names.
 * Throws at load when two slices declare the same name or key differently, or a fallback
 * (`orElse`) is no variable of the composition.
 */
export function compose<S extends readonly Slice<Tree>[]>(...slices: S) {
  const tree = mergeTrees(slices.map((s) => s.tree));
  const variables = [...leaves(tree)];
  for (const v of variables)
    if (v.orElse && !variables.includes(v.orElse))
      throw new Error(`${v.env} falls back to ${v.orElse.env}, not composed`);
  const shape = Object.fromEntries(variables.map((v) => [v.env, v.schema]));
  const schema = z.object(shape).transform((env, ctx): Output<Merged<S>> => {
    const config = deepFreeze(build(tree, env)) as Output<Tree>;
    for (const refusal of slices.flatMap((s) => s.refusals(config))) {
      ctx.addIssue({
        code: 'custom',
        path: [refusal.env],
        message: refusal.message,
        ...(refusal.quote === false ? { params: { quote: false } } : {}),
      });
    }
    return config as Output<Merged<S>>;
  });
  return { schema, variables: variables as readonly Variable<unknown, boolean>[] };
}

function mergeTrees(trees: readonly Tree[]): Tree {
  const out: Record<string, Variable<unknown, boolean> | Tree> = {};
  for (const tree of trees) {
    for (const [key, node] of Object.entries(tree)) {
      const had = out[key];
      if (had === undefined) out[key] = node;
      else if (had instanceof Variable || node instanceof Variable) {
        if (had !== node) throw new Error(`configuration key ${key} is declared twice`);
      } else out[key] = mergeTrees([had, node]);
    }
  }
  return out;
}

function* leaves(
  tree: Tree,
  seen = new Map<string, Variable<unknown, boolean>>(),
): Generator<Variable<unknown, boolean>> {
  for (const node of Object.values(tree)) {
    if (!(node instanceof Variable)) {
      yield* leaves(node, seen);
      continue;
    }
    const had = seen.get(node.env);
    if (had === node) continue;
    if (had) throw new Error(`configuration variable ${node.env} is declared twice`);
    seen.set(node.env, node);
    yield node;
  }
}

function build(tree: Tree, env: Readonly<Record<string, unknown>>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(tree).map(([key, node]) => {
      if (!(node instanceof Variable)) return [key, build(node, env)];
      const value = env[node.env];
      return [key, value === undefined && node.orElse ? env[node.orElse.env] : value];
    }),
  );
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !(value instanceof Date)) {
    for (const v of Object.values(value)) deepFreeze(v);
    Object.freeze(value);
  }
  return value;
}
