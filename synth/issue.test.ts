import { describe, expect, it } from "vitest";
import { issue, issueText, oneLine } from "./issue.ts";

describe("issueText", () => {
  it.each([
    ["a newline", 'node label "master\n1" is bad', 'node label "master\\n1" is bad'],
    ["CR LF", "a\r\nb", "a\\r\\nb"],
    ["a tab", "a\tb", "a\\tb"],
    ["an ANSI escape", "\u001b[2Jcleared", "\\u001b[2Jcleared"],
    ["DEL and a C1 next line", "a\u007fb\u0085c", "a\\u007fb\\u0085c"],
    ["the Unicode line and paragraph separators", "a\u2028b\u2029c", "a\\u2028b\\u2029c"],
    ["plain text, backslashes and non-ASCII", "C:\\x → ünïcode", "C:\\x → ünïcode"],
  ])("writes a message with %s on one line", (_, message, written) => {
    const found = issue("node-label", "spec.masters[0]", message, {
      source: { file: "specs/a.yaml", line: 3, column: 7 },
    });
    const text = issueText(found);
    expect(text).toBe(`specs/a.yaml:3:7: error[node-label] spec.masters[0]: ${written}`);
    expect(text.split(/\r\n|[\n\r\u0085\u2028\u2029]/)).toHaveLength(1);
  });

  it("escapes the file name and the path as well", () => {
    const found = issue("schema", 'metadata.labels["a\u2028b"]', "x", {
      source: { file: "specs/two\nlines.yaml", line: 1, column: 1 },
    });
    expect(issueText(found)).toBe(
      'specs/two\\nlines.yaml:1:1: error[schema] metadata.labels["a\\u2028b"]: x',
    );
  });

  it("leaves text without control characters alone", () => {
    const text = "spec.masters[0].master-1.mac-address: 00:c6:14:04:61 is not a MAC";
    expect(oneLine(text)).toBe(text);
  });
});
