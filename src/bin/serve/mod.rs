//! `toolspec serve`: the bridge between an MCP client and the tools
//! Emacs serves (`toolspec-mcp-server-mode`, lisp/toolspec-mcp-server.el).
//!
//! Emacs listens on a local socket and speaks newline-delimited JSON-RPC,
//! as MCP's stdio transport does; this program speaks MCP to the client,
//! on stdio or as streamable HTTP on loopback, and forwards each message.
//! When Emacs cannot be reached the client still gets answers: the
//! handshake succeeds with no tools and each call says why, so that
//! clients do not retry in a loop; when Emacs comes up later, a stdio
//! client is told that the tool list changed.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::SocketAddr;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use clap::Args;
use serde_json::{json, Value};

/// The handshake-era revisions answered when Emacs is not there.
const HANDSHAKE_VERSIONS: &[&str] = &["2025-11-25", "2025-06-18", "2025-03-26"];
const MODERN_VERSION: &str = "2026-07-28";
const META_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The id of the `initialize` this program replays to an Emacs it
/// reconnects to; its answer is not the client's.
const REPLAY_ID: &str = "toolspec-serve-replay";
/// Largest message accepted from a client or from Emacs.
const MAX_MESSAGE: usize = 16 * 1024 * 1024;

#[derive(Args)]
pub struct ServeArgs {
    /// The socket Emacs listens on (default: toolspec/mcp.sock under
    /// $XDG_RUNTIME_DIR, else toolspec-UID/mcp.sock under $TMPDIR or /tmp)
    #[arg(long, value_name = "PATH")]
    socket: Option<PathBuf>,
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio; ADDR must be a loopback address
    #[arg(long, value_name = "ADDR")]
    http: Option<String>,
    /// With --http, require `Authorization: Bearer TOKEN', TOKEN the file's first line
    #[arg(long, value_name = "FILE", requires = "http")]
    token_file: Option<PathBuf>,
    /// Seconds an HTTP request waits for Emacs's answer
    #[arg(long, value_name = "SECONDS", default_value_t = 120)]
    timeout: u64,
}

pub const SERVE_HELP: &str = "\
Turn on `toolspec-mcp-server-mode' in Emacs and name the tools to serve in
`toolspec-mcp-server-tools'; then give MCP clients this command, e.g. for Claude Code:
  claude mcp add emacs -- toolspec serve
If Emacs is not running or the mode is off, clients see no tools and each call says so.

Exit status: 0 when the client closed standard input, 2 on a usage error (an --http
address that is not loopback, an unreadable --token-file).";

/// The default socket, as `toolspec-mcp-server-default-socket' in Emacs.
pub fn default_socket() -> PathBuf {
    match std::env::var_os("XDG_RUNTIME_DIR").filter(|d| !d.is_empty()) {
        Some(dir) => Path::new(&dir).join("toolspec").join("mcp.sock"),
        None => {
            let tmp = std::env::var_os("TMPDIR").filter(|d| !d.is_empty()).unwrap_or_else(|| "/tmp".into());
            // SAFETY: getuid has no preconditions and cannot fail.
            let uid = unsafe { libc::getuid() };
            Path::new(&tmp).join(format!("toolspec-{uid}")).join("mcp.sock")
        }
    }
}

pub fn serve(args: ServeArgs) -> u8 {
    let socket = args.socket.clone().unwrap_or_else(default_socket);
    match &args.http {
        Some(addr) => serve_http(addr, &args, socket),
        None => serve_stdio(socket),
    }
}

// ------------------------------------------------------------ answers without Emacs

fn offline_reason(socket: &Path) -> String {
    format!(
        "Emacs is not serving tools on {}: start Emacs, name the tools in `toolspec-mcp-server-tools' \
         and turn on `toolspec-mcp-server-mode'",
        socket.display()
    )
}

fn server_info() -> Value {
    json!({"name": "toolspec-emacs", "title": "Emacs (toolspec)", "version": env!("CARGO_PKG_VERSION")})
}

fn capabilities() -> Value {
    json!({"tools": {"listChanged": true}, "logging": {}})
}

