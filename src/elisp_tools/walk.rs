//! The walk over the forms that finds tool definitions, following
//! variables, loops and mapping functions.

use lexpr::Value as Sexp;

use crate::elisp_source::{Form, Kind, Prefix};

use super::*;

impl<'s> Analyzer<'s> {
    // ----------------------------------------------------------- the walk

    /// Look for `#.` in quoted data.
    pub(super) fn scan_read_eval(&mut self, f: &Form, depth: usize) {
        if depth > crate::elisp_source::MAX_DEPTH {
            return;
        }
        match &f.kind {
            Kind::Prefixed(Prefix::ReadEval, _) => {
                self.read_eval(f);
            }
            Kind::Prefixed(_, x) => self.scan_read_eval(x, depth + 1),
            Kind::List(items, tail) => {
                for x in items {
                    self.scan_read_eval(x, depth + 1);
                }
                if let Some(t) = tail {
                    self.scan_read_eval(t, depth + 1);
                }
            }
            Kind::Vector(items) => {
                for x in items {
                    self.scan_read_eval(x, depth + 1);
                }
            }
            _ => {}
        }
    }

    pub(super) fn walk(&mut self, f: &'s Form, scope: &mut Scope, depth: usize) {
        if depth > crate::elisp_source::MAX_DEPTH || self.over_budget {
            return;
        }
        match &f.kind {
            Kind::Prefixed(Prefix::ReadEval, _) => {
                self.read_eval(f);
            }
            Kind::Prefixed(Prefix::Quote | Prefix::Function, x) => {
                if let Some(("lambda", [arglist, body @ ..])) = x.call() {
                    self.walk_body(arglist, body, None, scope, depth);
                } else {
                    self.scan_read_eval(x, depth + 1);
                }
            }
            Kind::Prefixed(_, x) => self.walk(x, scope, depth + 1),
            Kind::Vector(_) => self.scan_read_eval(f, depth),
            Kind::List(items, _) if !items.is_empty() => self.walk_call(f, items, scope, depth),
            _ => {}
        }
    }

    pub(super) fn walk_all(&mut self, forms: &'s [Form], scope: &mut Scope, depth: usize) {
        for x in forms {
            self.walk(x, scope, depth + 1);
        }
    }

    /// Walk a function body, its parameters bound to what is known of
    /// them: `first` for the first one (a loop's element), else nothing.
    pub(super) fn walk_body(
        &mut self,
        arglist: &'s Form,
        body: &'s [Form],
        first: Option<Node>,
        scope: &mut Scope,
        depth: usize,
    ) {
        let names = params(arglist);
        let mark = scope.len();
        let mut first = first;
        for (i, p) in names.iter().enumerate() {
            let v = match (first.take(), i) {
                (Some(v), 0) => v,
                _ => Node::unknown(arglist.start, format!("the argument `{p}'")),
            };
            scope.push((p.to_string(), v));
        }
        self.walk_all(body, scope, depth);
        scope.truncate(mark);
    }

    /// Walk `body` once per element of `seq`, `var` bound to it.
    pub(super) fn walk_loop(&mut self, var: &str, seq: &'s Form, body: &'s [Form], scope: &mut Scope, depth: usize) {
        self.walk(seq, scope, depth + 1);
        if !mentions_maker(body) {
            scope.push((var.to_string(), Node::unknown(seq.start, format!("an element of {}", short(seq)))));
            self.walk_all(body, scope, depth);
            scope.pop();
            return;
        }
        // The elements become tool specs: evaluated as a tool's parts.
        self.in_tool += 1;
        let value = self.eval(seq, scope, depth + 1);
        self.in_tool -= 1;
        let elements = match value.v {
            V::List { items, open: false } | V::Vector(items) => Ok(items),
            V::Atom(Sexp::Null) => Ok(Vec::new()),
            V::Unknown(Some(w)) => Err(format!("an element of {w}")),
            _ => Err(format!("an element of {}", short(seq))),
        };
        match elements {
            Ok(items) => {
                for item in items {
                    if !self.spend() {
                        return;
                    }
                    scope.push((var.to_string(), item));
                    self.walk_all(body, scope, depth);
                    scope.pop();
                }
            }
            Err(what) => {
                scope.push((var.to_string(), Node { at: seq.start, v: V::Unknown(Some(what)) }));
                self.walk_all(body, scope, depth);
                scope.pop();
            }
        }
    }

    /// The variable and body of the function a mapping function calls:
    /// `(lambda (VAR) BODY...)`, `#'(lambda ...)` or `#'FN` defined in the
    /// file.
    /// The function's name is returned for a function of the file (whose
    /// body is walked anyway as a `defun`), None for a lambda.
    pub(super) fn mapped(&self, fun: &'s Form) -> Option<(&'s Form, &'s [Form], Option<&'s str>)> {
        let lambda = match fun.prefixed() {
            Some((Prefix::Function | Prefix::Quote, x)) => x,
            _ => fun,
        };
        if let Some(("lambda", [arglist, body @ ..])) = lambda.call() {
            return Some((arglist, body, None));
        }
        let name = lambda.symbol()?;
        let def = self.defuns.get(name)?;
        match def.call()? {
            (_, [_, arglist, body @ ..]) => Some((arglist, body, Some(name))),
            _ => None,
        }
    }

