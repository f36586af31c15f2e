"""The providers' own validators, applied to one tool of one dialect.

Each check returns a list of refusals, (validator, class, message):
validator names the judge (a provider's SDK model, its documented rule),
class is the kind of refusal with the tool's particulars left out (for
counting), message is what the validator said, with the JSON path.

Judges, all from the providers' own packages or documentation
(shared/reference/formats.md section 7):
  genai.FunctionDeclaration  google-genai's pydantic model (extra fields
                             forbidden, a type list refused): Gemini
  botocore.Converse          botocore's ParamValidator against the
                             bedrock-runtime Converse input shape
  mcp.Tool                   the mcp SDK's Tool model
  openai.sdk                 the openai SDK's TypedDicts for a tool
                             (shape and unknown keys)
  openai.strict              OpenAI's structured-outputs rules
  agents.ensure_strict       openai-agents' ensure_strict_json_schema
                             must leave strict output as it is
  jsonschema.2020-12         Draft 2020-12 meta-validation, and local
                             $refs that resolve
  anthropic.input_schema     an object schema (type "object")
  name.PROVIDER              the provider's tool-name rule
"""

import copy
import re

import botocore.session
import botocore.validate
import jsonschema
from agents.strict_schema import ensure_strict_json_schema
from google.genai import types as genai_types
from mcp import types as mcp_types
from openai.types.chat import ChatCompletionFunctionToolParam
from openai.types.responses import FunctionToolParam
from openai.types.shared_params import FunctionDefinition
from pydantic import TypeAdapter, ValidationError

# --- names ------------------------------------------------------------------

NAME_RULES = {
    # rule: (characters, first character, longest, as the provider says it)
    # OpenAI (chat and Responses), Anthropic, Bedrock.
    "openai": ("A-Za-z0-9_-", "A-Za-z0-9_-", 64, "^[a-zA-Z0-9_-]{1,64}$"),
    # Gemini: letters, digits, _ . : -, at most 64, first a letter or _.
    "gemini": ("A-Za-z0-9_.:-", "A-Za-z_", 64,
               "letters, digits, _ . : -, at most 64, starting with a letter or _"),
    # MCP 2025-11-25: 1 to 128 of A-Z a-z 0-9 _ - .
    "mcp": ("A-Za-z0-9_.-", "A-Za-z0-9_.-", 128, "1-128 of A-Za-z0-9_-."),
}


def check_name(rule, provider, name):
    chars, first, longest, text = NAME_RULES[rule]
    v = f"name.{provider}"
    if not isinstance(name, str):
        return [(v, "name not a string", f"name {name!r} is not a string")]
    if not name:
        return [(v, "name empty", f"name is empty; must match {text}")]
    out = []
    bad = sorted({c for c in name if not re.fullmatch(f"[{chars}]", c)})
    if bad:
        out.append((v, "name has " + " ".join(repr(c) for c in bad),
                    f"name {name!r} does not match {text}"))
    elif not re.fullmatch(f"[{first}]", name[0]):
        out.append((v, f"name starts with {name[0]!r}", f"name {name!r} does not match {text}"))
    if len(name) > longest:
        out.append((v, f"name over {longest} chars", f"name {name!r} has {len(name)} characters; must match {text}"))
    return out


# --- JSON Schema walking ---------------------------------------------------

SUB_ONE = ("items", "additionalProperties", "not", "if", "then", "else", "contains",
           "propertyNames", "unevaluatedItems", "unevaluatedProperties", "additionalItems",
           "contentSchema")
SUB_LIST = ("anyOf", "oneOf", "allOf", "prefixItems", "items")
SUB_MAP = ("properties", "$defs", "definitions", "patternProperties", "dependentSchemas")


