//! Module functions for the formats that say how a tool runs (Gloodata,
//! SkyDeck) and for tool result envelopes.  Values cross as text, as in
//! [`crate::module`].

use emacs::{defun, Env, Value};

use crate::error::{Error, ErrorKind};
use crate::module::{guard, opt_text, text};
use crate::plist::{self, print_string};

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
    let pretty = pretty.is_not_nil();
    guard(env, || {
        let s = text(tools, "the printed plist")?;
        let tools = crate::tools_from_elisp(&s)?;
        let opts = crate::gloodata::InfoOptions { ns: ns.as_deref(), title: title.as_deref(), description: description.as_deref() };
        let doc = crate::gloodata::write_info(&tools, &opts)?;
        Ok(crate::write::to_text(&doc, pretty))
    })
}

/// Turn BODY, what a Gloodata extension answered, into text for the
/// model: elisp text `(:text TEXT :error BOOL)`.
#[defun]
fn gloodata_result<'e>(env: &'e Env, body: Value<'e>) -> emacs::Result<Value<'e>> {
    guard(env, || {
        let s = text(body, "the answer")?;
        let r = crate::gloodata::render_result(&s);
        let mut out = String::from("(:text ");
        print_string(&r.text, &mut out);
        out.push_str(if r.error { " :error t)" } else { " :error nil)" });
        Ok(out)
    })
}

/// The SkyDeck document of the prompt tool in printed plist TEXT (an
/// array of documents for a list of several tools).
#[defun]
fn skydeck_document<'e>(env: &'e Env, tools: Value<'e>, pretty: Value<'e>) -> emacs::Result<Value<'e>> {
    let pretty = pretty.is_not_nil();
    guard(env, || {
        let s = text(tools, "the printed plist")?;
        let tools = crate::tools_from_elisp(&s)?;
        let doc = crate::skydeck::write_many(&tools)?;
        Ok(crate::write::to_text(&doc, pretty))
    })
}

/// A result envelope as JSON text.  OUTPUT is the printed `output` member
/// as a plist (nil for a void result); ID and FINISHED-AT are strings or
/// nil (a new id, now).
#[defun]
fn result_envelope<'e>(env: &'e Env, output: Value<'e>, id: Value<'e>, finished_at: Value<'e>) -> emacs::Result<Value<'e>> {
    let (id, finished_at) = (opt_text(id), opt_text(finished_at));
    guard(env, || {
        let s = text(output, "the printed outcome")?;
        let sexp = plist::parse_sexp(&s)?;
        let output = if plist::is_nil(&sexp) {
            None
        } else {
            let pairs = plist::plist_pairs(&sexp).ok_or_else(|| Error::new(ErrorKind::Plist, "the outcome must be a plist"))?;
            let mut m = crate::value::Map::new();
            for (k, v) in pairs {
                m.insert(k.to_string(), plist::sexp_to_json(v, Some(k), k, false)?);
            }
            Some(crate::value::Value::Object(m))
        };
        plist::dispose(sexp);
        let env = crate::envelope::make_from_output(output, id.as_deref(), finished_at.as_deref())?;
        Ok(crate::write::to_text(&env, false))
    })
}

/// Validate envelope JSON TEXT and read it: elisp text `(:text TEXT
/// :success BOOL :kind KIND :invocation-id ID :log DEV :user MSG :url URL)`.
#[defun]
fn result_read<'e>(env: &'e Env, json: Value<'e>) -> emacs::Result<Value<'e>> {
    guard(env, || {
        let s = text(json, "the envelope")?;
        let r = crate::envelope::read_text(&s)?;
        let mut out = String::from("(:text ");
        print_string(&r.text, &mut out);
        out.push_str(if r.success { " :success t" } else { " :success nil" });
        out.push_str(" :kind ");
        out.push_str(r.kind);
        out.push_str(" :invocation-id ");
        print_string(&r.invocation_id, &mut out);
        for (key, v) in [(":log", &r.log), (":user", &r.user), (":url", &r.url)] {
            out.push(' ');
            out.push_str(key);
            out.push(' ');
            match v {
                Some(s) => print_string(s, &mut out),
                None => out.push_str("nil"),
            }
        }
        out.push(')');
        Ok(out)
    })
}
