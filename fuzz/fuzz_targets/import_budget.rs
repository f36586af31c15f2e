//! The budget of a whole import: documents whose tools (or OpenAPI
//! operations) `$ref` shared schemas, which may `$ref` each other, so
//! that what the import makes is far larger than the document.  The
//! bytes choose the shapes and sizes; read under a small budget, an
//! import either fits it (the schemas made are counted within it) or
//! ends with the budget's `toolspec-limit-error`, never more.
#![no_main]
use libfuzzer_sys::fuzz_target;
use toolspec::budget;
use toolspec::openapi::{self, OpenApiOptions};
use toolspec::read::{read_str, ReadOptions};
use toolspec::ErrorKind;

/// Budget of each import tried: 2 MiB.
const LIMIT: usize = 2 << 20;

/// `$defs` named d0, d1...: each an object of some plain properties and
/// some `$ref`s to later definitions, as the bytes say.
fn defs(data: &[u8]) -> (String, usize) {
    let count = (data.first().copied().unwrap_or(1) as usize % 8) + 1;
    let mut out = Vec::new();
    for i in 0..count {
        let b = data.get(1 + i).copied().unwrap_or(0) as usize;
        let plain = (b % 16) * 40;
        let refs = if i + 1 < count { (b / 16) % 4 } else { 0 };
        let mut props: Vec<String> =
            (0..plain).map(|p| format!("\"p{p}\":{{\"type\":\"string\",\"description\":\"P{p}\"}}")).collect();
        for r in 0..refs {
            props.push(format!("\"r{r}\":{{\"$ref\":\"#/$defs/d{}\"}}", i + 1));
        }
        out.push(format!("\"d{i}\":{{\"type\":\"object\",\"properties\":{{{}}}}}", props.join(",")));
    }
    (out.join(","), count)
}

fuzz_target!(|data: &[u8]| {
    let (defs, count) = defs(data);
    let tools = data.get(9).copied().unwrap_or(1) as usize * 4 + 1;
    let target = |i: usize| data.get(10 + i % 8).copied().unwrap_or(0) as usize % count;
    let openapi = data.get(18).is_some_and(|b| b & 1 == 1);
    let text = if openapi {
        let defs = defs.replace("#/$defs/", "#/components/schemas/");
        let paths: Vec<String> = (0..tools)
            .map(|i| {
                format!(
                    "\"/x{i}\":{{\"post\":{{\"operationId\":\"op{i}\",\"requestBody\":{{\"content\":{{\"application/json\":\
                     {{\"schema\":{{\"$ref\":\"#/components/schemas/d{}\"}}}}}}}},\"responses\":{{\"200\":{{\"description\":\"ok\"}}}}}}}}",
                    target(i)
                )
            })
            .collect();
        format!(
            "{{\"openapi\":\"3.0.0\",\"info\":{{\"title\":\"t\",\"version\":\"1\"}},\"paths\":{{{}}},\"components\":{{\"schemas\":{{{defs}}}}}}}",
            paths.join(",")
        )
    } else {
        let list: Vec<String> = (0..tools)
            .map(|i| {
                format!(
                    "{{\"name\":\"t{i}\",\"description\":\"T.\",\"inputSchema\":{{\"type\":\"object\",\"properties\":\
                     {{\"x\":{{\"$ref\":\"#/$defs/d{}\"}},\"y\":{{\"$ref\":\"#/$defs/d{}\"}}}}}}}}",
                    target(i),
                    target(i + 3)
                )
            })
            .collect();
        format!("{{\"tools\":[{}],\"$defs\":{{{defs}}}}}", list.join(","))
    };
    let (read, used) = budget::within(Some(LIMIT), || {
        let read = if openapi {
            openapi::read_text(&text, &OpenApiOptions::default())
        } else {
            read_str(&text, &ReadOptions::default())
        };
        (read, budget::current().map(|b| b.used()))
    });
    let used = used.expect("the import runs within a budget");
    match read {
        // Within the budget: what was made was counted (a batch of a few
        // KiB per thread may be counted late).
        Ok(imp) => {
            assert!(used <= LIMIT + (64 << 10), "{used} counted past {LIMIT}");
            let mut printed = String::new();
            toolspec::plist::print_tools(&imp.tools, &mut printed);
            assert!(printed.len() <= 2 * LIMIT, "{} bytes of tools within a budget of {LIMIT}", printed.len());
        }
        // Past it: the budget's error, nothing made beyond it.
        Err(e) if e.kind == ErrorKind::Limit => {
            assert!(
                e.message.contains("import budget") || e.message.contains("nodes") || e.message.contains("deeper"),
                "{e}"
            )
        }
        Err(_) => {}
    }
});
