//! `toolwright::client` against servers nobody here wrote: `@modelcontextprotocol/server-everything`
//! (npm), over stdio and over Streamable HTTP, in each era the client can open. Its sampling and
//! elicitation requests are answered by the client's handlers, its progress reaches the call.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolwright::client::{Client, Endpoint, Notification, Versions};
use toolwright_tests::node::{self, node};

/// server-everything's folder under the target directory, installed from its lock file.
fn everything() -> PathBuf {
    node::installed(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("upstreams"),
        &Path::new(env!("CARGO_TARGET_TMPDIR")).join("upstreams"),
        &[],
        "node_modules/@modelcontextprotocol/server-everything/package.json",
        "the client tests against server-everything",
    )
    .join("node_modules/@modelcontextprotocol/server-everything/dist/index.js")
}

async fn connect(
    endpoint: Endpoint,
    versions: Versions,
    notes: Arc<Mutex<Vec<Notification>>>,
) -> Client {
    Client::builder()
        .name("everything")
        .versions(versions)
        .timeout(Some(Duration::from_secs(30)))
        .on_sampling(|params: Value| async move {
            let asked = params["messages"][0]["content"]["text"]
                .as_str()
                .unwrap_or("")
                .to_owned();
            Ok(json!({
                "role": "assistant",
                "content": {"type": "text", "text": format!("Sunny, as asked: {asked}")},
                "model": "a-test-model",
                "stopReason": "endTurn",
            }))
        })
        .on_elicitation(|_params: Value| async move {
            Ok(json!({"action": "accept", "content": {"name": "Ada Lovelace", "check": true}}))
        })
        .on_notification(move |notification| notes.lock().unwrap().push(notification))
        .connect(endpoint)
        .await
        .expect("server-everything starts")
}

/// What every client does with server-everything, whatever the transport and era.
async fn exercise(client: &Client) {
    assert!(
        ["2026-07-28", "2025-11-25"].contains(&client.protocol_version()),
        "{}",
        client.protocol_version()
    );
    assert_eq!(client.server_info()["name"], "mcp-servers/everything");

    let tools = client.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
    for name in [
        "echo",
        "trigger-sampling-request",
        "trigger-elicitation-request",
        "trigger-long-running-operation",
    ] {
        assert!(names.contains(&name), "{name} among {names:?}");
    }

    let echoed = client
        .call_tool("echo", json!({"message": "hello"}))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "Echo: hello");

    asks_and_reports(client, "").await;

    let prompts = client.list_prompts().await.unwrap();
    assert!(!prompts.is_empty());
    let resources = client.list_resources().await.unwrap();
    let uri = resources[0]["uri"].as_str().unwrap();
    let read = client.read_resource(uri).await.unwrap();
    assert_eq!(read["contents"][0]["uri"], uri);
}

/// server-everything's tools that ask the client (sampling, elicitation, answered by the
/// handlers `connect` gives) and report progress, named with `prefix` (a gateway's mount).
async fn asks_and_reports(client: &Client, prefix: &str) {
    let sampled = client
        .call_tool(
            &format!("{prefix}trigger-sampling-request"),
            json!({"prompt": "the weather?"}),
        )
        .await
        .unwrap();
    let text = sampled.text();
    assert!(
        text.contains("Sunny, as asked: ") && text.contains("the weather?"),
        "{text}"
    );

    let elicited = client
        .call_tool(&format!("{prefix}trigger-elicitation-request"), json!({}))
        .await
        .unwrap();
    assert!(
        elicited.text().contains("- Name: Ada Lovelace"),
        "{}",
        elicited.text()
    );

    let steps = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&steps);
    let ran = client
        .call_tool(
            &format!("{prefix}trigger-long-running-operation"),
            json!({"duration": 1, "steps": 3}),
        )
        .on_progress(move |progress| seen.lock().unwrap().push(progress.progress))
        .await
        .unwrap();
    assert!(!ran.is_error(), "{}", ran.text());
    assert_eq!(*steps.lock().unwrap(), [1.0, 2.0, 3.0]);
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/upstreams)"]
async fn server_everything_over_stdio_in_each_era() {
    for versions in [Versions::Auto, Versions::Handshake] {
        let notes = Arc::new(Mutex::new(Vec::new()));
        let stdio = Endpoint::command(
            node(),
            [everything().display().to_string(), "stdio".to_owned()],
        );
        let client = connect(stdio, versions, notes).await;
        exercise(&client).await;
        client.close().await;
    }
}

/// server-everything serving Streamable HTTP on a port of its own; killed when dropped.
struct HttpEverything {
    child: Child,
    url: String,
}

