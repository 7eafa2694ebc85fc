import { readFileSync } from "node:fs";
import path from "node:path";
import { Ajv } from "ajv";
import { REPO } from "../harness.ts";

/**
 * A validator of SARIF 2.1.0 logs against the official OASIS schema, vendored in
 * test/fixtures/sarif (see SOURCE.md there): never fetched. The schema is draft-04; Ajv's default
 * (draft-07) reads it once its top-level `id` is spelled `$id` and the draft-04 `$schema` is left out.
 */
export function sarifValidator(): (log: unknown) => string[] {
  const file = path.join(REPO, "test", "fixtures", "sarif", "sarif-schema-2.1.0.json");
  const schema = JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>;
  const id = String(schema.id);
  delete schema.$schema;
  delete schema.id;
  const ajv = new Ajv({ allErrors: true, strict: false });
  // The schema's three formats, checked as strictly as the standards they name need here.
  ajv.addFormat("uri", (text: string) => URL.canParse(text));
  ajv.addFormat("uri-reference", (text: string) => URL.canParse(text, "file:///") && !/\s/.test(text));
  ajv.addFormat(
    "date-time",
    (text: string) => /^\d{4}-\d\d-\d\dT/.test(text) && !Number.isNaN(Date.parse(text)),
  );
  const validate = ajv.compile({ ...schema, $id: id });
  return (log) =>
    validate(log)
      ? []
      : (validate.errors ?? []).map((error) => `${error.instancePath} ${error.message ?? ""}`);
}
