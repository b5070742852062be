//! A client of a [`Server`] in the same process, over in-memory pipes: newline-delimited
//! JSON-RPC, as on stdio.

use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream, Lines};
use tokio::task::JoinHandle;
use toolwright::Server;
use toolwright::registry::Registry;

/// How long the client waits for each line, and for `serve` to return.
pub const TIMEOUT: Duration = Duration::from_secs(5);

/// The protocol version [`Client::initialize`] asks for.
pub const PROTOCOL_VERSION: &str = "2025-11-25";

/// The capacity of each pipe, in bytes.
const PIPE: usize = 64 * 1024;

/// The `params` of an `initialize` request for protocol `version`, from a client that declares
/// no capabilities.
pub fn initialize_params(version: &str) -> Value {
    json!({
        "protocolVersion": version,
        "capabilities": {},
        "clientInfo": {"name": "toolwright-tests", "version": "1.0.0"}
    })
}

/// A client on the other end of a server's pipes.
///
/// [`Client::with`] spawns [`Server::serve`] on a task, with every tool of the test binary. The
/// client writes one JSON-RPC message per line to the server's input and reads the lines the
/// server writes, each of which must be JSON. Every wait is bounded, by [`TIMEOUT`] unless the
/// method takes its own: a server that never answers fails the test instead of hanging it.
///
/// Dropping the client closes both pipes and leaves the `serve` task to end on its own;
/// [`Client::finish`] closes the input and checks that `serve` ends with `Ok`.
#[derive(Debug)]
pub struct Client {
    input: Option<DuplexStream>,
    output: Lines<BufReader<DuplexStream>>,
    server: Option<JoinHandle<Result<(), toolwright::Error>>>,
}

impl Client {
    /// A client of `Server::new("test-server", "0.0.1")`, through [`Client::with`].
    ///
    /// # Panics
    ///
    /// As [`Client::with`] does.
    pub fn start() -> Client {
        Client::with(Server::new("test-server", "0.0.1"))
    }

    /// A client of `server`, serving every tool registered in the test binary
    /// ([`Registry::collect`]).
    ///
    /// # Panics
    ///
    /// If the registered tools conflict, or outside a Tokio runtime.
    pub fn with(server: Server) -> Client {
        let registry = Registry::collect().expect("the test tools do not conflict");
        Client::serving(server.registry(registry))
    }

    /// A client of `server` as it is configured: its tools are the ones it would find itself,
    /// unless it was given a registry.
    ///
    /// # Panics
    ///
    /// Outside a Tokio runtime.
    pub fn serving(server: Server) -> Client {
        let (input, server_input) = tokio::io::duplex(PIPE);
        let (server_output, output) = tokio::io::duplex(PIPE);
        let server = tokio::spawn(server.serve(server_input, server_output));
        Client {
            input: Some(input),
            output: BufReader::new(output).lines(),
            server: Some(server),
        }
    }

    /// Writes `line` and a newline to the server's input, as it is: for messages that are not
    /// JSON-RPC, or not JSON.
    ///
    /// # Panics
    ///
    /// If the input was closed, or the write fails.
    pub async fn send_line(&mut self, line: &str) {
        let input = self.input.as_mut().expect("the input is open");
        input.write_all(line.as_bytes()).await.unwrap();
        input.write_all(b"\n").await.unwrap();
    }

    /// Writes `message` as one line.
    ///
    /// # Panics
    ///
    /// As [`Client::send_line`] does.
    pub async fn send(&mut self, message: Value) {
        self.send_line(&message.to_string()).await;
    }

