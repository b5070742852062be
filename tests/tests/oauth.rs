//! The server as an OAuth 2.1 resource server, against a real authorization server: the
//! certified `oidc-provider` from npm (`tests/oauth-server/`), started by these tests on a free
//! port of 127.0.0.1 and issuing client-credentials tokens for a resource (RFC 8707), JWTs by
//! default and opaque ones for the resources its configuration names.
//!
//! The tests with the authorization server need Node.js 20 or later with npm (`TOOLWRIGHT_NODE`
//! names another `node` binary): the first run installs oidc-provider under the target
//! directory. They are ignored by default, so that `cargo test --workspace` passes with the Rust
//! toolchain alone; run them too with
//! `cargo test -p toolwright-tests --test oauth -- --include-ignored` (without Node.js they fail
//! saying what to install).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use reqwest::StatusCode;
use serde_json::{Value, json};
use tokio::sync::oneshot;
use toolwright::Server;
use toolwright::auth::OAuth;
use toolwright::http::Http;
use toolwright::store::MemoryStore;
use toolwright_tests::node::{self, node};

mod tools {
    use schemars::JsonSchema;
    use serde::Serialize;
    use serde_json::Value;
    use toolwright::{Context, mcp_tool};

    /// Who called.
    #[derive(Serialize, JsonSchema)]
    pub(crate) struct Caller {
        issuer: String,
        subject: Option<String>,
        client_id: Option<String>,
        scopes: Vec<String>,
        audience: Option<Value>,
    }

    /// Who called, as the access token says.
    #[mcp_tool(read_only)]
    fn whoami(ctx: Context) -> Result<Caller, String> {
        let principal = ctx.principal().ok_or("no principal")?;
        Ok(Caller {
            issuer: principal.issuer().to_owned(),
            subject: principal.subject().map(str::to_owned),
            client_id: principal.client_id().map(str::to_owned),
            scopes: principal.scopes().to_vec(),
            audience: principal.claim("aud").cloned(),
        })
    }

    /// Read the notes.
    #[mcp_tool(read_only, scopes = ["notes:read"])]
    fn read_notes() -> String {
        "no notes yet".to_owned()
    }

    /// Write a note.
    #[mcp_tool(scopes = ["notes:write"])]
    fn write_note(
        /// The note's title.
        title: String,
    ) -> String {
        format!("wrote {title}")
    }
}

const TIMEOUT: Duration = Duration::from_secs(20);

/// The resource the authorization server issues opaque tokens for, checked by introspection.
const OPAQUE: &str = "http://localhost/opaque/mcp";

/// The resource whose tokens live one second.
const SHORT_LIVED: &str = "http://localhost/short/mcp";

// ---- the authorization server ----------------------------------------------------------------

/// oidc-provider, running; it exits when the test process does (it is started with
/// `--exit-with-stdin`, and the process holds its stdin), or when dropped.
struct AuthorizationServer {
    issuer: String,
    port: u16,
    _stdin: Mutex<ChildStdin>,
    child: Mutex<Child>,
}

/// The one authorization server most tests of this binary share.
fn authorization_server() -> &'static AuthorizationServer {
    static SERVER: OnceLock<AuthorizationServer> = OnceLock::new();
    SERVER.get_or_init(|| AuthorizationServer::start(0))
}

impl AuthorizationServer {
    /// Starts one on this port of 127.0.0.1 (0: a free one), with a key of its own.
    fn start(port: u16) -> AuthorizationServer {
        let dir = installed();
        let config = json!({
            "resources": {
                OPAQUE: {"format": "opaque"},
                SHORT_LIVED: {"ttl": 1},
            }
        });
        let mut child = Command::new(node())
            .arg(dir.join("server.mjs"))
            .args(["--port", &port.to_string(), "--exit-with-stdin"])
            .env("OAUTH_SERVER_CONFIG", config.to_string())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|err| {
                panic!(
                    "the OAuth tests start oidc-provider with Node.js, and cannot run `{}`: \
                     {err}; install Node.js 20 or later with npm, or name the binary in \
                     TOOLWRIGHT_NODE",
                    node()
                )
            });
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let started: Value = serde_json::from_str(&line)
            .unwrap_or_else(|_| panic!("the authorization server did not start: {line:?}"));
        AuthorizationServer {
            issuer: started["issuer"].as_str().unwrap().to_owned(),
            port: u16::try_from(started["port"].as_u64().unwrap()).unwrap(),
            _stdin: Mutex::new(child.stdin.take().unwrap()),
            child: Mutex::new(child),
        }
    }
}

