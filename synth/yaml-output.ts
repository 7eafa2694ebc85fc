import { stringify } from "yaml";

/**
 * Every YAML file metalsynth writes goes through here, so output is byte-stable: no line folding
 * (a long image reference must not wrap differently between versions), two-space indentation,
 * insertion-ordered keys (the code that builds an object decides the order), LF endings.
 */
export function toYaml(value: unknown): string {
  return stringify(value, { lineWidth: 0, indent: 2, aliasDuplicateObjects: false });
}

/** A multi-document YAML stream (`---` between documents), ending with a newline. */
export function toYamlStream(values: readonly unknown[]): string {
  return values.map((value) => toYaml(value)).join("---\n");
}