    pub(super) fn walk_call(&mut self, f: &'s Form, items: &'s [Form], scope: &mut Scope, depth: usize) {
        let Some(head) = items[0].symbol() else {
            self.walk_all(items, scope, depth);
            return;
        };
        let args = &items[1..];
        match head {
            "gptel-make-tool" | "llm-make-tool" => {
                let maker = if head == "gptel-make-tool" { "gptel-make-tool" } else { "llm-make-tool" };
                self.tool_call(f, maker, args, scope, depth);
            }
            "apply" if args.len() >= 2 && is_maker(&args[0]).is_some() => {
                self.tool_apply(f, is_maker(&args[0]).unwrap_or("gptel-make-tool"), &args[1..], scope, depth);
            }
            "funcall" if !args.is_empty() && is_maker(&args[0]).is_some() => {
                self.tool_call(f, is_maker(&args[0]).unwrap_or("gptel-make-tool"), &args[1..], scope, depth);
            }
            "quote" => {
                if let Some(x) = args.first() {
                    self.scan_read_eval(x, depth + 1);
                }
            }
            "dolist" | "cl-dolist" | "seq-doseq" | "dolist-with-progress-reporter" if !args.is_empty() => {
                match args[0].list() {
                    Some([var, seq, ..]) if var.symbol().is_some() => {
                        let body = if head == "dolist-with-progress-reporter" {
                            args.get(2..).unwrap_or(&[])
                        } else {
                            &args[1..]
                        };
                        let var = var.symbol().unwrap_or_default();
                        self.walk_loop(var, seq, body, scope, depth);
                    }
                    _ => self.walk_all(args, scope, depth),
                }
            }
            "mapc" | "mapcar" | "mapcan" | "mapconcat" | "seq-do" | "seq-map" | "seq-each" | "cl-mapc"
            | "cl-mapcar" | "-map" | "-each" | "mapcar*"
                if args.len() >= 2 =>
            {
                let (fun, seq) = if head == "-each" { (&args[1], &args[0]) } else { (&args[0], &args[1]) };
                if let Some(("apply-partially", [a, m, ..])) = fun.call() {
                    if a.prefixed().and_then(|(_, x)| x.symbol()) == Some("apply") && is_maker(m).is_some() {
                        // (mapcar (apply-partially #'apply #'gptel-make-tool) specs)
                        self.walk(seq, scope, depth + 1);
                        self.in_tool += 1;
                        let value = self.eval(seq, scope, depth + 1);
                        self.in_tool -= 1;
                        let maker = is_maker(m).unwrap_or("gptel-make-tool");
                        match value.v {
                            V::List { items, open: false } => {
                                for item in items {
                                    if !self.spend() {
                                        return;
                                    }
                                    self.apply_spec(f, maker, Vec::new(), item);
                                }
                            }
                            _ => self.apply_spec(f, maker, Vec::new(), value),
                        }
                        return;
                    }
                }
                match self.mapped(fun) {
                    Some((arglist, body, named)) => {
                        let var = params(arglist).first().map(|s| s.to_string());
                        match (var, named) {
                            (Some(var), None) => self.walk_loop(&var, seq, body, scope, depth),
                            // A function of the file: its body says more
                            // than its own walk only for elements known
                            // here, and it is not walked into itself.
                            (Some(var), Some(name)) if !self.inlining.contains(&name) && mentions_maker(body) => {
                                self.walk(seq, scope, depth + 1);
                                self.in_tool += 1;
                                let value = self.eval(seq, scope, depth + 1);
                                self.in_tool -= 1;
                                if let V::List { items, open: false } = value.v {
                                    self.inlining.push(name);
                                    let mut inner: Scope = Vec::new();
                                    for item in items {
                                        if !self.spend() {
                                            break;
                                        }
                                        inner.push((var.clone(), item));
                                        self.walk_all(body, &mut inner, depth);
                                        inner.pop();
                                    }
                                    self.inlining.pop();
                                }
                            }
                            _ => self.walk_all(args, scope, depth),
                        }
                    }
                    None => self.walk_all(args, scope, depth),
                }
            }
            "cl-loop" | "loop" => {
                // (cl-loop for VAR in SEQ do BODY...)
                if let ([f, var, i, seq, ..], Some(d)) = (args, args.iter().position(|a| a.symbol() == Some("do"))) {
                    if let (Some("for"), Some(var), Some("in")) = (f.symbol(), var.symbol(), i.symbol()) {
                        self.walk_loop(var, seq, &args[d + 1..], scope, depth);
                        return;
                    }
                }
                self.walk_all(args, scope, depth);
            }
            "let" | "let*" if !args.is_empty() => {
                let mark = scope.len();
                let mut bound: Vec<(String, Node)> = Vec::new();
                for b in args[0].list().unwrap_or(&[]) {
                    let (name, value) = match (b.symbol(), b.list()) {
                        (Some(n), _) => (n, Node::atom(b.start, Sexp::Null)),
                        (None, Some([n, v, ..])) if n.symbol().is_some() => {
                            self.walk(v, scope, depth + 1);
                            (n.symbol().unwrap_or_default(), self.eval(v, scope, depth + 1))
                        }
                        (None, Some([n])) if n.symbol().is_some() => {
                            (n.symbol().unwrap_or_default(), Node::atom(b.start, Sexp::Null))
                        }
                        _ => continue,
                    };
                    if head == "let*" {
                        scope.push((name.to_string(), value));
                    } else {
                        bound.push((name.to_string(), value));
                    }
                }
                scope.extend(bound);
                self.walk_all(&args[1..], scope, depth);
                scope.truncate(mark);
            }
            "defun" | "defmacro" | "defsubst" | "cl-defun" | "cl-defmacro" | "cl-defsubst" | "define-inline"
                if args.len() >= 2 =>
            {
                self.walk_body(&args[1], &args[2..], None, scope, depth);
            }
            "cl-defmethod" if args.len() >= 2 => {
                let i = args.iter().skip(1).position(|a| a.list().is_some()).map_or(1, |p| p + 1);
                self.walk_body(&args[i], args.get(i + 1..).unwrap_or(&[]), None, scope, depth);
            }
            "lambda" if !args.is_empty() => self.walk_body(&args[0], &args[1..], None, scope, depth),
            _ => self.walk_all(args, scope, depth),
        }
    }

