/**
 * A copy of `text` that shares no memory with the text it was cut from. The YAML parser returns
 * substrings of the document's source, and V8 keeps a whole source alive for a substring of it; a
 * host kept for the whole run must not pin the text of the item it came from (or of a 1 MiB chunk).
 */
export function detach(text: string): string {
  // V8 copies substrings shorter than 13 characters anyway. A longer slice or concatenation is a view
  // of other strings, which V8 compares (`===`, a Map key) in its runtime rather than inline: with
  // host ids made so, that was a tenth of a review's instructions. JSON's parser builds a plain copy.
  return text.length < 13 ? text : (JSON.parse(JSON.stringify(text)) as string);
}