def subschemas(schema, path):
    """(child, path, nests) for each subschema of SCHEMA; nests: a level of nesting."""
    for k in SUB_ONE:
        v = schema.get(k)
        if isinstance(v, dict):
            yield v, path + (k,), k in ("items", "additionalProperties")
    for k in SUB_LIST:
        v = schema.get(k)
        if isinstance(v, list):
            for i, x in enumerate(v):
                if isinstance(x, dict):
                    yield x, path + (k, i), k in ("items", "prefixItems")
    for k in SUB_MAP:
        v = schema.get(k)
        if isinstance(v, dict):
            for name, x in v.items():
                if isinstance(x, dict):
                    yield x, path + (k, name), k == "properties"


def walk(schema, path=(), depth=1):
    """Every schema dict under SCHEMA: (schema, path, depth)."""
    stack = [(schema, path, depth)]
    while stack:
        s, p, d = stack.pop()
        yield s, p, d
        for child, cp, nests in subschemas(s, p):
            stack.append((child, cp, d + 1 if nests else d))


def where(path):
    return "/" + "/".join(str(x) for x in path) if path else "(root)"


def is_object(s):
    t = s.get("type")
    return t == "object" or (isinstance(t, list) and "object" in t) or \
        (t is None and isinstance(s.get("properties"), dict))


# --- JSON Schema 2020-12 ------------------------------------------------------

META = jsonschema.Draft202012Validator(jsonschema.Draft202012Validator.META_SCHEMA)


def resolve_pointer(root, ref):
    from urllib.parse import unquote
    frag = unquote(ref[1:])
    if frag == "":
        return True
    if not frag.startswith("/"):
        # An anchor: look for a matching $anchor.
        return any(s.get("$anchor") == frag for s, _, _ in walk(root))
    node = root
    for part in frag.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def check_json_schema(schema, label="schema"):
    out = []
    if not isinstance(schema, (dict, bool)):
        return [("jsonschema.2020-12", "schema not an object",
                 f"{label} is {type(schema).__name__}, not a schema")]
    errs = sorted(META.iter_errors(schema), key=lambda e: list(e.absolute_path))
    for e in errs[:5]:
        kw = e.validator
        out.append(("jsonschema.2020-12", f"meta-schema: {kw}",
                    f"{label} at {where(tuple(e.absolute_path))}: {e.message[:300]}"))
    if isinstance(schema, dict) and not errs:
        for s, p, _ in walk(schema):
            ref = s.get("$ref")
            if isinstance(ref, str):
                if ref.startswith("#"):
                    if not resolve_pointer(schema, ref):
                        out.append(("jsonschema.2020-12", "$ref does not resolve",
                                    f"{label} at {where(p)}: $ref {ref!r} points nowhere in the schema"))
                else:
                    out.append(("jsonschema.2020-12", "$ref not local",
                                f"{label} at {where(p)}: $ref {ref!r} is outside the schema"))
    return out


def check_object_schema(schema, validator, label):
    if isinstance(schema, dict) and schema.get("type") == "object":
        return []
    t = schema.get("type") if isinstance(schema, dict) else type(schema).__name__
    return [(validator, "not an object schema",
             f"{label} must be an object schema (type \"object\"), has type {t!r}")]


# --- OpenAI -------------------------------------------------------------------

CHAT_TOOL = TypeAdapter(ChatCompletionFunctionToolParam)
RESPONSES_TOOL = TypeAdapter(FunctionToolParam)


def typed_dict_keys(td):
    keys = set()
    for klass in td.__mro__:
        keys |= set(getattr(klass, "__annotations__", {}))
    return keys


