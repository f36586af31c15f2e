//! Formats that say how a tool runs, not only what it takes: Gloodata
//! extension info documents, Arcade tool definitions and SkyDeck prompt
//! tools.  Their readers set the tool's executor metadata in
//! `extra["executor"]` (a JSON object with `"type"`), which the elisp side
//! binds to a function; their writers (Gloodata, SkyDeck) are separate
//! functions, not dialects, as they cannot hold every tool.

use crate::error::{Error, Result};
use crate::imported::{Format, Imported, ReadOptions};
use crate::schema::kind_of;
pub use crate::seeds_common::{executor_of, property_name, provider_name, snake_name};
use crate::value::{Map, Value};
use crate::{arcade, gloodata, skydeck};

/// The seed format of a tool object, when its keys say so.
pub fn detect(o: &Map<String, Value>) -> Option<Format> {
    if gloodata::is_info(o) {
        Some(Format::Gloodata)
    } else if skydeck::is_document(o) {
        Some(Format::SkyDeck)
    } else if arcade::is_definition(o) {
        Some(Format::Arcade)
    } else {
        None
    }
}

/// Whether `format` is read here.
pub fn is_seed(format: Format) -> bool {
    matches!(format, Format::Gloodata | Format::Arcade | Format::SkyDeck)
}

/// Read one document of a seed format at `path`, adding its tools to `out`.
pub fn read(format: Format, v: &Value, path: &str, opts: &ReadOptions, out: &mut Imported) -> Result<()> {
    let o = v.as_object().ok_or_else(|| {
        Error::shape(path, format!("expected a {} document (an object), found {}", format.name(), kind_of(v)))
    })?;
    match format {
        Format::Gloodata => gloodata::read(o, path, out),
        Format::Arcade => arcade::read(o, path, out),
        Format::SkyDeck => skydeck::read(o, path, opts, out),
        _ => unreachable!("not a seed format"),
    }
}
