import { z } from "zod";
import type { RuleId } from "../rule-catalogue.ts";
import { MAC_PATTERN } from "../mac.ts";

/**
 * String formats that the CRDs publish as `pattern` *and* that have a rule id of their own. The schema
 * carries the pattern only as CRD metadata; the rule that owns the format checks it at runtime (with a
 * better message than "must match pattern"), so a bad MAC is one `mac-format` finding, not also a
 * `schema` one, and a format mistake never hides the CR's other findings.
 */
export const FORMATS = {
  mac: { pattern: MAC_PATTERN, rule: "mac-format", expected: "a MAC address such as 00:c6:14:04:61:b3" },
  plugin: {
    pattern: "^[a-z0-9][a-z0-9-]*$",
    rule: "plugin-name",
    expected: "a KUD plugin name matching [a-z0-9][a-z0-9-]*",
  },
} as const satisfies Record<string, { pattern: string; rule: RuleId; expected: string }>;

/** A string schema whose CRD publishes one of {@link FORMATS}; its rule checks it at runtime. */
export function formatted(format: keyof typeof FORMATS): z.ZodString {
  return z.string().meta({ pattern: FORMATS[format].pattern });
}

// Compiled once: the webhook checks every plugin of the site on each request.
const FORMAT_PATTERNS: Record<keyof typeof FORMATS, RegExp> = {
  mac: new RegExp(FORMATS.mac.pattern),
  plugin: new RegExp(FORMATS.plugin.pattern),
};

/** True when `text` has the format (the same anchored pattern the CRD publishes). */
export function hasFormat(format: keyof typeof FORMATS, text: string): boolean {
  return FORMAT_PATTERNS[format].test(text);
}

/**
 * A list item written as a one-key map, `- <name>: <value>` (BPA's style for node entries and pinned
 * packages). The single-key constraint is published to the CRD as min/maxProperties too.
 */
export function oneKeyMap<T extends z.ZodType>(value: T) {
  return z
    .record(z.string(), value)
    .refine((entry) => Object.keys(entry).length === 1, {
      message: "each item must be a map with exactly one key, e.g. `- master-1: {mac-address: …}`",
    })
    .meta({ minProperties: 1, maxProperties: 1 });
}

/** `metadata` as metalsynth reads it: dumps from a live cluster carry more (uid, managedFields…). */
export const ObjectMetaSpec = z.looseObject({
  name: z.string().min(1),
  namespace: z.string().min(1).optional(),
  labels: z.record(z.string(), z.string()).optional(),
  annotations: z.record(z.string(), z.string()).optional(),
});

/** Cluster API-style status is owned by controllers; metalsynth ignores it but must accept it. */
export const IgnoredStatusSpec = z.unknown().optional();