    // ------------------------------------------------------ tool definitions

    pub(super) fn add_found(&mut self, at: usize, maker: &'static str, node: Node, unknown: Option<Option<String>>) {
        let mut key = vec![node.at];
        if let V::List { items, .. } = &node.v {
            key.extend(items.iter().map(|n| n.at));
        }
        if self.found_keys.insert((at, key)) && self.spend() {
            self.found.push(Found { at, maker, node, unknown });
        }
    }

    /// `(gptel-make-tool :key VALUE ...)`.
    pub(super) fn tool_call(
        &mut self,
        f: &'s Form,
        maker: &'static str,
        args: &'s [Form],
        scope: &mut Scope,
        depth: usize,
    ) {
        self.in_tool += 1;
        let mut items = Vec::new();
        let mut i = 0;
        while i < args.len() {
            let key = &args[i];
            if let Some(k) = key.keyword() {
                items.push(Node::atom(key.start, Sexp::keyword(k)));
                if let Some(v) = args.get(i + 1) {
                    self.walk(v, scope, depth + 1);
                    items.push(self.eval(v, scope, depth + 1));
                }
                i += 2;
            } else {
                items.push(self.eval(key, scope, depth + 1));
                i += 1;
            }
        }
        self.in_tool -= 1;
        self.add_found(f.start, maker, Node { at: f.start, v: V::List { items, open: false } }, None);
    }

    /// `(apply #'gptel-make-tool [:key VALUE...] SPEC)`.
    pub(super) fn tool_apply(
        &mut self,
        f: &'s Form,
        maker: &'static str,
        args: &'s [Form],
        scope: &mut Scope,
        depth: usize,
    ) {
        let (last, leading) = args.split_last().expect("apply has arguments");
        self.in_tool += 1;
        let lead: Vec<Node> = leading
            .iter()
            .map(|a| {
                self.walk(a, scope, depth + 1);
                self.eval(a, scope, depth + 1)
            })
            .collect();
        self.walk(last, scope, depth + 1);
        let spec = self.eval(last, scope, depth + 1);
        self.in_tool -= 1;
        self.apply_spec(f, maker, lead, spec);
    }

    pub(super) fn apply_spec(&mut self, f: &Form, maker: &'static str, lead: Vec<Node>, spec: Node) {
        let at = if lead.is_empty() { spec.at } else { f.start };
        let mut items = lead;
        let mut open = false;
        match spec.v {
            V::List { items: s, open: o } => {
                items.extend(s);
                open = o;
            }
            V::Atom(Sexp::Null) => {}
            V::Unknown(why) if items.is_empty() => {
                self.add_found(
                    f.start,
                    maker,
                    Node { at: spec.at, v: V::List { items: Vec::new(), open: true } },
                    Some(why),
                );
                return;
            }
            _ => open = true,
        }
        self.add_found(f.start, maker, Node { at, v: V::List { items, open } }, None);
    }
}