/// The answer to MESSAGE, a request, when Emacs cannot be reached; None for a notification.
fn offline_answer(message: &Value, socket: &Path) -> Option<Value> {
    let id = message.get("id")?.clone();
    let method = message.get("method").and_then(Value::as_str).unwrap_or("");
    let params = message.get("params");
    let modern = params.and_then(|p| p.get("_meta")).and_then(|m| m.get(META_VERSION)).is_some();
    let reason = offline_reason(socket);
    let mut result = match method {
        "initialize" => {
            let asked = params.and_then(|p| p.get("protocolVersion")).and_then(Value::as_str);
            let agreed = asked.filter(|v| HANDSHAKE_VERSIONS.contains(v)).unwrap_or(HANDSHAKE_VERSIONS[0]);
            json!({"protocolVersion": agreed, "capabilities": capabilities(), "serverInfo": server_info(),
                   "instructions": reason})
        }
        "server/discover" => {
            let mut versions = vec![MODERN_VERSION];
            versions.extend_from_slice(HANDSHAKE_VERSIONS);
            json!({"supportedVersions": versions, "capabilities": capabilities(), "instructions": reason,
                   "ttlMs": 0, "cacheScope": "private",
                   "_meta": {"io.modelcontextprotocol/serverInfo": server_info()}})
        }
        "ping" | "logging/setLevel" => json!({}),
        "tools/list" => {
            if modern {
                json!({"tools": [], "ttlMs": 0, "cacheScope": "private"})
            } else {
                json!({"tools": []})
            }
        }
        "tools/call" => json!({"content": [{"type": "text", "text": format!("Error: {reason}.")}], "isError": true}),
        _ => {
            return Some(json!({"jsonrpc": "2.0", "id": id,
                               "error": {"code": -32603, "message": reason}}));
        }
    };
    if modern {
        result["resultType"] = json!("complete");
    }
    Some(json!({"jsonrpc": "2.0", "id": id, "result": result}))
}

/// The answer to request ID of METHOD whose connection to Emacs was lost.
fn lost_answer(id: &Value, method: &str) -> Value {
    let why = "Emacs closed the connection before answering (was toolspec-mcp-server-mode turned off?)";
    if method == "tools/call" {
        json!({"jsonrpc": "2.0", "id": id,
               "result": {"content": [{"type": "text", "text": format!("Error: {why}.")}], "isError": true}})
    } else {
        json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32603, "message": why}})
    }
}

// ------------------------------------------------------------ stdio

type Out = Arc<Mutex<std::io::Stdout>>;

fn emit(out: &Out, line: &str) {
    let mut o = out.lock().unwrap_or_else(|e| e.into_inner());
    let _ = o.write_all(line.as_bytes());
    let _ = o.write_all(b"\n");
    let _ = o.flush();
}

/// What the stdio bridge knows of its client and of Emacs.
#[derive(Default)]
struct Session {
    /// The writing half of the connection to Emacs.
    emacs: Option<UnixStream>,
    /// Bumped at each new connection, so a reader of an old one stops.
    generation: u64,
    /// The client's `initialize` message, replayed to a new connection.
    initialize: Option<Value>,
    initialized: bool,
    /// Requests sent to Emacs and not answered: id (as JSON text) -> (id, method).
    pending: HashMap<String, (Value, String)>,
}

fn serve_stdio(socket: PathBuf) -> u8 {
    let out: Out = Arc::new(Mutex::new(std::io::stdout()));
    let session = Arc::new(Mutex::new(Session::default()));
    // Reconnects while the client is there: when Emacs comes up, the
    // client is told its tools changed.
    {
        let (session, out, socket) = (session.clone(), out.clone(), socket.clone());
        std::thread::spawn(move || loop {
            std::thread::sleep(Duration::from_secs(2));
            let want = {
                let s = session.lock().unwrap_or_else(|e| e.into_inner());
                s.emacs.is_none() && s.initialize.is_some()
            };
            if want && connect(&session, &out, &socket) {
                emit(&out, r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#);
            }
        });
    }
    let stdin = std::io::stdin();
    let mut reader = BufReader::new(stdin.lock());
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.by_ref().take(MAX_MESSAGE as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) => return 0,
            Ok(_) => {}
            Err(e) => {
                eprintln!("toolspec serve: reading standard input: {e}");
                return 0;
            }
        }
        if line.len() > MAX_MESSAGE {
            eprintln!("toolspec serve: a message longer than {MAX_MESSAGE} bytes: stopping");
            return 2;
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            continue;
        }
        let message: Value = match serde_json::from_str(text) {
            Ok(v) => v,
            Err(e) => {
                emit(
                    &out,
                    &json!({"jsonrpc": "2.0", "id": null,
                                   "error": {"code": -32700, "message": format!("Parse error: {e}")}})
                    .to_string(),
                );
                continue;
            }
        };
        client_message(&session, &out, &socket, message);
    }
}