impl Drop for AuthorizationServer {
    fn drop(&mut self) {
        let child = self.child.get_mut().unwrap();
        let _ = child.kill();
        let _ = child.wait();
    }
}

/// The authorization server's folder under the target directory, with oidc-provider installed
/// from its lock file (again when the lock file changed).
fn installed() -> PathBuf {
    node::installed(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("oauth-server"),
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("oauth-server"),
        &["server.mjs"],
        "node_modules/oidc-provider/package.json",
        "the OAuth tests start oidc-provider, and",
    )
}

impl AuthorizationServer {
    /// A client-credentials token for `resource` with `scope`, as `client` (whose secret is its
    /// id with `-secret`).
    async fn token(&self, client: &str, resource: &str, scope: &str) -> String {
        let answer: Value = reqwest::Client::new()
            .post(format!("{}/token", self.issuer))
            .basic_auth(client, Some(format!("{client}-secret")))
            .form(&[
                ("grant_type", "client_credentials"),
                ("resource", resource),
                ("scope", scope),
            ])
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        answer["access_token"]
            .as_str()
            .unwrap_or_else(|| panic!("no token: {answer}"))
            .to_owned()
    }
}

// ---- the MCP server ----------------------------------------------------------------------------

/// A toolwright server with `oauth`, on a free port of 127.0.0.1.
struct Mcp {
    url: String,
    origin: String,
    client: reqwest::Client,
    _stop: oneshot::Sender<()>,
}

/// What the server answered.
#[derive(Debug)]
struct Answer {
    status: StatusCode,
    challenge: Option<String>,
    session: Option<String>,
    body: Value,
}

impl Mcp {
    async fn start(oauth: OAuth) -> Mcp {
        let bound = Server::new("oauth-tests", "0.0.1")
            .bind_http("127.0.0.1:0", Http::new().oauth(oauth))
            .await
            .expect("the OAuth settings are served");
        Mcp::serve(bound)
    }

    fn serve(bound: toolwright::http::HttpServer) -> Mcp {
        let origin = format!("http://{}", bound.local_addr());
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(bound.run_until(async {
            let _ = stopped.await;
        }));
        Mcp {
            url: format!("{origin}/mcp"),
            origin,
            client: reqwest::Client::builder()
                .no_proxy()
                .timeout(TIMEOUT)
                .build()
                .unwrap(),
            _stop: stop,
        }
    }

    /// POSTs a JSON-RPC message with this token and session (if any).
    async fn post(&self, token: Option<&str>, session: Option<&str>, body: Value) -> Answer {
        let mut request = self
            .client
            .post(&self.url)
            .header("accept", "application/json, text/event-stream")
            .header("content-type", "application/json")
            .body(body.to_string());
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        if let Some(session) = session {
            request = request
                .header("mcp-session-id", session)
                .header("mcp-protocol-version", "2025-11-25");
        }
        let response = request.send().await.expect("the server answers");
        let header = |name: &str| {
            response
                .headers()
                .get(name)
                .map(|v| v.to_str().unwrap().to_owned())
        };
        Answer {
            status: response.status(),
            challenge: header("www-authenticate"),
            session: header("mcp-session-id"),
            body: response.json().await.unwrap_or(Value::Null),
        }
    }

    /// `initialize` with this token: the session's id.
    async fn initialize(&self, token: &str) -> String {
        let answer = self.post(Some(token), None, initialize()).await;
        assert_eq!(answer.status, StatusCode::OK, "{answer:?}");
        answer.session.expect("a session is opened")
    }

