//! Module functions for the formats that say how a tool runs (Gloodata,
//! SkyDeck) and for tool result envelopes.  Values cross as in
//! [`crate::module`], whose opening comment says which way each result
//! takes back to Lisp.

use emacs::{defun, Env, Value};

use crate::model::Tool;
use crate::module::{guard, opt_text, printed_tools, text};

/// The JSON text (indented when PRETTY) of the document `write` makes of
/// the tools in printed plist TOOLS.
fn tools_document<'e>(
    env: &'e Env,
    tools: Value<'e>,
    pretty: Value<'e>,
    write: impl FnOnce(&[Tool]) -> crate::Result<crate::value::Value>,
) -> emacs::Result<Value<'e>> {
    let pretty = pretty.is_not_nil();
    guard(env, || Ok(crate::write::to_text(&write(&printed_tools(tools)?)?, pretty)))
}

/// Write the tools in printed plist TEXT as one Gloodata extension info
/// document.  NS, TITLE and DESCRIPTION (strings or nil) override what
/// the tools carry; PRETTY indents.
#[defun]
fn gloodata_info<'e>(
    env: &'e Env,
    tools: Value<'e>,
    ns: Value<'e>,
    title: Value<'e>,
    description: Value<'e>,
    pretty: Value<'e>,
) -> emacs::Result<Value<'e>> {
    let (ns, title, description) = (opt_text(ns), opt_text(title), opt_text(description));
    tools_document(env, tools, pretty, |tools| {
        let opts = crate::gloodata::InfoOptions {
            ns: ns.as_deref(),
            title: title.as_deref(),
            description: description.as_deref(),
        };
        crate::gloodata::write_info(tools, &opts)
    })
}

/// Turn BODY, what a Gloodata extension answered, into text for the
/// model: elisp text `(:text TEXT :error BOOL)`.
#[defun]
fn gloodata_result<'e>(env: &'e Env, body: Value<'e>) -> emacs::Result<Value<'e>> {
    guard(env, || {
        let r = crate::gloodata::render_result(&text(body, "the answer")?);
        Ok(crate::emit::elisp_text(|t| r.emit(t)))
    })
}

/// The SkyDeck document of the prompt tool in printed plist TEXT (an
/// array of documents for a list of several tools).
#[defun]
fn skydeck_document<'e>(env: &'e Env, tools: Value<'e>, pretty: Value<'e>) -> emacs::Result<Value<'e>> {
    tools_document(env, tools, pretty, crate::skydeck::write_many)
}

/// A result envelope as JSON text.  OUTPUT is the printed `output` member
/// as a plist (nil for a void result); ID and FINISHED-AT are strings or
/// nil (a new id, now).
#[defun]
fn result_envelope<'e>(
    env: &'e Env,
    output: Value<'e>,
    id: Value<'e>,
    finished_at: Value<'e>,
) -> emacs::Result<Value<'e>> {
    let (id, finished_at) = (opt_text(id), opt_text(finished_at));
    guard(env, || {
        let s = text(output, "the printed outcome")?;
        let env = crate::envelope::make_from_printed(&s, id.as_deref(), finished_at.as_deref())?;
        Ok(crate::write::to_text(&env, false))
    })
}

/// Validate envelope JSON TEXT and read it: elisp text `(:text TEXT
/// :success BOOL :kind KIND :invocation-id ID :log DEV :user MSG :url URL)`.
#[defun]
fn result_read<'e>(env: &'e Env, json: Value<'e>) -> emacs::Result<Value<'e>> {
    guard(env, || {
        let r = crate::envelope::read_text(&text(json, "the envelope")?)?;
        Ok(crate::emit::elisp_text(|t| r.emit(t)))
    })
}
