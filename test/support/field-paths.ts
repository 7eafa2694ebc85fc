import type { FieldPath } from "../../synth/field-path.ts";

/**
 * Every field path of `value`, and one below each leaf that doesn't exist (a reader places it at
 * its parent): the paths the codec's position tests ask the fast and the full reader about.
 */
export function fieldPaths(value: unknown, at: FieldPath = []): FieldPath[] {
  const below =
    typeof value === "object" && value !== null
      ? Object.entries(value).flatMap(([key, inner]) =>
          fieldPaths(inner, [...at, Array.isArray(value) ? Number(key) : key]),
        )
      : [[...at, "missing"]];
  return [at, ...below];
}