    async fn call(&self, token: &str, session: &str, tool: &str, arguments: Value) -> Answer {
        let body = json!({
            "jsonrpc": "2.0", "id": 7, "method": "tools/call",
            "params": {"name": tool, "arguments": arguments}
        });
        self.post(Some(token), Some(session), body).await
    }

    /// Where the server says its metadata is.
    fn metadata_url(&self) -> String {
        format!("{}/.well-known/oauth-protected-resource/mcp", self.origin)
    }
}

fn initialize() -> Value {
    json!({
        "jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "oauth-tests", "version": "1.0.0"}
        }
    })
}

// ---- the tests -------------------------------------------------------------------------------

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn a_request_without_a_token_is_sent_to_the_metadata_that_names_the_issuer() {
    let issuer = &authorization_server().issuer;
    let mcp = Mcp::start(OAuth::new(issuer)).await;

    let refused = mcp.post(None, None, initialize()).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        refused.challenge.as_deref(),
        Some(format!(r#"Bearer resource_metadata="{}""#, mcp.metadata_url()).as_str())
    );
    assert_eq!(
        refused.body["error"]["message"],
        "this server requires an OAuth access token, `Authorization: Bearer <token>`: the \
         `resource_metadata` of the `WWW-Authenticate` header names the authorization server \
         that issues them"
    );

    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let response = mcp
            .client
            .get(format!("{}{path}", mcp.origin))
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), StatusCode::OK, "{path}");
        assert_eq!(response.headers()["access-control-allow-origin"], "*");
        let document: Value = response.json().await.unwrap();
        assert_eq!(
            document,
            json!({
                "resource": mcp.url,
                "authorization_servers": [issuer],
                "bearer_methods_supported": ["header"],
                "resource_name": "oauth-tests",
                "scopes_supported": ["notes:read", "notes:write"],
            }),
            "{path}"
        );
    }
    // A web page's preflight, for the header MCP clients send with it.
    let preflight = mcp
        .client
        .request(reqwest::Method::OPTIONS, mcp.metadata_url())
        .header("origin", "https://inspector.example")
        .header("access-control-request-headers", "mcp-protocol-version")
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), StatusCode::NO_CONTENT);
    assert_eq!(
        preflight.headers()["access-control-allow-headers"],
        "mcp-protocol-version"
    );
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn a_token_for_this_server_reaches_the_tools_which_see_its_principal() {
    let authorization = authorization_server();
    let mcp = Mcp::start(OAuth::new(&authorization.issuer)).await;
    let token = authorization
        .token("mcp-basic", &mcp.url, "notes:read notes:write")
        .await;
    let session = mcp.initialize(&token).await;

    let listed = mcp
        .post(
            Some(&token),
            Some(&session),
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}),
        )
        .await;
    let tools = listed.body["result"]["tools"].as_array().unwrap().clone();
    let write = tools.iter().find(|t| t["name"] == "write_note").unwrap();
    let schemes = json!([{"type": "oauth2", "scopes": ["notes:write"]}]);
    assert_eq!(write["securitySchemes"], schemes);
    assert_eq!(write["_meta"]["securitySchemes"], schemes);
    let whoami = tools.iter().find(|t| t["name"] == "whoami").unwrap();
    assert!(whoami.get("securitySchemes").is_none(), "{whoami}");

    let called = mcp.call(&token, &session, "whoami", json!({})).await;
    assert_eq!(called.status, StatusCode::OK, "{called:?}");
    assert_eq!(
        called.body["result"]["structuredContent"],
        json!({
            "issuer": authorization.issuer,
            "subject": "mcp-basic",
            "client_id": "mcp-basic",
            "scopes": ["notes:read", "notes:write"],
            "audience": mcp.url,
        })
    );
    let wrote = mcp
        .call(&token, &session, "write_note", json!({"title": "t"}))
        .await;
    assert_eq!(wrote.body["result"]["content"][0]["text"], "wrote t");
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn a_token_without_a_tool_s_scope_is_refused_403_naming_the_scope() {
    let authorization = authorization_server();
    let mcp = Mcp::start(OAuth::new(&authorization.issuer)).await;
    let token = authorization
        .token("mcp-readonly", &mcp.url, "notes:read")
        .await;
    let session = mcp.initialize(&token).await;

    let read = mcp.call(&token, &session, "read_notes", json!({})).await;
    assert_eq!(read.status, StatusCode::OK);
    assert_eq!(read.body["result"]["content"][0]["text"], "no notes yet");

    let refused = mcp
        .call(&token, &session, "write_note", json!({"title": "t"}))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    let why = "the access token lacks scope `notes:write`, which tool `write_note` needs";
    assert_eq!(refused.body["error"]["message"], why);
    assert_eq!(refused.body["id"], 7, "the request's id is kept");
    // The challenge names the scope the call needs and the one the token has, which a client
    // asking for what it names keeps.
    assert_eq!(
        refused.challenge.unwrap(),
        format!(
            r#"Bearer resource_metadata="{}", scope="notes:write notes:read", error="insufficient_scope", error_description="{why}""#,
            mcp.metadata_url()
        )
    );
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn a_mounted_servers_tools_need_the_scopes_its_mount_names() {
    use toolwright::gateway::Upstream;

    let authorization = authorization_server();
    // The mounted server checks no token; the gateway, in front of it, asks `notes:write` of
    // every one of its tools.
    let upstream = Server::new("upstream", "0.0.1")
        .bind_http("127.0.0.1:0", Http::new())
        .await
        .expect("a free port");
    let upstream_url = upstream.url();
    let _upstream = Mcp::serve(upstream);
    let gateway = Server::new("gateway", "0.0.1")
        .registry(toolwright::registry::Registry::from_registrations([]).unwrap())
        .mount("up", Upstream::url(upstream_url).scopes(["notes:write"]))
        .bind_http(
            "127.0.0.1:0",
            Http::new().oauth(OAuth::new(&authorization.issuer)),
        )
        .await
        .expect("the server is mounted");
    let mcp = Mcp::serve(gateway);

    let reader = authorization
        .token("mcp-readonly", &mcp.url, "notes:read")
        .await;
    let session = mcp.initialize(&reader).await;
    let refused = mcp
        .call(&reader, &session, "up__read_notes", json!({}))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(
        refused.body["error"]["message"],
        "the access token lacks scope `notes:write`, which tool `up__read_notes` needs"
    );

    let writer = authorization
        .token("mcp-basic", &mcp.url, "notes:read notes:write")
        .await;
    let session = mcp.initialize(&writer).await;
    let read = mcp
        .call(&writer, &session, "up__read_notes", json!({}))
        .await;
    assert_eq!(read.status, StatusCode::OK, "{read:?}");
    assert_eq!(read.body["result"]["content"][0]["text"], "no notes yet");
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn call_tool_of_the_progressive_catalog_needs_the_scopes_of_the_tool_it_runs() {
    let authorization = authorization_server();
    let bound = Server::new("oauth-tests", "0.0.1")
        .catalog(toolwright::catalog::Catalog::Progressive)
        .bind_http(
            "127.0.0.1:0",
            Http::new().oauth(OAuth::new(&authorization.issuer)),
        )
        .await
        .unwrap();
    let mcp = Mcp::serve(bound);
    let token = authorization
        .token("mcp-readonly", &mcp.url, "notes:read")
        .await;
    let session = mcp.initialize(&token).await;
    let through = |tool: &str| json!({"name": tool, "arguments": {"title": "t"}});
    let refused = mcp
        .call(&token, &session, "call_tool", through("write_note"))
        .await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(
        refused.body["error"]["message"],
        "the access token lacks scope `notes:write`, which tool `write_note` needs"
    );
    let read = mcp
        .call(&token, &session, "call_tool", json!({"name": "read_notes"}))
        .await;
    assert_eq!(read.status, StatusCode::OK, "{read:?}");
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn a_scope_every_request_needs_is_named_in_the_401_and_refused_403_without_it() {
    let authorization = authorization_server();
    let mcp = Mcp::start(OAuth::new(&authorization.issuer).require_scope("notes:read")).await;

    let unauthenticated = mcp.post(None, None, initialize()).await;
    assert_eq!(
        unauthenticated.challenge.unwrap(),
        format!(
            r#"Bearer resource_metadata="{}", scope="notes:read""#,
            mcp.metadata_url()
        )
    );
    // A token with no scope at all: the client asked for none.
    let bare = authorization.token("mcp-basic", &mcp.url, "").await;
    let refused = mcp.post(Some(&bare), None, initialize()).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert_eq!(
        refused.body["error"]["message"],
        "the access token lacks scope `notes:read`, which this server needs"
    );
    let token = authorization
        .token("mcp-readonly", &mcp.url, "notes:read")
        .await;
    mcp.initialize(&token).await;
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn tokens_not_for_this_server_are_refused_401_saying_why() {
    let authorization = authorization_server();
    let mcp = Mcp::start(OAuth::new(&authorization.issuer)).await;
    let invalid = |why: &str| {
        format!(
            r#"Bearer resource_metadata="{}", error="invalid_token", error_description="{why}""#,
            mcp.metadata_url()
        )
    };

    let elsewhere = authorization
        .token("mcp-basic", "http://127.0.0.1:9/mcp", "notes:read")
        .await;
    let refused = mcp.post(Some(&elsewhere), None, initialize()).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    let why = format!(
        "the access token is not for this server: its audience (`aud`) must hold `{}`",
        mcp.url
    );
    assert_eq!(refused.body["error"]["message"], why.as_str());
    assert_eq!(refused.challenge.unwrap(), invalid(&why));

    let encode = |header: Value, claims: Value| {
        use base64::Engine as _;
        let part = |v: &Value| {
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(v.to_string().as_bytes())
        };
        format!("{}.{}.c2lnbmF0dXJl", part(&header), part(&claims))
    };
    let claims = json!({
        "iss": authorization.issuer, "aud": mcp.url, "sub": "mallory",
        "exp": 4_000_000_000u64, "scope": "notes:write"
    });
    for (token, why) in [
        (
            "not-a-jwt".to_owned(),
            "the access token is not a JWT this server can read",
        ),
        (
            encode(json!({"alg": "none", "typ": "at+jwt"}), claims.clone()),
            "the access token is not a JWT this server can read",
        ),
        (
            encode(json!({"alg": "HS256", "typ": "at+jwt"}), claims.clone()),
            "the access token is signed with HS256, which this server does not take: it takes \
             RS, PS, ES and EdDSA signatures by the issuer's published keys",
        ),
        (
            encode(
                json!({"alg": "RS256", "typ": "at+jwt", "kid": "made-up"}),
                claims.clone(),
            ),
            "the access token is signed with key `made-up`, which the issuer does not publish",
        ),
        (
            encode(json!({"alg": "RS256", "typ": "JWT+logout"}), claims.clone()),
            "the token's type is `JWT+logout`: this server takes access tokens (`at+jwt`) only",
        ),
    ] {
        let refused = mcp.post(Some(&token), None, initialize()).await;
        assert_eq!(refused.status, StatusCode::UNAUTHORIZED, "{token}");
        assert_eq!(refused.body["error"]["message"], why, "{token}");
    }

    // A real token whose signature was tampered with.
    let token = authorization
        .token("mcp-basic", &mcp.url, "notes:read")
        .await;
    let (signed, _) = token.rsplit_once('.').unwrap();
    let forged = format!("{signed}.c2lnbmF0dXJl");
    let refused = mcp.post(Some(&forged), None, initialize()).await;
    assert_eq!(
        refused.body["error"]["message"],
        "the access token's signature does not verify"
    );
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn a_token_of_another_issuer_is_refused() {
    let authorization = authorization_server();
    // The same keys, but another issuer: its tokens name `127.0.0.1`, not `localhost`.
    let issuer = format!("http://localhost:{}", authorization.port);
    let oauth = OAuth::new(&issuer).jwks_uri(format!("{}/jwks", authorization.issuer));
    let mcp = Mcp::start(oauth).await;
    let token = authorization
        .token("mcp-basic", &mcp.url, "notes:read")
        .await;
    let refused = mcp.post(Some(&token), None, initialize()).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        refused.body["error"]["message"],
        format!(
            "the access token is not from this server's authorization server: its issuer \
             (`iss`) must be `{issuer}`"
        )
    );
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn the_issuer_is_published_and_required_as_its_metadata_writes_it() {
    let authorization = authorization_server();
    // oidc-provider writes its issuer without a trailing slash.
    let issuer = &authorization.issuer;
    assert!(!issuer.ends_with('/'), "{issuer}");
    for configured in [issuer.clone(), format!("{issuer}/")] {
        let mcp = Mcp::start(OAuth::new(&configured)).await;
        // Before any token: the document names the issuer as its metadata does.
        let response = mcp.client.get(mcp.metadata_url()).send().await.unwrap();
        assert_eq!(
            response.headers()["cache-control"],
            "public, max-age=300",
            "{configured}"
        );
        let document: Value = response.json().await.unwrap();
        assert_eq!(
            document["authorization_servers"],
            json!([issuer]),
            "{configured}"
        );
        let token = authorization
            .token("mcp-basic", &mcp.url, "notes:read")
            .await;
        mcp.initialize(&token).await;
    }
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn an_issuer_whose_metadata_is_not_fetched_is_published_and_required_as_given() {
    let authorization = authorization_server();
    // With the keys given, the issuer is taken as written: with a slash, which the
    // authorization server's tokens do not have.
    let configured = format!("{}/", authorization.issuer);
    let oauth = OAuth::new(&configured).jwks_uri(format!("{}/jwks", authorization.issuer));
    let mcp = Mcp::start(oauth).await;
    let document: Value = mcp
        .client
        .get(mcp.metadata_url())
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(document["authorization_servers"], json!([configured]));
    let token = authorization
        .token("mcp-basic", &mcp.url, "notes:read")
        .await;
    let refused = mcp.post(Some(&token), None, initialize()).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        refused.body["error"]["message"],
        format!(
            "the access token is not from this server's authorization server: its issuer \
             (`iss`) must be `{configured}`"
        )
    );
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn a_token_signed_with_the_issuer_s_new_key_is_taken_at_its_first_request() {
    let before = AuthorizationServer::start(0);
    // The default policy: a fetch at most every 5 seconds.
    let mcp = Mcp::start(OAuth::new(&before.issuer)).await;
    let old = before.token("mcp-basic", &mcp.url, "notes:read").await;
    mcp.initialize(&old).await;

    // The issuer comes back at once with a new signing key, within the 5 seconds.
    let port = before.port;
    drop(before);
    let after = AuthorizationServer::start(port);
    let new = after.token("mcp-basic", &mcp.url, "notes:read").await;
    let sent = std::time::Instant::now();
    let answer = mcp.post(Some(&new), None, initialize()).await;
    assert_eq!(answer.status, StatusCode::OK, "{answer:?}");
    assert!(
        sent.elapsed() < Duration::from_secs(6),
        "{:?}",
        sent.elapsed()
    );
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn the_issuer_s_new_keys_are_fetched_and_its_withdrawn_ones_refused() {
    let before = AuthorizationServer::start(0);
    let oauth = OAuth::new(&before.issuer).refetch_keys_after(Duration::ZERO);
    let mcp = Mcp::start(oauth).await;
    let old = before.token("mcp-basic", &mcp.url, "notes:read").await;
    mcp.initialize(&old).await;

    // The issuer comes back at the same address with a new signing key, and the old one gone.
    let port = before.port;
    drop(before);
    let after = AuthorizationServer::start(port);
    let new = after.token("mcp-basic", &mcp.url, "notes:read").await;
    let kid = |token: &str| {
        use base64::Engine as _;
        let header = token.split('.').next().unwrap();
        let header = base64::engine::general_purpose::URL_SAFE_NO_PAD
            .decode(header)
            .unwrap();
        serde_json::from_slice::<Value>(&header).unwrap()["kid"].clone()
    };
    assert_ne!(kid(&old), kid(&new), "a new key signs");
    mcp.initialize(&new).await;

    let refused = mcp.post(Some(&old), None, initialize()).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        refused.body["error"]["message"],
        format!(
            "the access token is signed with key `{}`, which the issuer does not publish",
            kid(&old).as_str().unwrap()
        )
    );
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn an_expired_token_is_refused() {
    let authorization = authorization_server();
    let oauth = OAuth::new(&authorization.issuer)
        .resource(SHORT_LIVED)
        .leeway(Duration::ZERO);
    let mcp = Mcp::start(oauth).await;
    let token = authorization
        .token("mcp-basic", SHORT_LIVED, "notes:read")
        .await;
    mcp.initialize(&token).await;
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let refused = mcp.post(Some(&token), None, initialize()).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        refused.body["error"]["message"],
        "the access token has expired"
    );
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn a_session_is_reached_only_by_the_principal_that_opened_it() {
    let authorization = authorization_server();
    let mcp = Mcp::start(OAuth::new(&authorization.issuer)).await;
    let alice = authorization
        .token("mcp-basic", &mcp.url, "notes:read")
        .await;
    let session = mcp.initialize(&alice).await;

    let mallory = authorization
        .token("mcp-post", &mcp.url, "notes:read")
        .await;
    let refused = mcp.call(&mallory, &session, "whoami", json!({})).await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND);
    assert_eq!(
        refused.body["error"]["message"],
        "unknown or terminated session: send `initialize` to start a new one"
    );
    // Nor its stream, nor its end.
    for method in [reqwest::Method::GET, reqwest::Method::DELETE] {
        let answer = mcp
            .client
            .request(method.clone(), &mcp.url)
            .bearer_auth(&mallory)
            .header("accept", "text/event-stream")
            .header("mcp-session-id", &session)
            .header("mcp-protocol-version", "2025-11-25")
            .send()
            .await
            .unwrap();
        assert_eq!(answer.status(), StatusCode::NOT_FOUND, "{method}");
    }
    // The owner with a fresh token, as after a refresh, keeps the session.
    let again = authorization
        .token("mcp-basic", &mcp.url, "notes:read")
        .await;
    let called = mcp.call(&again, &session, "whoami", json!({})).await;
    assert_eq!(called.status, StatusCode::OK);
    assert_eq!(
        called.body["result"]["structuredContent"]["subject"],
        "mcp-basic"
    );
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn a_session_belongs_to_its_principal_on_every_replica() {
    let authorization = authorization_server();
    // Two replicas of one resource, sharing their sessions.
    let resource = "http://127.0.0.1:9/mcp";
    let store = MemoryStore::new();
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let http = Http::new()
            .oauth(OAuth::new(&authorization.issuer).resource(resource))
            .session_store(store.clone());
        let bound = Server::new("oauth-tests", "0.0.1")
            .bind_http("127.0.0.1:0", http)
            .await
            .unwrap();
        replicas.push(Mcp::serve(bound));
    }
    let alice = authorization
        .token("mcp-basic", resource, "notes:read")
        .await;
    let session = replicas[0].initialize(&alice).await;
    let mallory = authorization
        .token("mcp-post", resource, "notes:read")
        .await;
    let refused = replicas[1]
        .call(&mallory, &session, "whoami", json!({}))
        .await;
    assert_eq!(refused.status, StatusCode::NOT_FOUND, "{refused:?}");
    let called = replicas[1]
        .call(&alice, &session, "whoami", json!({}))
        .await;
    assert_eq!(called.status, StatusCode::OK, "{called:?}");
    assert_eq!(
        called.body["result"]["structuredContent"]["subject"],
        "mcp-basic"
    );
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn opaque_tokens_are_checked_by_introspection() {
    let authorization = authorization_server();
    let oauth = OAuth::new(&authorization.issuer)
        .resource(OPAQUE)
        .introspect("introspector", "introspector-secret");
    let mcp = Mcp::start(oauth).await;
    let token = authorization.token("mcp-post", OPAQUE, "notes:read").await;
    assert_eq!(token.matches('.').count(), 0, "an opaque token: {token}");
    let session = mcp.initialize(&token).await;
    let called = mcp.call(&token, &session, "whoami", json!({})).await;
    assert_eq!(
        called.body["result"]["structuredContent"],
        json!({
            "issuer": authorization.issuer,
            "subject": null,
            "client_id": "mcp-post",
            "scopes": ["notes:read"],
            "audience": OPAQUE,
        })
    );
    let refused = mcp.post(Some("never-issued"), None, initialize()).await;
    assert_eq!(refused.status, StatusCode::UNAUTHORIZED);
    assert_eq!(
        refused.body["error"]["message"],
        "the access token is not active: it expired, was revoked, or was never issued"
    );
    let wrong_scope = mcp
        .call(&token, &session, "write_note", json!({"title": "t"}))
        .await;
    assert_eq!(wrong_scope.status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn an_authorization_server_that_cannot_be_reached_is_503_not_a_refusal() {
    // A port nothing listens on: bound, then let go.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let mcp = Mcp::start(OAuth::new(format!("http://127.0.0.1:{port}"))).await;
    // eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ: {"alg":"RS256","kid":"k"}, whose key is to be fetched.
    let token = "eyJhbGciOiJSUzI1NiIsImtpZCI6ImsifQ.e30.c2ln";
    let answer = mcp.post(Some(token), None, initialize()).await;
    assert_eq!(answer.status, StatusCode::SERVICE_UNAVAILABLE, "{answer:?}");
    // Why is logged; the caller learns nothing of the authorization server's addresses.
    assert_eq!(
        answer.body["error"]["message"],
        "the access token cannot be checked now: the authorization server cannot be reached; \
         try again shortly"
    );
    // The resource metadata names the issuer as configured, for now only.
    let response = mcp.client.get(mcp.metadata_url()).send().await.unwrap();
    assert_eq!(response.headers()["cache-control"], "no-cache");
    let document: Value = response.json().await.unwrap();
    assert_eq!(
        document["authorization_servers"],
        json!([format!("http://127.0.0.1:{port}")])
    );
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/oauth-server)"]
async fn requests_for_the_resource_s_host_pass_the_host_check() {
    let issuer = &authorization_server().issuer;
    let oauth = OAuth::new(issuer).resource("https://tools.example.com/notes/mcp");
    let mcp = Mcp::start(oauth).await;
    // As a proxy passes it on: the host is the resource's, and the token is asked for.
    let answer = mcp
        .client
        .post(&mcp.url)
        .header("host", "tools.example.com")
        .header("accept", "application/json, text/event-stream")
        .header("content-type", "application/json")
        .body(initialize().to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(
        answer.headers()["www-authenticate"],
        "Bearer resource_metadata=\"https://tools.example.com/.well-known/oauth-protected-resource/notes/mcp\""
    );
    // Another host is still refused.
    let other = mcp
        .client
        .post(&mcp.url)
        .header("host", "evil.example.com")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(other.status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn settings_that_cannot_be_served_stop_the_server_at_start() {
    let err = Server::new("oauth-tests", "0.0.1")
        .bind_http(
            "127.0.0.1:0",
            Http::new().oauth(OAuth::new("http://as.example.com")),
        )
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "the OAuth settings cannot be served: the issuer `http://as.example.com` is plain \
         `http`: tokens and keys must travel over `https` (plain `http` only on this machine: \
         localhost, 127.0.0.1, [::1])"
    );
    let http = Http::new()
        .bearer_token("s3cret")
        .oauth(OAuth::new("https://as.example.com"));
    let err = Server::new("oauth-tests", "0.0.1")
        .bind_http("127.0.0.1:0", http)
        .await
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("both a shared bearer token and OAuth are set"),
        "{err}"
    );
}
