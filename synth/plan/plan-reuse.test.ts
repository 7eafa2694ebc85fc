import { describe, expect, it } from "vitest";
import { parseDocuments } from "../codec/read-documents.ts";
import { issue, type Issue } from "../issue.ts";
import { movedIssues, specLayout, type SpecLayout } from "./plan-reuse.ts";

const FIRST = "kind: A\nmetadata:\n  name: a\nspec:\n  plugins:\n    - multus\n";
const SECOND = "kind: B\nmetadata:\n  name: b\nspec:\n  workers: 2\n";

function layoutOf(...files: [string, string][]): SpecLayout {
  const layout = specLayout(files.flatMap(([file, text]) => parseDocuments(file, text).documents));
  if (layout === undefined) throw new Error("every document has its text");
  return layout;
}

function at(file: string, line: number, column = 3): Issue {
  return issue("no-fit", "spec.workers", "no host", { source: { file, line, column } });
}

describe("findings of a kept plan", () => {
  const before = layoutOf(["a.yaml", `${FIRST}---\n${SECOND}`]);

  it("move with the first line of a document whose text is unchanged", () => {
    const now = layoutOf(["a.yaml", `${FIRST.replace("multus\n", "multus\n    - ovn4nfv\n")}---\n${SECOND}`]);
    expect(movedIssues([at("a.yaml", 12)], before, now)).toEqual([at("a.yaml", 13)]);
  });

  it("stay where they are outside the specs and in documents that did not move", () => {
    const now = layoutOf(["a.yaml", `${FIRST}---\n${SECOND}`]);
    const elsewhere = at("inventory/rack.yaml", 40);
    expect(movedIssues([at("a.yaml", 12), elsewhere], before, now)).toEqual([at("a.yaml", 12), elsewhere]);
  });

  it("are not moved out of a document whose text changed, or that is gone", () => {
    const changed = layoutOf(["a.yaml", `${FIRST}---\n${SECOND.replace("2", "3")}`]);
    expect(movedIssues([at("a.yaml", 12)], before, changed)).toBeUndefined();
    expect(movedIssues([at("a.yaml", 12)], before, layoutOf(["a.yaml", FIRST]))).toBeUndefined();
    expect(movedIssues([at("a.yaml", 12)], before, layoutOf(["b.yaml", FIRST]))).toBeUndefined();
  });

  it("have no layout to move by when a document's positions are not its text's", () => {
    const document = {
      file: "a.yaml",
      index: 0,
      value: {},
      position: () => ({ file: "a.yaml", line: 1, column: 1 }),
    };
    expect(specLayout([document])).toBeUndefined();
  });
});
