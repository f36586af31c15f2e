//! Where a problem of the validator is in the source, and whether it
//! comes only from a part known at run time: decided by its code and the
//! steps of its path.

use crate::model::{Code, Problem};
use crate::path::{Path, Step};

use super::*;

/// `path` is `prefix` or below it.
pub(super) fn under(path: &Path, prefix: &Path) -> bool {
    path.is_under(prefix)
}

/// `path` is the one key `key`.
pub(super) fn is_key(path: &Path, key: &str) -> bool {
    matches!(path.steps(), [Step::Key(k)] if k == key)
}

/// A problem the validator found only because part of the spec is known
/// only at run time.
pub(super) fn suppressed(p: &Problem, unknowns: &[Unknown]) -> bool {
    unknowns.iter().any(|u| {
        if u.splice {
            // A list with a part spliced in: what may be in that part is
            // reported missing or unknown in the list.
            return p.path.parent() == u.path
                && matches!(p.code, Code::MissingKey | Code::UnknownRequired | Code::NotPlist)
                || p.path == u.path;
        }
        if !u.path.is_root() && under(&p.path, &u.path) {
            return true;
        }
        let up = u.path.parent();
        match u.path.last_key() {
            Some("type") => {
                ["enum", "items", "properties", "required"].iter().any(|k| under(&p.path, &up.clone().key(*k)))
            }
            Some("properties") => under(&p.path, &up.key("required")),
            Some("async") => is_key(&p.path, "function"),
            _ => (u.path.first_key() == Some("args") && is_key(&p.path, "function")) || u.path.is_root(),
        }
    })
}

/// Where problem `p` of the tool `root` is: the form at its path, the
/// keyword for problems about a key, or the deepest part of the path that
/// exists.
pub(super) fn place(root: &Node, p: &Problem) -> usize {
    // A problem about a key is at the key; of a key given twice, at the second.
    let second = matches!(p.code, Code::DuplicateKey | Code::DuplicateProperty);
    let about_key = second || p.code == Code::UnknownToolKey;
    let all = p.path.steps();
    let mut cur = root;
    let mut at = root.at;
    for (n, step) in all.iter().enumerate() {
        let last = n + 1 == all.len();
        let next = match (step, &cur.v) {
            (Step::Key(k), V::List { items, .. }) => {
                let mut hits = items.chunks(2).filter(|kv| kv.len() == 2 && kv[0].keyword() == Some(k.as_str()));
                let hit = if last && second { hits.nth(1) } else { hits.next() };
                hit.map(|kv| if last && about_key { (&kv[0], kv[0].at) } else { (&kv[1], kv[1].at) })
            }
            (Step::Index(i), V::List { items, .. } | V::Vector(items) | V::Dotted(items, _)) => {
                items.get(*i).map(|x| (x, x.at))
            }
            _ => None,
        };
        match next {
            Some((node, a)) => {
                cur = node;
                at = a;
            }
            None => break,
        }
    }
    at
}
