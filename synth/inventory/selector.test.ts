import { describe, expect, it } from "vitest";
import {
  labelKeyProblem,
  labelValueProblem,
  matchesSelector,
  selectorProblems,
  type LabelSelector,
} from "./selector.ts";

const labels = { "vino.airshipit.org/rack": "r006", "vino.airshipit.org/flavor": "worker", tier: "" };

describe("matchesSelector", () => {
  it.each<[string, LabelSelector, boolean]>([
    ["empty selector matches everything", {}, true],
    ["matchLabels equal", { matchLabels: { "vino.airshipit.org/rack": "r006" } }, true],
    ["matchLabels different value", { matchLabels: { "vino.airshipit.org/rack": "r007" } }, false],
    ["matchLabels missing key", { matchLabels: { zone: "a" } }, false],
    ["matchLabels empty value matches an empty label", { matchLabels: { tier: "" } }, true],
    [
      "In with the value",
      { matchExpressions: [{ key: "vino.airshipit.org/rack", operator: "In", values: ["r005", "r006"] }] },
      true,
    ],
    [
      "In without the value",
      { matchExpressions: [{ key: "vino.airshipit.org/rack", operator: "In", values: ["r005"] }] },
      false,
    ],
    ["In on a missing key", { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] }, false],
    [
      "NotIn with the value",
      { matchExpressions: [{ key: "vino.airshipit.org/rack", operator: "NotIn", values: ["r006"] }] },
      false,
    ],
    [
      "NotIn without the value",
      { matchExpressions: [{ key: "vino.airshipit.org/rack", operator: "NotIn", values: ["r001"] }] },
      true,
    ],
    [
      "NotIn on a missing key matches (Kubernetes semantics)",
      { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }] },
      true,
    ],
    ["Exists", { matchExpressions: [{ key: "tier", operator: "Exists" }] }, true],
    ["Exists on a missing key", { matchExpressions: [{ key: "zone", operator: "Exists" }] }, false],
    ["DoesNotExist", { matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] }, true],
    [
      "DoesNotExist on a present key",
      { matchExpressions: [{ key: "tier", operator: "DoesNotExist" }] },
      false,
    ],
    [
      "unknown operator matches nothing",
      { matchExpressions: [{ key: "tier", operator: "Gt", values: ["1"] }] },
      false,
    ],
    [
      "all parts are ANDed",
      {
        matchLabels: { "vino.airshipit.org/flavor": "worker" },
        matchExpressions: [{ key: "vino.airshipit.org/rack", operator: "In", values: ["r001"] }],
      },
      false,
    ],
    ["a key named __proto__ is just a key", { matchLabels: Object.fromEntries([["__proto__", "x"]]) }, false],
  ])("%s", (_name, selector, expected) => {
    expect(matchesSelector(labels, selector)).toBe(expected);
  });
});

describe("labelKeyProblem", () => {
  it.each([
    "app",
    "vino.airshipit.org/rack",
    "a",
    "A_b.c-d9",
    "example.com/" + "n".repeat(63),
    "x".repeat(253) + "/n",
  ])("accepts %s", (key) => {
    expect(labelKeyProblem(key)).toBeUndefined();
  });

  it.each<[string, string, RegExp]>([
    ["empty", "", /empty name/],
    ["empty name after prefix", "example.com/", /empty name/],
    ["empty prefix", "/rack", /empty prefix/],
    ["two slashes", "a/b/c", /more than one "\/"/],
    ["uppercase prefix", "Example.com/rack", /lowercase DNS subdomain/],
    ["prefix too long", "x".repeat(254) + "/n", /longer than 253/],
    ["name too long", "n".repeat(64), /longer than 63/],
    ["name starting with a dash", "-rack", /start and end with an alphanumeric/],
    ["name with a space", "my rack", /alphanumerics/],
  ])("refuses %s", (_name, key, message) => {
    expect(labelKeyProblem(key)).toMatch(message);
  });
});

describe("labelValueProblem", () => {
  it.each(["", "r006", "control-plane", "a.b_c-d", "v".repeat(63)])("accepts %j", (value) => {
    expect(labelValueProblem(value)).toBeUndefined();
  });
  it.each(["v".repeat(64), "-x", "x-", "a b", "a/b"])("refuses %j", (value) => {
    expect(labelValueProblem(value)).toBeDefined();
  });
});

describe("selectorProblems", () => {
  it.each<[string, LabelSelector]>([
    ["empty", {}],
    ["matchLabels", { matchLabels: { "vino.airshipit.org/flavor": "control-plane" } }],
    ["In", { matchExpressions: [{ key: "rack", operator: "In", values: ["r1", "r2"] }] }],
    ["NotIn", { matchExpressions: [{ key: "rack", operator: "NotIn", values: [""] }] }],
    ["Exists without values", { matchExpressions: [{ key: "rack", operator: "Exists" }] }],
    [
      "DoesNotExist with an empty list",
      { matchExpressions: [{ key: "rack", operator: "DoesNotExist", values: [] }] },
    ],
  ])("accepts %s", (_name, selector) => {
    expect(selectorProblems(selector)).toEqual([]);
  });

  it.each<[string, LabelSelector, (string | number)[], RegExp]>([
    ["bad matchLabels key", { matchLabels: { "bad key": "x" } }, ["matchLabels", "bad key"], /alphanumerics/],
    ["bad matchLabels value", { matchLabels: { rack: "r 1" } }, ["matchLabels", "rack"], /label value "r 1"/],
    [
      "bad expression key",
      { matchExpressions: [{ key: "A/b", operator: "Exists" }] },
      ["matchExpressions", 0, "key"],
      /prefix/,
    ],
    [
      "In without values",
      { matchExpressions: [{ key: "rack", operator: "In" }] },
      ["matchExpressions", 0, "values"],
      /at least one value/,
    ],
    [
      "NotIn with empty values",
      { matchExpressions: [{ key: "rack", operator: "NotIn", values: [] }] },
      ["matchExpressions", 0, "values"],
      /at least one value/,
    ],
    [
      "Exists with values",
      { matchExpressions: [{ key: "rack", operator: "Exists", values: ["x"] }] },
      ["matchExpressions", 0, "values"],
      /takes no values/,
    ],
    [
      "DoesNotExist with values",
      { matchExpressions: [{ key: "rack", operator: "DoesNotExist", values: ["x"] }] },
      ["matchExpressions", 0, "values"],
      /takes no values/,
    ],
    [
      "bad value in In",
      { matchExpressions: [{ key: "rack", operator: "In", values: ["ok", "not ok"] }] },
      ["matchExpressions", 0, "values", 1],
      /label value/,
    ],
    [
      "unknown operator",
      { matchExpressions: [{ key: "rack", operator: "in", values: ["x"] }] },
      ["matchExpressions", 0, "operator"],
      /unknown operator "in" \(expected one of In, NotIn, Exists, DoesNotExist\)/,
    ],
  ])("reports %s", (_name, selector, path, message) => {
    const problems = selectorProblems(selector);
    expect(problems).toHaveLength(1);
    expect(problems[0]?.path).toEqual(path);
    expect(problems[0]?.message).toMatch(message);
  });

  it("reports every problem at once, in field order", () => {
    const problems = selectorProblems({
      matchLabels: { "-bad": "ok" },
      matchExpressions: [
        { key: "rack", operator: "Exists", values: ["x"] },
        { key: "zone", operator: "Near" },
      ],
    });
    expect(problems.map((problem) => problem.path)).toEqual([
      ["matchLabels", "-bad"],
      ["matchExpressions", 0, "values"],
      ["matchExpressions", 1, "operator"],
    ]);
  });
});
