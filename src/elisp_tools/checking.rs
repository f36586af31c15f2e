//! Checking a tool definition found: its plist as the validator reads
//! it, each problem at its place, and the tool read from it.

use lexpr::Value as Sexp;

use crate::path::Path;
use crate::plist;
use crate::validate;

use super::*;

impl Analyzer<'_> {
    pub(super) fn check(&mut self, t: &Found, out: &mut Analysis) {
        let name = t.node.plist_items().and_then(|items| {
            items.chunks(2).find(|kv| kv[0].keyword() == Some("name")).and_then(|kv| kv[1].string().map(String::from))
        });
        let tool_name = name.as_deref();
        if let Some(why) = &t.unknown {
            if let Some(why) = why {
                self.finding(
                    Level::Note,
                    t.node.at,
                    &Path::root(),
                    format!("not checked: the tool spec is {why}, known only when the code runs"),
                    tool_name,
                );
            }
            out.tools.push(SourceTool {
                at: t.at,
                maker: t.maker,
                function: None,
                emacs: Vec::new(),
                name: None,
                tool: Err(format!(
                    "the tool spec is {}, known only when the code runs",
                    why.as_deref().unwrap_or("computed")
                )),
            });
            return;
        }
        let mut conv = Convert { unknowns: Vec::new(), defuns: &self.defuns, findings: Vec::new() };
        let sexp = conv.tool(&t.node, tool_name);
        let unknowns = conv.unknowns;
        for f in &mut conv.findings {
            if f.tool.is_none() {
                f.tool = name.clone();
            }
        }
        self.findings.append(&mut conv.findings);
        let problems = validate::validate(&sexp);
        // Each problem is matched against each unknown part, and each
        // unknown part against the others: past a bound, one note.
        let work = problems.len().max(unknowns.len()).saturating_mul(unknowns.len().max(1));
        if work > MAX_MATCHING {
            self.finding(
                Level::Note,
                t.node.at,
                &Path::root(),
                format!(
                    "not checked: too large: the tool spec has {} problems and {} parts known only when the code runs, \
                     too many to sort out; fix the first ones, or write the spec out",
                    problems.len(),
                    unknowns.len()
                ),
                tool_name,
            );
        }
        let mut shown = 0;
        for p in problems.iter().take_while(|_| work <= MAX_MATCHING) {
            if suppressed(p, &unknowns) {
                continue;
            }
            shown += 1;
            if shown > MAX_TOOL_FINDINGS {
                let more = problems.len() - MAX_TOOL_FINDINGS;
                let message =
                    format!("{more} more problems of this tool (or fewer, some may be run-time parts) not shown");
                self.finding(Level::Note, t.node.at, &Path::root(), message, tool_name);
                break;
            }
            let at = place(&t.node, p);
            self.finding(p.severity.into(), at, &p.path, p.message.clone(), tool_name);
        }
        drop(problems);
        for u in unknowns.iter().take_while(|_| work <= MAX_MATCHING).take(MAX_TOOL_FINDINGS) {
            if let (Some(what), false) = (&u.what, u.splice) {
                if !is_key(&u.path, "function")
                    && !unknowns.iter().any(|o| !o.splice && o.path != u.path && under(&u.path, &o.path))
                {
                    self.finding(
                        Level::Note,
                        u.at,
                        &u.path,
                        format!("not checked: {what} is known only when the code runs"),
                        tool_name,
                    );
                }
            } else if let (Some(_), true) = (&u.what, u.splice) {
                self.finding(
                    Level::Note,
                    u.at,
                    &u.path,
                    if u.path.is_root() {
                        "not checked: part of the tool spec is known only when the code runs"
                    } else {
                        "not checked: part of this list is known only when the code runs"
                    },
                    tool_name,
                );
            }
        }
        let blocking = unknowns
            .iter()
            .find(|u| !["function", "category", "confirm", "include", "async"].iter().any(|k| is_key(&u.path, k)));
        let tool = match blocking {
            Some(u) => Err(match &u.what {
                Some(w) if !w.is_empty() => format!("{w} is known only when the code runs"),
                _ => format!(
                    "{} cannot be read without running the code",
                    if u.path.is_root() { "the spec".into() } else { format!(":{}", u.path) }
                ),
            }),
            None => {
                let data = strip_function(&sexp);
                let r = plist::tool_from_sexp(&data).map_err(|e| e.to_string());
                plist::dispose(data);
                r
            }
        };
        plist::dispose(sexp);
        let function = t.node.plist_items().and_then(|items| {
            let v = &items.chunks(2).find(|kv| kv[0].keyword() == Some("function"))?[1];
            match &v.v {
                V::Func(Func::Named(n)) => Some(FunctionSource::Named(n.clone())),
                V::Func(Func::Lambda(_, start, end)) => Some(FunctionSource::Lambda(*start, *end)),
                V::Atom(s) => s.as_symbol().filter(|n| *n != "t").map(|n| FunctionSource::Named(n.to_string())),
                _ => None,
            }
        });
        let emacs = t
            .node
            .plist_items()
            .map(|items| {
                items
                    .chunks(2)
                    .filter_map(|kv| match (kv[0].keyword(), &kv[1].v) {
                        (Some(k @ ("async" | "confirm" | "include" | "category")), V::Atom(v)) => {
                            Some((k.to_string(), v.clone()))
                        }
                        _ => None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.tools.push(SourceTool { at: t.at, maker: t.maker, name, tool, function, emacs });
    }
}

/// The tool plist without `:function` (its description for the validator).
pub(super) fn strip_function(tool: &Sexp) -> Sexp {
    match plist::plist_pairs(tool) {
        Some(pairs) => Sexp::list(
            pairs
                .into_iter()
                .filter(|(k, _)| *k != "function")
                .flat_map(|(k, v)| [Sexp::keyword(k), v.clone()])
                .collect::<Vec<_>>(),
        ),
        None => tool.clone(),
    }
}