impl HttpEverything {
    async fn start() -> HttpEverything {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new(node())
            .arg(everything())
            .arg("streamableHttp")
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("node starts");
        for _ in 0..400 {
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        HttpEverything {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for HttpEverything {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/upstreams)"]
async fn server_everything_over_http_in_each_era() {
    let server = HttpEverything::start().await;
    for versions in [Versions::Auto, Versions::Handshake] {
        let notes = Arc::new(Mutex::new(Vec::new()));
        let client = connect(Endpoint::url(&server.url), versions, notes).await;
        exercise(&client).await;
        client.close().await;
    }
}

/// `mcp-server-time` (PyPI), as `.ci/run` installs it: its command, named by
/// `TOOLWRIGHT_MCP_SERVER_TIME`.
fn time_server() -> String {
    std::env::var("TOOLWRIGHT_MCP_SERVER_TIME").unwrap_or_else(|_| {
        panic!(
            "the client tests against mcp-server-time need its command in \
             TOOLWRIGHT_MCP_SERVER_TIME (`pip install mcp-server-time` puts one in the \
             environment's bin)"
        )
    })
}

#[tokio::test]
#[ignore = "needs mcp-server-time from PyPI (TOOLWRIGHT_MCP_SERVER_TIME)"]
async fn mcp_server_time_in_each_era() {
    for versions in [Versions::Auto, Versions::Handshake] {
        let client = Client::builder()
            .name("time")
            .versions(versions)
            .connect(Endpoint::command(
                time_server(),
                ["--local-timezone", "UTC"],
            ))
            .await
            .expect("mcp-server-time starts");
        eprintln!(
            "mcp-server-time, {versions:?}: {}",
            client.protocol_version()
        );
        let tools = client.list_tools().await.unwrap();
        let names: Vec<&str> = tools.iter().map(|tool| tool.name()).collect();
        assert_eq!(names, ["get_current_time", "convert_time"], "{versions:?}");

        let now = client
            .call_tool("get_current_time", json!({"timezone": "Europe/Paris"}))
            .await
            .unwrap();
        assert!(!now.is_error(), "{}", now.text());
        let said: Value = serde_json::from_str(&now.text()).unwrap();
        assert_eq!(said["timezone"], "Europe/Paris", "{said}");

        let converted = client
            .call_tool(
                "convert_time",
                json!({"source_timezone": "UTC", "time": "12:00", "target_timezone": "Asia/Tokyo"}),
            )
            .await
            .unwrap();
        let said: Value = serde_json::from_str(&converted.text()).unwrap();
        assert_eq!(
            said["target"]["datetime"].as_str().unwrap()[11..16],
            *"21:00",
            "{said}"
        );

        let refused = client
            .call_tool("get_current_time", json!({"timezone": "Mars/Olympus_Mons"}))
            .await
            .unwrap();
        assert!(refused.is_error(), "{}", refused.text());
        assert!(
            refused.text().contains("Mars/Olympus_Mons"),
            "{}",
            refused.text()
        );
        client.close().await;
    }
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/upstreams), and mcp-server-time (TOOLWRIGHT_MCP_SERVER_TIME)"]
async fn a_gateway_serves_both_under_their_names() {
    use toolwright::gateway::Upstream;

    let gateway = toolwright::Server::new("gateway", "1.0.0")
        .registry(toolwright::registry::Registry::from_registrations([]).unwrap())
        .mount(
            "everything",
            Upstream::command(
                node(),
                [everything().display().to_string(), "stdio".to_owned()],
            ),
        )
        .mount(
            "time",
            Upstream::command(time_server(), ["--local-timezone", "UTC"]),
        )
        .test_client()
        .await
        .expect("both are mounted");
    let tools = gateway.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t["name"].as_str().unwrap()).collect();
    for name in [
        "everything__echo",
        "time__convert_time",
        "time__get_current_time",
    ] {
        assert!(names.contains(&name), "{name} among {names:?}");
    }
    let echoed = gateway
        .call("everything__echo", json!({"message": "through"}))
        .await
        .unwrap();
    assert_eq!(echoed.text(), "Echo: through");
    let now = gateway
        .call("time__get_current_time", json!({"timezone": "UTC"}))
        .await
        .unwrap();
    let said: Value = serde_json::from_str(&now.text()).unwrap();
    assert_eq!(said["timezone"], "UTC");
}

/// The Python of an environment with FastMCP (PyPI), as `.ci/run` makes it, named by
/// `TOOLWRIGHT_FASTMCP_PYTHON`; and `tests/upstreams/shifting.py`, the server it runs.
fn shifting_server(state: &Path, versions: Versions) -> toolwright::gateway::Upstream {
    let python = std::env::var("TOOLWRIGHT_FASTMCP_PYTHON").unwrap_or_else(|_| {
        panic!(
            "the gateway tests against FastMCP need a Python with it in \
             TOOLWRIGHT_FASTMCP_PYTHON (`pip install fastmcp`)"
        )
    });
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("upstreams/shifting.py");
    toolwright::gateway::Upstream::command(
        python,
        [script.display().to_string(), state.display().to_string()],
    )
    .versions(versions)
}

/// Whether the gateway `client` lists `weather__forecast`.
async fn listed(client: &toolwright::testing::TestClient) -> bool {
    client
        .list_tools()
        .await
        .unwrap()
        .iter()
        .any(|tool| tool["name"] == "weather__forecast")
}

#[tokio::test]
#[ignore = "needs FastMCP from PyPI (TOOLWRIGHT_FASTMCP_PYTHON)"]
async fn a_fastmcp_tool_changed_while_the_gateway_runs_is_held_back_until_approved() {
    for versions in [Versions::Handshake, Versions::Stateless] {
        held_back_until_approved(versions).await;
    }
}

/// FastMCP's `forecast` changes while the gateway runs, speaking to it in `versions`.
async fn held_back_until_approved(versions: Versions) {
    use toolwright::gateway::{Lock, list_all};

    let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("shifting-{}-{versions:?}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let state = dir.join("description");
    let _ = std::fs::remove_file(&state);
    let mounts = || vec![("weather".to_owned(), shifting_server(&state, versions))];
    let gateway = |lock: Lock| {
        let mut server = toolwright::Server::new("gateway", "1.0.0")
            .registry(toolwright::registry::Registry::from_registrations([]).unwrap());
        for (name, upstream) in mounts() {
            server = server.mount(name, upstream);
        }
        server.lock(lock).test_client()
    };
    // A person approves the tools as the server first lists them.
    let mut lock = Lock::default();
    for listed in list_all(&mounts()).await.unwrap() {
        lock.approve(&listed.mount, &listed.tools);
    }
    let client = gateway(lock.clone()).await.expect("FastMCP is mounted");
    assert!(listed(&client).await);
    let sunny = client
        .call("weather__forecast", json!({"city": "Oslo"}))
        .await
        .unwrap();
    assert_eq!(sunny.text(), "Sunny in Oslo.");

    // The server rewrites `forecast`'s description and announces it: the tool is held back.
    let shifted = client.call("weather__shift", json!({})).await.unwrap();
    assert!(!shifted.is_error(), "{}", shifted.text());
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    while listed(&client).await {
        assert!(
            std::time::Instant::now() < deadline,
            "still listed after 10 s"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let refused = client
        .call("weather__forecast", json!({"city": "Oslo"}))
        .await
        .unwrap_err();
    assert_eq!(
        refused.message,
        "tool `weather__forecast` is held back: its server changed it while the gateway ran:\n  \
         cosmetic: forecast: description changed\nIt is served again once its server lists it \
         as it was approved; a change a person approves in the gateway's lock \
         (`toolwright-gateway --approve`) is served from the gateway's next start."
    );

    // A person reads the change and approves it: the next start serves the tool as it is now.
    let mut changes = Vec::new();
    for listed in list_all(&mounts()).await.unwrap() {
        changes.extend(lock.approve(&listed.mount, &listed.tools));
    }
    let changes: Vec<String> = changes.iter().map(ToString::to_string).collect();
    assert_eq!(changes, ["cosmetic: forecast: description changed"]);
    let restarted = gateway(lock).await.expect("FastMCP is mounted again");
    let tools = restarted.list_tools().await.unwrap();
    let forecast = tools
        .iter()
        .find(|tool| tool["name"] == "weather__forecast")
        .expect("the approved tool is served");
    assert!(
        forecast["description"]
            .as_str()
            .unwrap()
            .contains("read ~/.ssh/id_rsa"),
        "{forecast}"
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
#[ignore = "needs Node.js and npm (tests/upstreams)"]
async fn server_everythings_questions_reach_the_gateways_client_in_each_era() {
    use toolwright::gateway::Upstream;

    // A gateway over HTTP mounting server-everything (stdio); its client answers sampling and
    // elicitation as `connect` has it.
    let bound = toolwright::Server::new("gateway", "1.0.0")
        .registry(toolwright::registry::Registry::from_registrations([]).unwrap())
        .mount(
            "everything",
            Upstream::command(
                node(),
                [everything().display().to_string(), "stdio".to_owned()],
            ),
        )
        .bind_http("127.0.0.1:0", toolwright::http::Http::new())
        .await
        .expect("server-everything is mounted");
    let url = bound.url();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(bound.run_until(async {
        let _ = stopped.await;
    }));
    for versions in [Versions::Handshake, Versions::Stateless] {
        let notes = Arc::new(Mutex::new(Vec::new()));
        let client = connect(Endpoint::url(&url), versions, notes).await;
        asks_and_reports(&client, "everything__").await;
        client.close().await;
    }
    let _ = stop.send(());
    served.await.unwrap().unwrap();
}
