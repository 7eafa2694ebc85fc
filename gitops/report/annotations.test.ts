import { describe, expect, it } from "vitest";
import { issue, type Issue } from "../../synth/issue.ts";
import { RULES } from "../../synth/rule-catalogue.ts";
import { sarifValidator } from "../../test/support/sarif-schema.ts";
import { escapeData, escapeProperty, githubAnnotations, sarifLog } from "./annotations.ts";

const at = (file: string, line: number, column: number) => ({ source: { file, line, column } });

describe("GitHub workflow-command escaping", () => {
  it.each([
    ["plain", "plain", "plain"],
    ["100%", "100%25", "100%25"],
    ["%0A stays text", "%250A stays text", "%250A stays text"],
    ["a\nb", "a%0Ab", "a%0Ab"],
    ["a\r\nb", "a%0D%0Ab", "a%0D%0Ab"],
    ["spec: x", "spec: x", "spec%3A x"],
    ["a,b", "a,b", "a%2Cb"],
    ["specs/a b,c:d.yaml", "specs/a b,c:d.yaml", "specs/a b%2Cc%3Ad.yaml"],
  ])("%j is %j as a message and %j as a property", (text, data, property) => {
    expect(escapeData(text)).toBe(data);
    expect(escapeProperty(text)).toBe(property);
  });
});

describe("githubAnnotations", () => {
  it("writes one command per finding, on its file, line and column, errors and warnings, sorted", () => {
    const issues: Issue[] = [
      issue("no-objects", "", "nothing here", at("specs/z.yaml", 1, 1)),
      issue(
        "mac-format",
        "spec.masters[0].m.mac-address",
        'MAC "zz:00" is not\na MAC, 100%',
        at("specs/a,b.yaml", 7, 9),
      ),
      issue("cluster-label", "metadata.labels.cluster", "no cluster label"),
    ];
    expect(githubAnnotations(issues)).toBe(
      "::error title=metalsynth cluster-label::metadata.labels.cluster: no cluster label\n" +
        "::error file=specs/a%2Cb.yaml,line=7,col=9,title=metalsynth mac-format::" +
        'spec.masters[0].m.mac-address: MAC "zz:00" is not%0Aa MAC, 100%25\n' +
        "::warning file=specs/z.yaml,line=1,col=1,title=metalsynth no-objects::nothing here\n",
    );
  });
});

describe("sarifLog", () => {
  const validate = sarifValidator();
  const issues: Issue[] = [
    issue("mac-format", "spec.masters[0].m.mac-address", "not a MAC", {
      ...at("site dir/specs/a#1.yaml", 7, 9),
      cluster: "edge/east",
    }),
    issue("no-objects", "", "nothing here", at("specs/z.yaml", 1, 1)),
    issue("cluster-label", "metadata.labels.cluster", "no cluster label"),
  ];

  it("is valid against the SARIF 2.1.0 schema, with findings and without", () => {
    expect(validate(JSON.parse(sarifLog(issues, "1.2.3")))).toEqual([]);
    expect(validate(JSON.parse(sarifLog([], "1.2.3")))).toEqual([]);
  });

  it("can fail the schema: a level SARIF does not know is refused", () => {
    const log = JSON.parse(sarifLog(issues, "1.2.3"));
    log.runs[0].results[0].level = "fatal";
    expect(validate(log).join("\n")).toMatch(/results\/0\/level/);
  });

  it("lists every catalogue rule with its description, default level and help, and points results at them", () => {
    const log = JSON.parse(sarifLog(issues, "1.2.3"));
    const [run] = log.runs;
    expect(run.tool.driver).toMatchObject({ name: "metalsynth", version: "1.2.3" });
    const rules: {
      id: string;
      shortDescription: { text: string };
      defaultConfiguration: { level: string };
      help: { text: string };
    }[] = run.tool.driver.rules;
    expect(rules.map((rule) => rule.id)).toEqual(Object.keys(RULES));
    for (const rule of rules) {
      const entry = RULES[rule.id as keyof typeof RULES];
      expect(rule.shortDescription.text).toBe(entry.summary);
      expect(rule.defaultConfiguration.level).toBe(entry.severity);
      expect(rule.help.text).toContain(entry.module);
    }
    const [first] = run.results;
    expect(rules[first.ruleIndex]?.id).toBe(first.ruleId);
    expect(run.results.map((result: { ruleId: string }) => result.ruleId)).toEqual([
      "cluster-label",
      "mac-format",
      "no-objects",
    ]);
    const mac = run.results[1];
    expect(mac).toMatchObject({
      level: "error",
      message: { text: "spec.masters[0].m.mac-address: not a MAC" },
      locations: [
        {
          physicalLocation: {
            artifactLocation: { uri: "site%20dir/specs/a%231.yaml" },
            region: { startLine: 7, startColumn: 9 },
          },
        },
      ],
      properties: { cluster: "edge/east" },
    });
    expect(run.results[0].locations).toBeUndefined();
  });
});
