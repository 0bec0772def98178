"""Differential fuzzing of JSON Schema checks: random schemas as Chat Completions tool parameters (plain and
``strict``) and ``json_schema`` response formats, converted by dscodec and by the reference (``deepseek_recipe``,
called as a black box); report every schema where the outcome or the error message differs.

    python tools/diff_fuzz_schemas.py [--count 2000] [--seed 1] [--out /tmp/schemas]

A schema is built from the keywords of the 2020-12 meta-schema (and a few it does not know), with values of
every JSON type, nested subschemas, ``required`` lists with repeats and non-strings, references (``$ref``,
``$dynamicRef``) and identifiers (``$id``, ``$anchor``, ``$schema``) of every shape. Most schemas hold several
problems, so this is what shows *which* problem the reference reports first. Read errors (the body's shape) are
compared by kind only. With ``--drafts`` the root names a dialect by ``$schema`` (drafts 4, 6, 7, 2019-09 or
2020-12, each in the spellings the reference knows) and the keywords of the older drafts join in (``id``,
``additionalItems``, ``items`` as an array). A disagreement worth keeping becomes a golden case in
``tools/golden_cases/``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from pathlib import Path
from typing import Any

TOOLS_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(TOOLS_DIR))

from record_golden import _load_reference

import dscodec

KEYWORDS = (
    "type", "properties", "required", "items", "prefixItems", "enum", "const", "anyOf", "oneOf", "allOf", "not",
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern",
    "format", "minItems", "maxItems", "uniqueItems", "minProperties", "maxProperties", "additionalProperties",
    "patternProperties", "propertyNames", "dependentRequired", "dependentSchemas", "if", "then", "else", "$ref",
    "$defs", "definitions", "dependencies", "description", "title", "default", "examples", "contains",
    "minContains", "maxContains", "unevaluatedProperties", "unevaluatedItems", "$id", "$schema", "$anchor",
    "$comment", "contentEncoding", "contentMediaType", "contentSchema", "deprecated", "readOnly", "writeOnly",
    "$dynamicRef", "$dynamicAnchor", "$vocabulary", "$recursiveAnchor", "$recursiveRef", "nullable", "strict",
)  # fmt: skip
SCALARS: tuple[Any, ...] = (
    0, 1, -1, 1.5, -0.0, 2**53 + 1, 1e300, True, False, None, "", "a", "a b", "string", "object", "number",
    "integer", "array", "boolean", "null", "^a+$", "(", "#", "#/$defs/x", "#/properties/a", "#a", "x.json",
    "https://example.com/s", "https://json-schema.org/draft/2020-12/schema", "http://json-schema.org/draft-07/schema#",
    "date-time", "%zz", [], {},
)  # fmt: skip
#: Keywords only older drafts know (``--drafts``).
OLD_KEYWORDS = ("id", "additionalItems", "items", "items", "exclusiveMinimum", "$recursiveRef")
DIALECTS = (
    "http://json-schema.org/draft-04/schema#", "https://json-schema.org/draft-04/schema",
    "http://json-schema.org/draft-06/schema#", "http://json-schema.org/draft-07/schema#",
    "https://json-schema.org/draft-07/schema", "https://json-schema.org/draft/2019-09/schema",
    "http://json-schema.org/draft/2019-09/schema#", "https://json-schema.org/draft/2020-12/schema",
    "http://json-schema.org/schema#",
    # The vocabulary meta-schemas (a root or a subschema may name one as its dialect).
    "https://json-schema.org/draft/2020-12/meta/core", "https://json-schema.org/draft/2020-12/meta/applicator",
    "https://json-schema.org/draft/2020-12/meta/validation", "https://json-schema.org/draft/2020-12/meta/meta-data",
    "https://json-schema.org/draft/2020-12/meta/unevaluated", "https://json-schema.org/draft/2019-09/meta/core",
    "https://json-schema.org/draft/2019-09/meta/applicator", "https://json-schema.org/draft/2019-09/meta/validation",
)  # fmt: skip
#: Endings a dialect's URI is given with now and then (``--drafts``): hashes, fragments, characters no URI has.
DIALECT_ENDINGS: tuple[str, ...] = ("", "#", "##", "###", "#a", "#a#", "#/a", "<x>", "#<", "%zz", "?q", " ")


def dialect_spelling(rng: random.Random) -> str:
    """A dialect URI, mostly as the drafts spell it, else with another ending (``#`` stripped first)."""
    uri = rng.choice(DIALECTS)
    if rng.random() < 0.3:
        uri = uri.rstrip("#") + rng.choice(DIALECT_ENDINGS)
    return uri


#: Pieces of regex syntax for ``--patterns``: every construct of the two readings (dscodec.protocols._regex), good
#: and bad.
REGEX_PIECES: tuple[str, ...] = (
    "a", "b", "é", "😀", ".", "^", "$", "|", "(", ")", "(?:", "(?=", "(?!", "(?<=", "(?<!", "(?<n>", "(?P<m>",
    "(?'q'", "(?>", "(?#c)", "(?i)", "(?x)", "(?-i)", "(?i:", "(?U)", "(?i-i)", "*", "+", "?", "{2}", "{2,}",
    "{1,3}", "{3,1}", "{,2}", "{", "}", "{ 2 }", "[", "]", "[^", "-", "--", "&&", "~~", "[:alpha:]", "\\d", "\\w",
    "\\s", "\\D", "\\b", "\\B", "\\A", "\\z", "\\Z", "\\<", "\\1", "\\2", "\\0", "\\k<n>", "\\x41",
    "\\x{41}", "\\u0041", "\\u{D800}", "\\p{L}", "\\p{Greek}", "\\pN", "\\p{Foo}", "\\p{IsGreek}",
    "\\p{sc=Grek}", "\\cA", "\\c1", "\\a", "\\e", "\\n", "\\t", "\\-", "\\[", "\\]", "\\.", "\\\\",
    "\\ ", "\\é", "\\b{start}", " ", "#", "\n", "0", "9", "z", "_", "{1000}", "{100000}",
)  # fmt: skip
#: Reference and identifier keywords, and values for them of every shape (``--refs``): fragments with spaces, slashes,
#: characters no URI has, pointers, anchors, relative and absolute URIs, the meta-schemas.
REF_KEYWORDS = ("$ref", "$dynamicRef", "$recursiveRef", "$id", "$anchor", "$dynamicAnchor", "id")
REF_VALUES: tuple[str, ...] = (
    "#", "#/", "#/a b", "#a b", "#é", "#/é", "#a/b", "#a/", "#/{", "#a#b", "#%zz", "#/%7E", "#/$defs/a",
    "#/$defs/x", "#/definitions/a", "#/properties/a", "#/properties/a/..", "#a", "#x", "#1a", "#\r\n", "#/~0",
    "#/~2", "#/a~1b", "x", "x#/a b", "x y", "a.json#a", "../x", "//host/x", "http://[::1]/x", "urn:x#a",
    "https://example.com/s", "https://example.com/s#a/b", "https://json-schema.org/draft/2020-12/schema#/$defs/x",
    "https://json-schema.org/draft/2020-12/schema#meta", "http://json-schema.org/draft-07/schema#a/b", "",
    # Pointers into the meta-schema documents: to schemas, to what is no schema, to nothing, array indexes.
    "https://json-schema.org/draft/2020-12/meta/applicator#/$defs/schemaArray",
    "https://json-schema.org/draft/2020-12/meta/validation#/$defs/stringArray",
    "https://json-schema.org/draft/2020-12/meta/applicator#/properties", "https://json-schema.org/draft/2020-12/schema#/allOf/1",
    "https://json-schema.org/draft/2020-12/schema#/allOf/x", "https://json-schema.org/draft/2019-09/schema#/title",
    "http://json-schema.org/draft-07/schema#/definitions/schemaArray", "http://json-schema.org/draft-04/schema#/properties/enum",
    "http://json-schema.org/draft-07/schema#/definitions/nope",
)  # fmt: skip
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
SCHEMA_ONES = ("items", "not", "if", "then", "else", "additionalProperties", "propertyNames", "contains")
SCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")


class Schemas:
    """Random schemas from one seed."""

    def __init__(self, rng: random.Random, *, drafts: bool = False, refs: bool = False) -> None:
        self.rng = rng
        self.keywords = KEYWORDS + OLD_KEYWORDS if drafts else KEYWORDS
        self.refs = refs
        if refs:  # references and identifiers come up more often
            self.keywords += REF_KEYWORDS * 3

    def value(self, depth: int) -> Any:
        rng = self.rng
        roll = rng.random()
        if depth > 3 or roll < 0.35:
            return rng.choice(SCALARS)
        if roll < 0.55:
            return [self.value(depth + 1) for _ in range(rng.randint(0, 3))]
        if roll < 0.85:
            return self.schema(depth + 1)
        return {
            rng.choice(["a", "b", "x", "$defs", "$ref"]): self.value(depth + 1)
            for _ in range(rng.randint(0, 3))
        }

    def schema(self, depth: int = 0) -> dict[str, Any]:
        rng = self.rng
        out: dict[str, Any] = {}
        for _ in range(rng.randint(0, 4)):
            key = rng.choice(self.keywords)
            if key in SCHEMA_MAPS:
                out[key] = {
                    rng.choice(["a", "b", "x", "^a"]): self.schema(depth + 1)
                    if rng.random() < 0.8
                    else self.value(depth + 1)
                    for _ in range(rng.randint(0, 2))
                }
            elif key in ("required", "dependentRequired"):
                names = [rng.choice(["a", "b", "a", 1, {"a": 1}, None]) for _ in range(rng.randint(0, 3))]
                out[key] = names if key == "required" else {"a": names}
            elif key == "items" and self.keywords is not KEYWORDS and rng.random() < 0.5:
                out[key] = [self.schema(depth + 1) if depth < 4 else {} for _ in range(rng.randint(0, 2))]
            elif key == "$schema" and self.keywords is not KEYWORDS and rng.random() < 0.5:
                out[key] = dialect_spelling(rng)  # a subschema's dialect
            elif self.refs and key in REF_KEYWORDS and rng.random() < 0.8:
                out[key] = rng.choice(REF_VALUES)
            elif key in SCHEMA_ONES and rng.random() < 0.7:
                out[key] = self.schema(depth + 1) if depth < 4 else {}
            elif key in SCHEMA_LISTS and rng.random() < 0.7:
                out[key] = [self.schema(depth + 1) if depth < 4 else {} for _ in range(rng.randint(0, 2))]
            else:
                out[key] = self.value(depth)
        return out


def body_for(schema: dict[str, Any], where: str, strict: bool) -> dict[str, Any]:
    body: dict[str, Any] = {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "hi"}]}
    if where == "format":
        body["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "x", "schema": schema, "strict": strict},
        }
    else:
        function: dict[str, Any] = {"name": "f", "parameters": schema}
        if strict:
            function["strict"] = True
        body["tools"] = [{"type": "function", "function": function}]
    return body


