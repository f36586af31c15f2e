//! A tool [`Node`] turned into the plist the validator reads, noting the
//! parts known only at run time.

use std::collections::HashMap;

use lexpr::Value as Sexp;

use crate::elisp_source::Form;
use crate::path::Path;

use super::*;

/// A part known only at run time, at `path` of the tool plist.
pub(super) struct Unknown {
    pub(super) path: Path,
    pub(super) at: usize,
    pub(super) what: Option<String>,
    /// A list with an unknown part spliced in (the path is the list's).
    pub(super) splice: bool,
}

/// Turns a tool [`Node`] into the plist the validator reads.
pub(super) struct Convert<'a, 's> {
    pub(super) unknowns: Vec<Unknown>,
    pub(super) defuns: &'a HashMap<&'s str, &'s Form>,
    pub(super) findings: Vec<Finding>,
}

pub(super) const NOT_CHECKED: &str = "toolspec--not-checked";

impl Convert<'_, '_> {
    pub(super) fn tool(&mut self, node: &Node, name: Option<&str>) -> Sexp {
        let V::List { items, open } = &node.v else {
            return self.value(node, &Path::root());
        };
        if *open {
            self.unknowns.push(Unknown { path: Path::root(), at: node.at, what: Some(String::new()), splice: true });
        }
        let mut out = Vec::with_capacity(items.len());
        let mut i = 0;
        while i < items.len() {
            let k = &items[i];
            match (k.keyword(), items.get(i + 1)) {
                (Some("function"), Some(v)) => {
                    if let Some(f) = self.function(v, name) {
                        out.push(Sexp::keyword("function"));
                        out.push(f);
                    }
                    i += 2;
                }
                (Some(key), Some(v)) => {
                    out.push(Sexp::keyword(key));
                    out.push(self.value(v, &Path::root().key(key)));
                    i += 2;
                }
                _ => {
                    out.push(self.value(k, &Path::root().index(i)));
                    i += 1;
                }
            }
        }
        Sexp::list(out)
    }

    /// `:function` described for the validator: `(toolspec-function
    /// CALLABLE MIN MAX NAME)`, or None when nothing can be said.
    pub(super) fn function(&mut self, v: &Node, tool: Option<&str>) -> Option<Sexp> {
        let info = |min: usize, max: Option<usize>, name: &str| {
            Sexp::list(vec![
                Sexp::symbol("toolspec-function"),
                Sexp::symbol("t"),
                Sexp::from(min as u64),
                max.map_or(Sexp::symbol("many"), |m| Sexp::from(m as u64)),
                Sexp::string(name),
            ])
        };
        let named = |n: &str| {
            let def = self.defuns.get(n)?;
            let (_, args) = def.call()?;
            let (min, max) = form_arity(args.get(1)?)?;
            Some(info(min, max, n))
        };
        match &v.v {
            V::Func(Func::Lambda(Some((min, max)), ..)) => Some(info(*min, *max, "")),
            V::Func(Func::Named(n)) => named(n),
            V::Atom(s) if s.is_null() => None,
            V::Atom(s) => match s.as_symbol() {
                Some(n) if n != "t" => named(n),
                _ => Some(Sexp::list(vec![
                    Sexp::symbol("toolspec-function"),
                    Sexp::Null,
                    Sexp::from(0u64),
                    Sexp::from(0u64),
                    Sexp::string(""),
                ])),
            },
            V::List { items, .. } => match items.first().and_then(|h| match &h.v {
                V::Atom(s) => s.as_symbol(),
                _ => None,
            }) {
                Some("lambda") => {
                    let ar = items.get(1).and_then(|a| match &a.v {
                        V::List { items, .. } => arity(items.iter().map(|p| match &p.v {
                            V::Atom(s) => s.as_symbol(),
                            _ => None,
                        })),
                        V::Atom(s) if s.is_null() => Some((0, Some(0))),
                        _ => None,
                    });
                    ar.map(|(min, max)| info(min, max, ""))
                }
                Some("function") => {
                    let f = items.get(1).map_or(String::from("..."), |x| match &x.v {
                        V::Atom(s) => s.to_string(),
                        _ => "(lambda ...)".into(),
                    });
                    self.findings.push(Finding {
                        level: Level::Error,
                        at: v.at,
                        path: Path::root().key("function"),
                        message: format!(
                            "#'{f} inside a quoted list is the list (function {f}), which cannot be called: \
                             write {f} without #' there, or build the spec with (list ... :function #'{f})"
                        ),
                        tool: tool.map(String::from),
                    });
                    None
                }
                _ => None,
            },
            V::Unknown(what) => {
                self.unknowns.push(Unknown {
                    path: Path::root().key("function"),
                    at: v.at,
                    what: what.clone(),
                    splice: false,
                });
                None
            }
            _ => None,
        }
    }

    /// `:description:` (as in gptel's own documentation of the argument
    /// format) is not `:description`: its value is ignored.
    pub(super) fn stray_colon(&mut self, key: &Node, path: &Path) {
        let Some(k) = key.keyword() else { return };
        if let Some(base) = k.strip_suffix(':').filter(|b| !b.is_empty() && !b.ends_with(':')) {
            self.findings.push(Finding {
                level: Level::Warning,
                at: key.at,
                path: path.clone().key(k),
                message: format!(":{k} ends with a colon, so it is not :{base} and is ignored: write :{base}"),
                tool: None,
            });
        }
    }

    pub(super) fn value(&mut self, n: &Node, path: &Path) -> Sexp {
        match &n.v {
            V::Atom(s) => s.clone(),
            V::Func(Func::Named(name)) => Sexp::list(vec![Sexp::symbol("function"), Sexp::symbol(name.as_str())]),
            V::Func(Func::Lambda(..)) => Sexp::list(vec![Sexp::symbol("lambda")]),
            V::Unknown(what) => {
                self.unknowns.push(Unknown { path: path.clone(), at: n.at, what: what.clone(), splice: false });
                Sexp::symbol(NOT_CHECKED)
            }
            V::Vector(items) => Sexp::vector(
                items.iter().enumerate().map(|(i, x)| self.value(x, &path.clone().index(i))).collect::<Vec<_>>(),
            ),
            V::Dotted(items, tail) => {
                let items: Vec<Sexp> =
                    items.iter().enumerate().map(|(i, x)| self.value(x, &path.clone().index(i))).collect();
                let tail = self.value(tail, path);
                Sexp::append(items, tail)
            }
            V::List { items, open } => {
                if *open {
                    self.unknowns.push(Unknown {
                        path: path.clone(),
                        at: n.at,
                        what: Some(String::new()),
                        splice: true,
                    });
                }
                let plist = n.plist_items().is_some();
                let mut out = Vec::with_capacity(items.len());
                for (i, x) in items.iter().enumerate() {
                    let p = if plist {
                        if i % 2 == 0 {
                            self.stray_colon(x, path);
                            out.push(self.value(x, path));
                            continue;
                        }
                        path.clone().key(items[i - 1].keyword().unwrap_or_default())
                    } else {
                        path.clone().index(i)
                    };
                    out.push(self.value(x, &p));
                }
                Sexp::list(out)
            }
        }
    }
}
