//! Testing tools in-process: a server, with its state and checks, answering a client in the same
//! process, without pipes, processes or sockets.
//!
//! ```standalone_crate
//! use serde_json::json;
//! use toolwright::{State, mcp_tool};
//!
//! struct Greeting(String);
//!
//! /// Greet someone.
//! #[mcp_tool]
//! fn greet(greeting: State<Greeting>, name: String) -> String {
//!     format!("{}, {name}!", greeting.0)
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let client = toolwright::server!()
//!     .state(Greeting("Hello".into()))
//!     .test_client()
//!     .await?;
//! let greeted = client.call("greet", json!({"name": "Ada"})).await?;
//! assert_eq!(greeted.text(), "Hello, Ada!");
//! // A wrong argument is refused as it would be over the wire, naming the tool and the argument
//! // (then `7 is not of type "string"`).
//! let refused = client.call("greet", json!({"name": 7})).await?;
//! assert!(refused.is_error());
//! assert!(
//!     refused
//!         .text()
//!         .starts_with("invalid arguments for tool `greet`: argument `name`: ")
//! );
//! # Ok(())
//! # }
//! ```
//!
//! A test of a crate whose tools live elsewhere names them, as its server does:
//! `toolwright::server!(notes_tools)`.

use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

pub use crate::answers::{CallResult, RpcError};
use crate::auth::Principal;
use crate::context::Who;
use crate::protocol::jsonrpc::{Id, Incoming};
use crate::protocol::{Client, HANDSHAKE_VERSIONS};
use crate::server::{Error, Server, Session, Started, Step};
use crate::sink::{self, Answer, Outbox, Sink};

/// A client of a server in the same process: one session, opened with `initialize` as a client
/// of the newest handshake version (`clientInfo` `toolwright-test`). From
/// [`Server::test_client`], [`Server::test_client_with`] and [`Server::test_client_as`].
pub struct TestClient {
    server: Started,
    session: Arc<Session>,
    sink: Sink,
    /// Whom every request comes from, as if its access token named them.
    principal: Option<Arc<Principal>>,
    /// What calls sent while they ran: progress, log messages, requests to the client.
    sent: Mutex<Outbox>,
    next_id: AtomicI64,
}

impl Server {
    /// Starts the server in this process for a test, as it would start to serve (its state
    /// built, its tools gathered and checked), and opens a session: the client lists and calls
    /// tools through the server's own checks, state and context. Needs a Tokio runtime
    /// (`#[tokio::test]`).
    pub async fn test_client(self) -> Result<TestClient, Error> {
        self.test_client_with(json!({})).await
    }

    /// [`test_client`](Server::test_client), as a client that declares these `capabilities`:
    /// the MCP Apps extension, to call the tools only views call, say.
    pub async fn test_client_with(self, capabilities: Value) -> Result<TestClient, Error> {
        self.open_test_client(capabilities, None).await
    }

    /// [`test_client`](Server::test_client), whose every request comes from `principal`, as if
    /// its access token named them: tools, prompts and resources see it in
    /// [`Context::principal`](crate::Context::principal). The checks of a token and of its
    /// scopes are the HTTP transport's, and are not made here: a test of them serves over
    /// HTTP.
    pub async fn test_client_as(self, principal: Principal) -> Result<TestClient, Error> {
        self.open_test_client(json!({}), Some(Arc::new(principal)))
            .await
    }

    async fn open_test_client(
        self,
        capabilities: Value,
        principal: Option<Arc<Principal>>,
    ) -> Result<TestClient, Error> {
        let server = self.start().await?;
        let (sink, sent) = sink::channel();
        let client = TestClient {
            server,
            session: Arc::new(Session::new()),
            sink,
            principal,
            sent: Mutex::new(sent),
            next_id: AtomicI64::new(1),
        };
        let version = HANDSHAKE_VERSIONS[0];
        let params = json!({
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "toolwright-test", "version": env!("CARGO_PKG_VERSION")},
        });
        client
            .request("initialize", params)
            .await
            .expect("a server answers `initialize`");
        Ok(client)
    }
}

impl TestClient {
    /// The tools the server lists (`tools/list`, every page), as a client receives them.
    pub async fn list_tools(&self) -> Result<Vec<Value>, RpcError> {
        let mut tools = Vec::new();
        let mut cursor = Value::Null;
        loop {
            let page = self
                .request("tools/list", json!({ "cursor": cursor }))
                .await?;
            if let Some(Value::Array(listed)) = page.get("tools") {
                tools.extend(listed.iter().cloned());
            }
            match page.get("nextCursor") {
                Some(next @ Value::String(_)) => cursor = next.clone(),
                _ => return Ok(tools),
            }
        }
    }

    /// Calls a tool by name with these arguments (a JSON object), and waits for its result. A
    /// tool error (`isError`) is a result, as the model would read it; a request the server
    /// refuses (an unknown tool, say) is an [`RpcError`].
    pub async fn call(&self, name: &str, arguments: Value) -> Result<CallResult, RpcError> {
        self.request(
            "tools/call",
            json!({ "name": name, "arguments": arguments }),
        )
        .await
        .map(CallResult)
    }

    /// Sends any request of the session and waits for its result.
    pub async fn request(&self, method: &str, mut params: Value) -> Result<Value, RpcError> {
        let id = Id::Number(self.next_id.fetch_add(1, Ordering::Relaxed).into());
        let client = Client::taken_from(&mut params);
        let message = Incoming::Request {
            id,
            method: method.to_owned(),
            params,
            client,
        };
        let who = Who {
            principal: self.principal.clone(),
            address: None,
        };
        let step = self
            .server
            .handle_as(&self.session, message, &self.sink, who);
        let reply = match step {
            Step::Reply(reply) => reply,
            Step::Call(call) | Step::Stream(call) => {
                call.await.and_then(Answer::take).ok_or_else(|| RpcError {
                    code: 0,
                    message: "the call was cancelled, and sent no response".to_owned(),
                    data: None,
                })?
            }
            Step::Nothing => unreachable!("a request is answered"),
        };
        let bytes = reply.into_bytes();
        let mut response: Value = serde_json::from_slice(&bytes).expect("a response is JSON");
        match response.get_mut("error").map(Value::take) {
            Some(error) => Err(RpcError {
                code: error["code"].as_i64().unwrap_or(0),
                message: error["message"].as_str().unwrap_or_default().to_owned(),
                data: error.get("data").cloned(),
            }),
            None => Ok(response["result"].take()),
        }
    }

    /// What calls have sent the client so far, in order, and not read before: progress and log
    /// notifications, requests to the client.
    pub fn sent(&self) -> Vec<Value> {
        let mut sent = self.sent.lock().unwrap_or_else(|e| e.into_inner());
        let mut messages = Vec::new();
        while let Some(bytes) = sent.try_recv() {
            // An empty message asks an HTTP transport to end a stream: nothing is sent.
            if !bytes.is_empty() {
                messages.push(serde_json::from_slice(&bytes).expect("a message is JSON"));
            }
        }
        messages
    }
}

impl fmt::Debug for TestClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TestClient").finish_non_exhaustive()
    }
}