/// Handle MESSAGE from the client: forward it to Emacs, or answer it.
fn client_message(session: &Arc<Mutex<Session>>, out: &Out, socket: &Path, message: Value) {
    let method = message.get("method").and_then(Value::as_str).unwrap_or("").to_string();
    {
        let mut s = session.lock().unwrap_or_else(|e| e.into_inner());
        if method == "initialize" {
            s.initialize = Some(message.clone());
        } else if method == "notifications/initialized" {
            s.initialized = true;
        }
    }
    let connected = session.lock().unwrap_or_else(|e| e.into_inner()).emacs.is_some();
    if !connected && method != "initialize" {
        connect(session, out, socket);
    } else if !connected {
        // The replay is the client's own initialize: connect without it.
        let saved = session.lock().unwrap_or_else(|e| e.into_inner()).initialize.take();
        connect(session, out, socket);
        session.lock().unwrap_or_else(|e| e.into_inner()).initialize = saved;
    }
    let mut s = session.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(stream) = s.emacs.as_mut() {
        let mut text = message.to_string();
        text.push('\n');
        if stream.write_all(text.as_bytes()).is_ok() {
            if let (Some(id), false) = (message.get("id"), method.is_empty()) {
                s.pending.insert(id.to_string(), (id.clone(), method));
            }
            return;
        }
        s.emacs = None;
    }
    drop(s);
    if let Some(answer) = offline_answer(&message, socket) {
        emit(out, &answer.to_string());
    }
}

/// Connect to Emacs; replay the client's handshake; start the reader.
/// Returns whether a connection was made.
fn connect(session: &Arc<Mutex<Session>>, out: &Out, socket: &Path) -> bool {
    let Ok(stream) = UnixStream::connect(socket) else { return false };
    let Ok(reader) = stream.try_clone() else { return false };
    let mut s = session.lock().unwrap_or_else(|e| e.into_inner());
    if s.emacs.is_some() {
        return false;
    }
    let mut writer = stream;
    if let Some(init) = &s.initialize {
        let mut replay = init.clone();
        replay["id"] = json!(REPLAY_ID);
        let mut text = replay.to_string();
        text.push('\n');
        if s.initialized {
            text.push_str("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
        }
        if writer.write_all(text.as_bytes()).is_err() {
            return false;
        }
    }
    s.emacs = Some(writer);
    s.generation += 1;
    let generation = s.generation;
    drop(s);
    let (session, out) = (session.clone(), out.clone());
    std::thread::spawn(move || read_emacs(reader, generation, &session, &out));
    true
}

/// Copy Emacs's messages to the client until the connection closes;
/// then answer the requests left unanswered.
fn read_emacs(stream: UnixStream, generation: u64, session: &Arc<Mutex<Session>>, out: &Out) {
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.by_ref().take(MAX_MESSAGE as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => break,
            Ok(_) if line.len() > MAX_MESSAGE => break,
            Ok(_) => {}
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end();
        if text.is_empty() {
            continue;
        }
        if let Ok(message) = serde_json::from_str::<Value>(text) {
            if let Some(id) = message.get("id") {
                if id == REPLAY_ID {
                    continue;
                }
                if message.get("method").is_none() {
                    session.lock().unwrap_or_else(|e| e.into_inner()).pending.remove(&id.to_string());
                }
            }
        }
        emit(out, text);
    }
    let mut s = session.lock().unwrap_or_else(|e| e.into_inner());
    if s.generation != generation {
        return;
    }
    s.emacs = None;
    let pending: Vec<(Value, String)> = s.pending.drain().map(|(_, v)| v).collect();
    drop(s);
    for (id, method) in pending {
        emit(out, &lost_answer(&id, &method).to_string());
    }
}

// ------------------------------------------------------------ HTTP

/// Whether HOST (a Host header, or an Origin's host and port) names this machine.
fn loopback_host(host: &str) -> bool {
    let name = if let Some(rest) = host.strip_prefix('[') {
        rest.split(']').next().unwrap_or("")
    } else {
        host.rsplit_once(':').map_or(host, |(h, p)| if p.chars().all(|c| c.is_ascii_digit()) { h } else { host })
    };
    name.eq_ignore_ascii_case("localhost") || name == "127.0.0.1" || name == "::1"
}

/// Whether an Origin header is a page of this machine (or absent).
fn origin_allowed(origin: Option<&str>) -> bool {
    match origin {
        None => true,
        Some(o) => {
            let rest = o.strip_prefix("http://").or_else(|| o.strip_prefix("https://"));
            matches!(rest, Some(r) if !r.contains('/') && loopback_host(r))
        }
    }
}

fn header<'a>(req: &'a tiny_http::Request, name: &str) -> Option<&'a str> {
    req.headers().iter().find(|h| h.field.as_str().as_str().eq_ignore_ascii_case(name)).map(|h| h.value.as_str())
}

