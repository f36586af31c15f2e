//! toolspec: LLM tool definitions between JSON formats and the gptel/llm
//! plist format.
//!
//! Data flows one way: a reader turns input (JSON in some format, or a
//! plist printed by Emacs) into the format-neutral [`model::Tool`]; the
//! validator checks plists; a writer turns tools into a JSON dialect or
//! into elisp text.  The `module` modules (private) are the thin Emacs
//! layer over this core.
//!
//! This file only declares the modules and re-exports the names callers
//! use most.  The modules form layers, each using only its own and those
//! below it, with no cycle; `test/layers.rs` holds the table and checks
//! it.  From the bottom:
//!
//! - base: `error`, `alloc`, `par`, `budget`
//! - json: `value`, `path`, `locate`
//! - model: `model`, `scan`, `lenient`, `sink`, `node`, `schema`, `template`
//! - core: `imported`, the readers and writers of each format (`formats`,
//!   `openapi`, `seeds_common`, `arcade`, `gloodata`, `skydeck`, `seeds`,
//!   `read`, `write`), `plist`, `args`, `envelope`, `validate`, `check`,
//!   the elisp analysis (`elisp_source`, `elisp_tools`, `gptel_form`),
//!   `emit`, `convert`
//! - module: `module_lisp`, `module`, `module_seeds` (the Emacs module)

// base
pub mod alloc;
pub mod budget;
pub mod error;
pub mod par;

// json
pub mod locate;
pub mod path;
pub mod value;

// model
pub mod lenient;
pub mod model;
pub mod node;
pub mod scan;
pub mod schema;
pub mod sink;
pub mod template;

// core
pub mod args;
pub mod check;
pub mod convert;
pub mod elisp_source;
pub mod elisp_tools;
pub mod emit;
pub mod envelope;
pub mod formats;
pub mod gptel_form;
pub mod imported;
pub mod openapi;
pub mod plist;
pub mod read;
pub mod validate;
pub mod write;
// Formats that say how a tool runs.
pub mod arcade;
pub mod gloodata;
pub mod seeds;
pub mod seeds_common;
pub mod skydeck;

// module
mod module;
mod module_lisp;
mod module_seeds;

#[global_allocator]
static ALLOCATOR: alloc::Allocator = alloc::Allocator;

pub use alloc::releasing;
pub use convert::{
    elisp_to_json, named_tools_to_json, named_tools_to_texts, parse_json, serialized_plists_to_json,
    serialized_plists_to_texts, serialized_plists_to_texts_beside, tools_from_elisp, validate_elisp, VERSION,
};
pub use emit::{
    emit_imported, emit_problems, emit_streamed_import, emit_streamed_import_until, imported_to_elisp, print_problems,
    validate_tool, validate_tools,
};
pub use error::{Error, ErrorKind, Result};
pub use formats::gemini;
pub use imported::{Format, Imported, ReadOptions};
pub use model::{Arg, Problem, Schema, Severity, Tool};
pub use write::Dialect;