    /// Sends the notification `method` with `params`.
    ///
    /// # Panics
    ///
    /// As [`Client::send_line`] does.
    pub async fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await;
    }

    /// Sends the request `method` with `id` and `params`, without waiting for the response.
    ///
    /// # Panics
    ///
    /// As [`Client::send_line`] does.
    pub async fn send_request(&mut self, id: impl Into<Value>, method: &str, params: Value) {
        let id = id.into();
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
    }

    /// Sends `tools/call` for the tool `name` with `arguments`, without waiting for the
    /// response.
    ///
    /// # Panics
    ///
    /// As [`Client::send_line`] does.
    pub async fn send_call(&mut self, id: impl Into<Value>, name: &str, arguments: Value) {
        self.send_request(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
        .await;
    }

    /// The next line the server writes, as JSON.
    ///
    /// # Panics
    ///
    /// If no line comes within [`TIMEOUT`], the output ends, or the line is not JSON.
    pub async fn recv(&mut self) -> Value {
        self.recv_within(TIMEOUT)
            .await
            .expect("the server writes in time")
    }

    /// The next line the server writes within `wait`, as JSON; `None` if it writes nothing in
    /// that time. A line that comes later is not lost: the next read returns it.
    ///
    /// # Panics
    ///
    /// If the output ends, or the line is not JSON.
    pub async fn recv_within(&mut self, wait: Duration) -> Option<Value> {
        let line = tokio::time::timeout(wait, self.output.next_line())
            .await
            .ok()?
            .unwrap()
            .expect("the server's output is open");
        Some(serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")))
    }

    /// Sends a request; returns the whole response and the messages without an `id` (the
    /// notifications) the server wrote before it.
    ///
    /// # Panics
    ///
    /// If the first message with an `id` answers another request, or as [`Client::recv`] does.
    pub async fn exchange(
        &mut self,
        id: impl Into<Value>,
        method: &str,
        params: Value,
    ) -> (Value, Vec<Value>) {
        let id = id.into();
        self.send_request(id.clone(), method, params).await;
        let mut notifications = Vec::new();
        loop {
            let message = self.recv().await;
            if message.get("id").is_some() {
                assert_eq!(
                    message["id"], id,
                    "a response to another request: {message}"
                );
                return (message, notifications);
            }
            notifications.push(message);
        }
    }

    /// Sends a request and returns the whole response, which must come before any notification.
    ///
    /// # Panics
    ///
    /// If a notification comes before the response, or as [`Client::exchange`] does.
    pub async fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        let (response, notifications) = self.exchange(id, method, params).await;
        assert_eq!(notifications, Vec::<Value>::new(), "for {method}");
        response
    }

    /// The `result` of a request, which must succeed.
    ///
    /// # Panics
    ///
    /// If the response is not a result, or as [`Client::request`] does.
    pub async fn result(&mut self, id: i64, method: &str, params: Value) -> Value {
        let response = self.request(id, method, params).await;
        response
            .get("result")
            .unwrap_or_else(|| panic!("not a result: {response}"))
            .clone()
    }

    /// Calls the tool `name` with `arguments`; returns the `CallToolResult`.
    ///
    /// # Panics
    ///
    /// As [`Client::result`] does.
    pub async fn call(&mut self, id: i64, name: &str, arguments: Value) -> Value {
        self.result(
            id,
            "tools/call",
            json!({"name": name, "arguments": arguments}),
        )
        .await
    }

    /// Sends `tools/call` with `params`; returns the response's `result` (`null` if there is
    /// none) and the notifications sent before it.
    ///
    /// # Panics
    ///
    /// As [`Client::exchange`] does.
    pub async fn call_notified(&mut self, id: i64, params: Value) -> (Value, Vec<Value>) {
        let (response, notifications) = self.exchange(id, "tools/call", params).await;
        (response["result"].clone(), notifications)
    }

    /// The `initialize` handshake with [`initialize_params`] at [`PROTOCOL_VERSION`].
    ///
    /// # Panics
    ///
    /// As [`Client::initialize_with`] does.
    pub async fn initialize(&mut self) {
        self.initialize_with(initialize_params(PROTOCOL_VERSION))
            .await;
    }

    /// The `initialize` handshake with `params`: sends `initialize` with id 0, checks that the
    /// server answered with the protocol version asked for, and sends
    /// `notifications/initialized`.
    ///
    /// # Panics
    ///
    /// If the server answers with another version or an error, or as [`Client::request`] does.
    pub async fn initialize_with(&mut self, params: Value) {
        let version = params["protocolVersion"].clone();
        let response = self.request(0, "initialize", params).await;
        assert_eq!(response["result"]["protocolVersion"], version, "{response}");
        self.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
    }

    /// Closes the server's input, as a client that goes away does. Closing it again does
    /// nothing.
    pub fn close_input(&mut self) {
        drop(self.input.take());
    }

    /// Every line the server writes until its output ends, as JSON.
    ///
    /// # Panics
    ///
    /// If a line, or the end, does not come within [`TIMEOUT`], or a line is not JSON.
    pub async fn rest(&mut self) -> Vec<Value> {
        let mut rest = Vec::new();
        while let Some(line) = tokio::time::timeout(TIMEOUT, self.output.next_line())
            .await
            .expect("the server ends in time")
            .unwrap()
        {
            rest.push(
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON ({e}): {line}")),
            );
        }
        rest
    }

    /// Waits for `serve` to return; returns what it returned.
    ///
    /// # Panics
    ///
    /// If `serve` does not return within [`TIMEOUT`], panicked, or was waited for before.
    pub async fn served(&mut self) -> Result<(), toolwright::Error> {
        let server = self.server.take().expect("serve was not waited for before");
        tokio::time::timeout(TIMEOUT, server)
            .await
            .expect("serve returns in time")
            .expect("serve does not panic")
    }

    /// Closes the input; returns every line written after the last one read, once `serve` has
    /// ended with `Ok`.
    ///
    /// # Panics
    ///
    /// If `serve` ends with an error, or as [`Client::rest`] and [`Client::served`] do.
    pub async fn finish(mut self) -> Vec<Value> {
        self.close_input();
        let rest = self.rest().await;
        self.served().await.expect("serve ends with Ok");
        rest
    }
}
