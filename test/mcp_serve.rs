//! `toolspec serve`: the HTTP listener's guards, without Emacs; and the
//! Python MCP SDK's client against `toolspec serve` and a batch Emacs
//! serving gptel tools (test/mcp/serve_client.py), on stdio and HTTP.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_toolspec");

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A `toolspec serve --http` on a free loopback port, and its address.
struct Http {
    child: Child,
    addr: String,
}

impl Drop for Http {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn http(extra: &[&str]) -> Http {
    let dir = std::env::temp_dir().join(format!("toolspec-serve-http-{}", std::process::id()));
    let mut child = Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0", "--socket"])
        .arg(dir.join("absent.sock"))
        .args(extra)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut line).unwrap();
    let addr = line.split("http://").nth(1).and_then(|r| r.split('/').next()).unwrap_or_default().to_string();
    assert!(addr.starts_with("127.0.0.1:"), "{line}");
    Http { child, addr }
}

/// Status and body of a raw HTTP request to SERVER.
fn request(server: &Http, method: &str, headers: &[(&str, &str)], body: &str) -> (u16, String) {
    let mut s = TcpStream::connect(&server.addr).unwrap();
    let mut text = format!("{method} /mcp HTTP/1.1\r\nConnection: close\r\nContent-Length: {}\r\n", body.len());
    if !headers.iter().any(|(k, _)| *k == "Host") {
        text.push_str(&format!("Host: {}\r\n", server.addr));
    }
    for (k, v) in headers {
        text.push_str(&format!("{k}: {v}\r\n"));
    }
    text.push_str("Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\r\n");
    text.push_str(body);
    s.write_all(text.as_bytes()).unwrap();
    let mut answer = String::new();
    s.read_to_string(&mut answer).unwrap();
    let status = answer.split(' ').nth(1).unwrap().parse().unwrap();
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_string()).unwrap_or_default();
    (status, body)
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#;

#[test]
fn http_refuses_other_addresses() {
    for addr in ["0.0.0.0:0", "192.0.2.1:8080", "[::]:0"] {
        let mut child = Command::new(BIN)
            .args(["serve", "--http", addr])
            .stdin(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // A listener that started would never exit: give it 10 s.
        let mut status = None;
        for _ in 0..100 {
            if let Some(s) = child.try_wait().unwrap() {
                status = Some(s);
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
        if status.is_none() {
            let _ = child.kill();
            let _ = child.wait();
            panic!("toolspec serve --http {addr} started instead of refusing");
        }
        assert_eq!(status.unwrap().code(), Some(2), "{addr}");
        let mut err = String::new();
        child.stderr.take().unwrap().read_to_string(&mut err).unwrap();
        assert!(err.contains("refused: only a loopback address"), "{err}");
    }
}

#[test]
fn http_checks_host_origin_and_token() {
    let token = std::env::temp_dir().join(format!("toolspec-serve-token-{}", std::process::id()));
    std::fs::write(&token, "s3cret\n").unwrap();
    let server = http(&["--token-file", token.to_str().unwrap()]);
    let auth = ("Authorization", "Bearer s3cret");
    // DNS rebinding: a foreign Host or Origin is refused.
    let (status, body) = request(&server, "POST", &[("Host", "evil.example:80"), auth], INIT);
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("Host header must name localhost"), "{body}");
    let (status, body) = request(&server, "POST", &[("Origin", "http://evil.example"), auth], INIT);
    assert_eq!(status, 403, "{body}");
    let (status, _) = request(&server, "POST", &[("Origin", "http://localhost.evil.example"), auth], INIT);
    assert_eq!(status, 403);
    // No token, a wrong one.
    let (status, _) = request(&server, "POST", &[], INIT);
    assert_eq!(status, 401);
    let (status, _) = request(&server, "POST", &[("Authorization", "Bearer nope")], INIT);
    assert_eq!(status, 401);
    // A page of localhost with the token: answered, without Emacs.
    let (status, body) = request(&server, "POST", &[("Origin", "http://localhost:3000"), auth], INIT);
    assert_eq!(status, 200, "{body}");
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["result"]["protocolVersion"], "2025-06-18");
    assert!(v["result"]["instructions"].as_str().unwrap().contains("Emacs is not serving tools on"));
    let (status, body) = request(
        &server,
        "POST",
        &[auth],
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x","arguments":{}}}"#,
    );
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["result"]["isError"], true, "{body}");
    let (status, _) = request(&server, "POST", &[auth], r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#);
    assert_eq!(status, 202);
    let (status, _) = request(&server, "GET", &[auth], "");
    assert_eq!(status, 405);
    let (status, body) = request(&server, "POST", &[auth], "{nope");
    assert_eq!(status, 400);
    assert!(body.contains("-32700"), "{body}");
    let _ = std::fs::remove_file(token);
}

/// The Python of the provider checks' venv (scripts/setup-providers.sh), which has the `mcp` SDK.
fn python() -> PathBuf {
    let providers =
        std::env::var_os("TOOLSPEC_PROVIDERS").map(PathBuf::from).unwrap_or_else(|| root().join(".deps/providers"));
    let py = providers.join("pyenv/bin/python");
    assert!(
        py.exists(),
        "{} is missing: run `bash scripts/setup-providers.sh` (or set TOOLSPEC_PROVIDERS) to install the Python MCP SDK",
        py.display()
    );
    py
}

fn sdk_client(emacs: &str, compat: bool) {
    let module = root().join("target/debug/libtoolspec.so");
    assert!(module.exists(), "build the module first: cargo build --lib");
    let mut cmd = Command::new(python());
    cmd.arg(root().join("test/mcp/serve_client.py")).arg(BIN).arg(emacs).arg(&module).arg(root());
    if compat {
        cmd.env("TOOLSPEC_EMACS_PRELOAD_COMPAT", "1");
    }
    let out = cmd.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("all checks passed"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn python_sdk_client_through_serve_to_emacs() {
    sdk_client(&std::env::var("EMACS").unwrap_or_else(|_| "emacs".into()), false);
}

#[test]
fn python_sdk_client_through_serve_to_emacs_28() {
    let emacs = root().join(".deps/emacs-28/emacs");
    assert!(emacs.exists(), "Emacs 28 is missing: run `bash scripts/setup-deps.sh emacs28`");
    sdk_client(emacs.to_str().unwrap(), true);
}
