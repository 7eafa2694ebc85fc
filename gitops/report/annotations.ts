import { RULES } from "../../synth/rule-catalogue.ts";
import { compareIssues, type Issue } from "../../synth/issue.ts";

/**
 * Diagnostics as GitHub Actions workflow commands, one line each:
 * `::error file=specs/a.yaml,line=3,col=7,title=metalsynth mac-format::spec.x: message`. GitHub
 * turns each into an annotation on that line of the pull request's diff. A finding with no file
 * (a rule about the whole site) is annotated on the run alone.
 */
export function githubAnnotations(issues: readonly Issue[]): string {
  return [...issues]
    .sort(compareIssues)
    .map((found) => {
      const properties = [
        ...(found.source === undefined
          ? []
          : [
              `file=${escapeProperty(found.source.file)}`,
              `line=${found.source.line}`,
              `col=${found.source.column}`,
            ]),
        `title=${escapeProperty(`metalsynth ${found.rule}`)}`,
      ];
      const text = found.path === "" ? found.message : `${found.path}: ${found.message}`;
      return `::${found.severity} ${properties.join(",")}::${escapeData(text)}\n`;
    })
    .join("");
}

/**
 * A workflow command's message, escaped as the Actions runner unescapes it: `%` first (it starts
 * every escape), then the line breaks that would end the command.
 */
export function escapeData(text: string): string {
  return text.replace(/%/g, "%25").replace(/\r/g, "%0D").replace(/\n/g, "%0A");
}

/** A workflow command's property value: as {@link escapeData}, and `:` and `,`, which delimit properties. */
export function escapeProperty(text: string): string {
  return escapeData(text).replace(/:/g, "%3A").replace(/,/g, "%2C");
}

/** The SARIF version this writes, and the schema its `$schema` names. */
const SARIF_VERSION = "2.1.0";
const SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json";

/**
 * Diagnostics as one SARIF 2.1.0 log (for GitHub code scanning and other SARIF readers): one run of
 * the `metalsynth` tool whose driver lists every rule of the catalogue (id, short description,
 * default level, help), and one result per finding. File locations are the diagnostics' paths
 * (relative to where metalsynth ran), written as relative URIs.
 */
export function sarifLog(issues: readonly Issue[], version: string): string {
  const ids = Object.keys(RULES) as (keyof typeof RULES)[];
  const rules = ids.map((id) => {
    const rule = RULES[id];
    return {
      id,
      name: ruleName(id),
      shortDescription: { text: rule.summary },
      defaultConfiguration: { level: rule.severity },
      help: {
        text:
          `${rule.summary}. Severity: ${rule.severity}. Checked by ${rule.module}; ` +
          `'metalsynth validate' lists every finding, and the README's rule table lists every rule.`,
      },
    };
  });
  const results = [...issues].sort(compareIssues).map((found) => ({
    ruleId: found.rule,
    ruleIndex: ids.indexOf(found.rule),
    level: found.severity,
    message: { text: found.path === "" ? found.message : `${found.path}: ${found.message}` },
    ...(found.source === undefined
      ? {}
      : {
          locations: [
            {
              physicalLocation: {
                artifactLocation: { uri: fileUri(found.source.file) },
                region: { startLine: found.source.line, startColumn: found.source.column },
              },
            },
          ],
        }),
    ...(found.cluster === undefined ? {} : { properties: { cluster: found.cluster } }),
  }));
  const log = {
    $schema: SARIF_SCHEMA,
    version: SARIF_VERSION,
    runs: [
      {
        tool: { driver: { name: "metalsynth", version, rules } },
        results,
      },
    ],
  };
  return `${JSON.stringify(log, null, 2)}\n`;
}

/** `mac-format` → `MacFormat`: SARIF's rule names are identifiers, the ids stay the stable key. */
function ruleName(id: string): string {
  return id
    .split("-")
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1))
    .join("");
}

/** A display path as a relative URI reference: each segment percent-encoded, `/` kept. */
function fileUri(file: string): string {
  return file.split("/").map(encodeURIComponent).join("/");
}