def check_typed_dict(adapter, td, value, label, nested=None):
    out = []
    try:
        adapter.validate_python(value, strict=True)
    except ValidationError as e:
        for err in e.errors()[:5]:
            out.append(("openai.sdk", f"{err['type']}: {'.'.join(str(x) for x in err['loc'][-1:])}",
                        f"{label}.{'.'.join(str(x) for x in err['loc'])}: {err['msg']}"))
    if isinstance(value, dict):
        for k in value:
            if k not in typed_dict_keys(td):
                out.append(("openai.sdk", f"unknown key {k}", f"{label}: key {k!r} is not a field of {td.__name__}"))
        if nested:
            key, ntd = nested
            if isinstance(value.get(key), dict):
                for k in value[key]:
                    if k not in typed_dict_keys(ntd):
                        out.append(("openai.sdk", f"unknown key {key}.{k}",
                                    f"{label}.{key}: key {k!r} is not a field of {ntd.__name__}"))
    return out


def check_openai_strict(params):
    """OpenAI structured outputs (strict: true): the documented rules."""
    v = "openai.strict"
    out = []
    if not isinstance(params, dict):
        return [(v, "parameters not an object", "parameters must be an object schema")]
    if params.get("type") != "object":
        out.append((v, "root not type object", f"the root schema must be type \"object\", has {params.get('type')!r}"))
    if "anyOf" in params:
        out.append((v, "root anyOf", "the root schema must not be anyOf"))
    props = enums = chars = 0
    deepest = 0
    for s, p, d in walk(params):
        deepest = max(deepest, d)
        if "default" in s:
            out.append((v, "'default' is not permitted",
                        f"In context={p!r}, 'default' is not permitted"))
        if is_object(s):
            if s.get("additionalProperties") is not False:
                out.append((v, "additionalProperties not false",
                            f"In context={p!r}, 'additionalProperties' is required to be supplied and to be false"))
            names = list(s.get("properties") or {}) if isinstance(s.get("properties"), dict) else []
            req = s.get("required")
            missing = [n for n in names if not isinstance(req, list) or n not in req]
            if missing:
                out.append((v, "required lacks properties",
                            f"In context={p!r}, 'required' is required to be supplied and to be an array "
                            f"including every key in properties. Missing {missing[:5]!r}"))
        if isinstance(s.get("properties"), dict):
            props += len(s["properties"])
            chars += sum(len(k) for k in s["properties"])
        for defs in ("$defs", "definitions"):
            if isinstance(s.get(defs), dict):
                chars += sum(len(k) for k in s[defs])
        if isinstance(s.get("enum"), list):
            e = s["enum"]
            enums += len(e)
            n = sum(len(x) for x in e if isinstance(x, str))
            chars += n
            if len(e) > 250 and all(isinstance(x, str) for x in e) and n > 15000:
                out.append((v, "enum over 250 strings > 15,000 chars",
                            f"In context={p!r}, an enum of {len(e)} strings has {n} characters (at most 15,000)"))
    if deepest > 10:
        out.append((v, "nesting > 10 levels", f"the schema nests {deepest} levels (at most 10)"))
    if props > 5000:
        out.append((v, "properties > 5,000", f"{props} properties (at most 5,000)"))
    if enums > 1000:
        out.append((v, "enum values > 1,000", f"{enums} enum values (at most 1,000)"))
    if chars > 120000:
        out.append((v, "names+enums > 120,000 chars", f"{chars} characters of names and enum values (at most 120,000)"))
    return out