def reference_outcome(ref: Any, raw: str) -> str:
    try:
        request = ref.ChatCompletionRequest(raw)
    except ValueError:
        return "read"
    try:
        request.convert(ref.ConversionOptions())
    except ref.ConversionError as exc:
        return str(json.loads(exc.body)["error"]["message"])
    return "ok"


def our_outcome(raw: str) -> str:
    try:
        dscodec.convert("chat_completions", raw)
    except dscodec.ConversionError as exc:
        message = str(exc.body["error"]["message"])
        return "read" if message.startswith(("invalid request body", "invalid JSON request")) else message
    except Exception as exc:  # noqa: BLE001 - an internal error is exactly what this looks for
        return f"crash {type(exc).__name__}: {exc}"
    return "ok"


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--out", type=Path, default=None, help="write each differing body here")
    parser.add_argument("--drafts", action="store_true", help="name a dialect by $schema at the root")
    parser.add_argument(
        "--patterns", action="store_true", help="random regex patterns (a string property's pattern) instead"
    )
    parser.add_argument(
        "--refs", action="store_true", help="references and identifiers of every shape, more often"
    )
    args = parser.parse_args()
    ref = _load_reference()
    rng = random.Random(args.seed)
    schemas = Schemas(rng, drafts=args.drafts, refs=args.refs)
    differ = labelled = 0
    for number in range(args.count):
        schema = schemas.schema()
        if args.patterns:
            pattern = "".join(rng.choice(REGEX_PIECES) for _ in range(rng.randint(1, 10)))
            schema = {"type": "object", "properties": {"a": {"type": "string", "pattern": pattern}}}
            if args.drafts and rng.random() < 0.5:
                # A pattern nothing compiles: only the format check reads it.
                schema = {"type": "object", "definitions": {"a": {"pattern": pattern}}}
        if rng.random() < 0.8:
            schema["type"] = "object"
        if args.drafts and rng.random() < 0.9:
            schema["$schema"] = dialect_spelling(rng)
        where = rng.choice(["tool", "format"])
        raw = json.dumps(body_for(schema, where, strict=rng.random() < 0.3))
        theirs, ours = reference_outcome(ref, raw), our_outcome(raw)
        if theirs == ours:
            continue
        differ += 1
        # D11: the reference reads an array where a subschema object is expected by position; dscodec refuses it.
        label = "D11? " if "invalid type: sequence, expected internally tagged enum" in ours else ""
        labelled += bool(label)
        print(
            f"#{number} {label}{where}: {json.dumps(schema)[:300]}\n    reference: {theirs[:300]}\n"
            f"    dscodec:   {ours[:300]}"
        )
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / f"schema-{number}.json").write_text(raw)
    print(f"{args.count} schemas, {differ} differ ({labelled} labelled D11)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