fn respond(req: tiny_http::Request, status: u16, body: Option<String>, extra: &[(&str, &str)]) {
    let mut resp = tiny_http::Response::from_string(body.clone().unwrap_or_default()).with_status_code(status);
    let ctype = if body.is_some() { "application/json" } else { "text/plain" };
    if let Ok(h) = tiny_http::Header::from_bytes("Content-Type", ctype) {
        resp.add_header(h);
    }
    for (k, v) in extra {
        if let Ok(h) = tiny_http::Header::from_bytes(k.as_bytes(), v.as_bytes()) {
            resp.add_header(h);
        }
    }
    let _ = req.respond(resp);
}

fn http_error(req: tiny_http::Request, status: u16, code: i64, message: &str, extra: &[(&str, &str)]) {
    let body = json!({"jsonrpc": "2.0", "id": null, "error": {"code": code, "message": message}}).to_string();
    respond(req, status, Some(body), extra);
}

fn serve_http(addr: &str, args: &ServeArgs, socket: PathBuf) -> u8 {
    let parsed: SocketAddr = match addr.parse() {
        Ok(a) => a,
        Err(_) => {
            eprintln!("toolspec serve: --http {addr}: not an address: give IP:PORT, e.g. 127.0.0.1:8765");
            return 2;
        }
    };
    if !parsed.ip().is_loopback() {
        eprintln!(
            "toolspec serve: --http {addr}: refused: only a loopback address (127.0.0.1, ::1) may be served, \
             so that no other machine reaches your Emacs"
        );
        return 2;
    }
    let token = match &args.token_file {
        None => None,
        Some(f) => match std::fs::read_to_string(f) {
            Ok(t) if !t.trim().is_empty() => Some(t.lines().next().unwrap_or("").trim().to_string()),
            Ok(_) => {
                eprintln!("toolspec serve: --token-file {}: the file is empty", f.display());
                return 2;
            }
            Err(e) => {
                eprintln!("toolspec serve: --token-file {}: {e}", f.display());
                return 2;
            }
        },
    };
    let server = match tiny_http::Server::http(parsed) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("toolspec serve: --http {addr}: {e}");
            return 2;
        }
    };
    eprintln!("toolspec serve: MCP at http://{}/mcp, forwarding to {}", server.server_addr(), socket.display());
    let token = Arc::new(token);
    let timeout = Duration::from_secs(args.timeout.max(1));
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let (server, token, socket) = (server.clone(), token.clone(), socket.clone());
            std::thread::spawn(move || {
                while let Ok(req) = server.recv() {
                    http_request(req, &token, &socket, timeout);
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.join();
    }
    0
}

fn http_request(mut req: tiny_http::Request, token: &Option<String>, socket: &Path, timeout: Duration) {
    let path = req.url().split('?').next().unwrap_or("").to_string();
    if path != "/mcp" {
        return respond(req, 404, None, &[]);
    }
    // DNS rebinding: a page of another site reaching loopback names
    // its own host, and sends its own origin.
    if !header(&req, "Host").is_some_and(loopback_host) {
        return http_error(req, 403, -32600, "Forbidden: the Host header must name localhost", &[]);
    }
    if !origin_allowed(header(&req, "Origin")) {
        return http_error(req, 403, -32600, "Forbidden: requests from other origins are refused", &[]);
    }
    if let Some(t) = token {
        let given = header(&req, "Authorization").and_then(|a| a.strip_prefix("Bearer ")).map(str::trim);
        if given != Some(t.as_str()) {
            return http_error(
                req,
                401,
                -32600,
                "Unauthorized: a bearer token is required",
                &[("WWW-Authenticate", "Bearer")],
            );
        }
    }
    match req.method() {
        tiny_http::Method::Post => {}
        _ => return respond(req, 405, None, &[("Allow", "POST")]),
    }
    let mut body = Vec::new();
    if req.as_reader().take(MAX_MESSAGE as u64 + 1).read_to_end(&mut body).is_err() || body.len() > MAX_MESSAGE {
        return http_error(req, 413, -32600, "The message is too large or could not be read", &[]);
    }
    let message: Value = match serde_json::from_slice(&body) {
        Ok(v) => v,
        Err(e) => return http_error(req, 400, -32700, &format!("Parse error: {e}"), &[]),
    };
    if !message.is_object() {
        return http_error(req, 400, -32600, "Invalid request: one JSON-RPC message per POST", &[]);
    }
    if message.get("method").is_none() || message.get("id").is_none() {
        // A notification or a response: nothing to answer.
        return respond(req, 202, None, &[]);
    }
    let answer = forward_once(&message, socket, timeout)
        .unwrap_or_else(|| offline_answer(&message, socket).unwrap_or(Value::Null));
    // No Mcp-Session-Id: each POST stands alone (the server keeps no
    // session), so clients open no GET stream and send no DELETE.
    respond(req, 200, Some(answer.to_string()), &[]);
}

/// Send MESSAGE, a request, to Emacs on a connection of its own and
/// return the answer; None when Emacs cannot be reached.
fn forward_once(message: &Value, socket: &Path, timeout: Duration) -> Option<Value> {
    let id = message.get("id")?.clone();
    let method = message.get("method").and_then(Value::as_str).unwrap_or("").to_string();
    let mut stream = UnixStream::connect(socket).ok()?;
    let _ = stream.set_read_timeout(Some(timeout));
    let mut text = message.to_string();
    text.push('\n');
    stream.write_all(text.as_bytes()).ok()?;
    let mut reader = BufReader::new(stream);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.by_ref().take(MAX_MESSAGE as u64 + 1).read_until(b'\n', &mut line) {
            Ok(0) => return Some(lost_answer(&id, &method)),
            Ok(_) if line.len() > MAX_MESSAGE => return Some(lost_answer(&id, &method)),
            Ok(_) => {}
            Err(_) => {
                return Some(json!({"jsonrpc": "2.0", "id": id,
                                   "error": {"code": -32603, "message": "Emacs did not answer in time"}}))
            }
        }
        if let Ok(answer) = serde_json::from_slice::<Value>(&line) {
            if answer.get("id") == Some(&id) && answer.get("method").is_none() {
                return Some(answer);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_and_origins() {
        for h in ["localhost", "localhost:8080", "127.0.0.1:1", "[::1]:80", "LOCALHOST"] {
            assert!(loopback_host(h), "{h}");
        }
        for h in ["evil.example", "evil.example:80", "127.0.0.1.evil.example", "localhost.evil:80", ""] {
            assert!(!loopback_host(h), "{h}");
        }
        assert!(origin_allowed(None));
        assert!(origin_allowed(Some("http://localhost:3000")));
        assert!(origin_allowed(Some("https://127.0.0.1")));
        assert!(!origin_allowed(Some("http://evil.example")));
        assert!(!origin_allowed(Some("null")));
        assert!(!origin_allowed(Some("http://localhost.evil.example")));
    }
}