def semantic_diff(a, b, path=()):
    """First difference between A and B, key order ignored, `required' as a set."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in list(a) + [k for k in b if k not in a]:
            if k not in b:
                return f"{where(path)}: {k!r} dropped"
            if k not in a:
                return f"{where(path)}: {k!r} added ({str(b[k])[:80]})"
            if k == "required" and isinstance(a[k], list) and isinstance(b[k], list):
                if sorted(map(str, a[k])) != sorted(map(str, b[k])):
                    return f"{where(path + (k,))}: {a[k]!r} became {b[k]!r}"
                continue
            d = semantic_diff(a[k], b[k], path + (k,))
            if d:
                return d
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{where(path)}: {len(a)} items became {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            d = semantic_diff(x, y, path + (i,))
            if d:
                return d
        return None
    if type(a) is not type(b) or a != b:
        return f"{where(path)}: {str(a)[:80]} became {str(b)[:80]}"
    return None


def check_agents_identity(params):
    v = "agents.ensure_strict"
    if not isinstance(params, dict):
        return [(v, "not a dict", "parameters is not an object")]
    try:
        strict = ensure_strict_json_schema(copy.deepcopy(params))
    except Exception as e:  # UserError, TypeError: the SDK refuses the schema
        return [(v, f"refused: {type(e).__name__}", f"ensure_strict_json_schema refused: {str(e)[:300]}")]
    d = semantic_diff(params, strict)
    if d:
        path, what = d.split(": ", 1)
        if " became " in what:
            cls = f"changed {path.rsplit('/', 1)[-1]!r}"
        else:
            cls = re.sub(r" \(.*\)$", "", what)
        return [(v, f"changed: {cls}", f"ensure_strict_json_schema changed the schema: {d}")]
    return []


def openai_function_checks(fn, label, strict_expected):
    """The function object of an OpenAI chat or Responses tool."""
    out = check_name("openai", "openai", fn.get("name"))
    params = fn.get("parameters")
    if params is not None:
        out += check_json_schema(params, f"{label}.parameters")
    strict = fn.get("strict") is True
    if strict_expected and not strict:
        out.append(("openai.strict", "strict not true", f"{label}.strict is {fn.get('strict')!r}, not true"))
    if strict:
        out += check_openai_strict(params)
        out += check_agents_identity(params)
    return out


def check_openai_chat(tool, strict_expected=False):
    out = check_typed_dict(CHAT_TOOL, ChatCompletionFunctionToolParam, tool, "tool",
                           nested=("function", FunctionDefinition))
    fn = tool.get("function") if isinstance(tool, dict) else None
    if isinstance(fn, dict):
        out += openai_function_checks(fn, "function", strict_expected)
    return out


def check_openai_responses(tool):
    out = check_typed_dict(RESPONSES_TOOL, FunctionToolParam, tool, "tool")
    if isinstance(tool, dict):
        out += openai_function_checks(tool, "tool", False)
    return out


def check_ollama(tool):
    # Ollama's tools are OpenAI chat's shape, with no documented name rule.
    out = []
    if not (isinstance(tool, dict) and tool.get("type") == "function" and isinstance(tool.get("function"), dict)):
        return [("openai.sdk", "not a function tool", "not {\"type\": \"function\", \"function\": {...}}")]
    fn = tool["function"]
    if not isinstance(fn.get("name"), str) or not fn["name"]:
        out.append(("name.ollama", "name missing", "function.name is not a non-empty string"))
    if "parameters" in fn:
        out += check_json_schema(fn["parameters"], "function.parameters")
    return out


# --- Anthropic --------------------------------------------------------------

ANTHROPIC_KEYS = {"name", "description", "input_schema", "cache_control", "type", "strict",
                  "input_examples", "defer_loading", "allowed_callers", "eager_input_streaming"}


def check_anthropic(tool):
    out = check_name("openai", "anthropic", tool.get("name"))
    for k in tool:
        if k not in ANTHROPIC_KEYS:
            out.append(("anthropic.input_schema", f"unknown key {k}", f"tool key {k!r} is not a field of Anthropic's tool"))
    schema = tool.get("input_schema")
    if schema is None:
        return out + [("anthropic.input_schema", "input_schema missing", "input_schema is required")]
    out += check_object_schema(schema, "anthropic.input_schema", "input_schema")
    out += check_json_schema(schema, "input_schema")
    return out


# --- Gemini -----------------------------------------------------------------

def pydantic_refusals(validator, e, label):
    out = []
    if isinstance(e, ValidationError):
        for err in e.errors()[:5]:
            loc = [str(x) for x in err["loc"]]
            last = loc[-1] if loc else ""
            out.append((validator, f"{err['type']}: {last}", f"{label}.{'.'.join(loc)}: {err['msg']}"))
    else:
        out.append((validator, f"{type(e).__name__}: {str(e)[:60]}", f"{label}: {type(e).__name__}: {str(e)[:300]}"))
    return out


def check_gemini(decl):
    out = check_name("gemini", "gemini", decl.get("name") if isinstance(decl, dict) else None)
    try:
        genai_types.FunctionDeclaration.model_validate(decl)
    except Exception as e:  # ValidationError, or what the model's validators raise
        out += pydantic_refusals("genai.FunctionDeclaration", e, "functionDeclaration")
    if isinstance(decl, dict):
        # Full JSON Schema goes in parametersJsonSchema, exclusive of parameters.
        if decl.get("parameters") is not None and decl.get("parametersJsonSchema") is not None:
            out.append(("genai.FunctionDeclaration", "parameters and parametersJsonSchema",
                        "parameters and parametersJsonSchema are mutually exclusive"))
        if decl.get("parametersJsonSchema") is not None:
            out += check_json_schema(decl["parametersJsonSchema"], "parametersJsonSchema")
    return out


# --- Bedrock ----------------------------------------------------------------

_CONVERSE = botocore.session.get_session().get_service_model("bedrock-runtime").operation_model("Converse")
_PARAMS = botocore.validate.ParamValidator()


def check_bedrock(tool):
    out = []
    report = _PARAMS.validate({"modelId": "m", "messages": [], "toolConfig": {"tools": [tool]}},
                              _CONVERSE.input_shape)
    if report.has_errors():
        for line in report.generate_report().splitlines():
            line = line.strip()
            if not line or line.startswith("Parameter validation failed"):
                continue
            cls = re.sub(r"toolConfig\.tools\[0\]\.", "", line)
            cls = re.sub(r"value: .*$|: \".*\"|, valid .*$|\[[0-9]+\]", "", cls)
            cls = re.sub(r"Unknown parameter in (\S+).*", r"Unknown parameter in \1", cls)
            out.append(("botocore.Converse", cls[:100], line[:300]))
    spec = tool.get("toolSpec") if isinstance(tool, dict) else None
    if isinstance(spec, dict):
        out += check_name("openai", "bedrock", spec.get("name"))
        js = spec.get("inputSchema", {}).get("json") if isinstance(spec.get("inputSchema"), dict) else None
        if js is not None:
            out += check_object_schema(js, "botocore.Converse", "inputSchema.json")
            out += check_json_schema(js, "inputSchema.json")
    return out


# --- MCP ----------------------------------------------------------------------

def check_mcp(tool):
    out = check_name("mcp", "mcp", tool.get("name") if isinstance(tool, dict) else None)
    try:
        mcp_types.Tool.model_validate(tool)
    except Exception as e:
        out += pydantic_refusals("mcp.Tool", e, "tool")
    if isinstance(tool, dict):
        for key in ("inputSchema", "outputSchema"):
            if key in tool:
                out += check_object_schema(tool[key], "mcp.Tool", key)
                out += check_json_schema(tool[key], key)
    return out


def check_json_schema_tool(schema):
    return check_json_schema(schema, "schema")


# --- dialects -----------------------------------------------------------------

def split(dialect, doc):
    """The tools of a document written in DIALECT."""
    if dialect in ("mcp", "bedrock"):
        return doc["tools"]
    if dialect == "gemini":
        return doc["functionDeclarations"]
    if dialect == "gptel-gemini":
        return [d for group in doc for d in group["functionDeclarations"]]
    return doc


def name_of(dialect, tool):
    if not isinstance(tool, dict):
        return "?"
    if dialect in ("openai", "openai-strict", "ollama", "gptel-openai"):
        return (tool.get("function") or {}).get("name", "?")
    if dialect == "bedrock":
        return (tool.get("toolSpec") or {}).get("name", "?")
    if dialect == "json-schema":
        return tool.get("title", "?")
    return tool.get("name", "?")


CHECKS = {
    "openai": lambda t: check_openai_chat(t),
    "openai-responses": check_openai_responses,
    "openai-strict": lambda t: check_openai_chat(t, strict_expected=True),
    "anthropic": check_anthropic,
    "gemini": check_gemini,
    "ollama": check_ollama,
    "bedrock": check_bedrock,
    "mcp": check_mcp,
    "json-schema": check_json_schema_tool,
    # What real gptel sends for the plists toolspec registered.
    "gptel-openai": lambda t: check_openai_chat(t),
    "gptel-openai-responses": check_openai_responses,
    "gptel-anthropic": check_anthropic,
    "gptel-gemini": check_gemini,
}


def self_test():
    """Each judge refuses what its provider refuses: else it judges nothing."""
    bad = {
        "genai extra field": check_gemini({"name": "f", "parameters": {"type": "object", "const": 1}}),
        "genai type list": check_gemini({"name": "f", "parameters": {"type": "object", "properties":
                                                                     {"a": {"type": ["string", "null"]}}}}),
        "genai unknown tool key": check_gemini({"name": "f", "strict": True}),
        "genai both schemas": check_gemini({"name": "f", "parameters": {"type": "object"},
                                            "parametersJsonSchema": {"type": "object"}}),
        "botocore unknown key": check_bedrock({"toolSpec": {"name": "f", "description": "d", "x": 1,
                                                            "inputSchema": {"json": {"type": "object"}}}}),
        "botocore empty description": check_bedrock({"toolSpec": {"name": "f", "description": "",
                                                                  "inputSchema": {"json": {"type": "object"}}}}),
        "mcp no inputSchema": check_mcp({"name": "f"}),
        "openai name": check_name("openai", "openai", "math.sum"),
        "gemini name": check_name("gemini", "gemini", "1abc"),
        "mcp name": check_name("mcp", "mcp", "a" * 129),
        "strict default": check_openai_strict({"type": "object", "properties": {"a": {"type": "string", "default": "x"}},
                                               "required": ["a"], "additionalProperties": False}),
        "strict required": check_openai_strict({"type": "object", "properties": {"a": {"type": "string"}},
                                                "additionalProperties": False}),
        "agents identity": check_agents_identity({"type": "object", "properties": {"a": {"type": "string"}}}),
        "meta-schema": check_json_schema({"type": "object", "properties": {"a": {"type": "strin"}}}),
        "dangling ref": check_json_schema({"type": "object", "properties": {"a": {"$ref": "#/$defs/x"}}}),
        "anthropic object": check_anthropic({"name": "f", "input_schema": {"type": "string"}}),
        "openai sdk shape": check_openai_chat({"type": "function", "function": {"name": "f", "x": 1}}),
    }
    good = {
        "gemini": check_gemini({"name": "math.sum", "description": "d", "parameters": {
            "type": "object", "properties": {"a": {"type": "integer", "nullable": True}}, "required": ["a"]}}),
        "bedrock": check_bedrock({"toolSpec": {"name": "f", "description": "d",
                                               "inputSchema": {"json": {"type": "object"}}}}),
        "mcp": check_mcp({"name": "math.sum", "inputSchema": {"type": "object"}}),
        "strict": check_openai_chat({"type": "function", "function": {
            "name": "f", "strict": True, "parameters": {
                "type": "object", "properties": {"a": {"type": ["string", "null"]}},
                "required": ["a"], "additionalProperties": False}}}, strict_expected=True),
        "responses": check_openai_responses({"type": "function", "name": "f", "strict": False,
                                             "parameters": {"type": "object"}}),
    }
    wrong = [k for k, v in bad.items() if not v] + [f"{k}: {v}" for k, v in good.items() if v]
    if wrong:
        raise SystemExit(f"validators: self-test failed (a judge accepts what it must refuse, "
                         f"or refuses what it must accept): {wrong}")
    return len(bad) + len(good)
