//! What the gateway costs: `echo` called on the bench server directly and through
//! `toolwright-gateway` mounting it (`bench__echo`), in turn, unpinned and pinned, with the CPU
//! time each process spent per call (and the bench server's, called directly in 2026-07-28 as
//! the gateway calls it); the gateway's memory with 10 mounted servers; and listing and
//! searching 1,000 mounted tools.
//!
//! ```text
//! cd bench && cargo run --release -p harness -- --gateway
//! ```

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use crate::server::{Connection, Server, thread_cpu_times};
use crate::stats::{self, Samples};
use crate::workspace::Workspace;
use crate::{
    CALL_REQUESTS, CALL_WARMUP, ECHO, LIST_REQUESTS, LIST_WARMUP, MIB, RUNS, pin_self, secs,
};

/// `echo`, as the gateway serves the bench server's.
const BENCH_ECHO: &str = r#"{"name":"bench__echo","arguments":{"text":"hello"}}"#;
/// `echo` in protocol 2026-07-28, with the envelope the gateway's client puts in every request
/// it forwards: the bench server called directly as the gateway calls it.
const STATELESS_ECHO: &str = r#"{"name":"echo","arguments":{"text":"hello"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{},"url":{}},"sampling":{}},"io.modelcontextprotocol/clientInfo":{"name":"toolwright-client","version":"0.1.0"},"io.modelcontextprotocol/logLevel":"info","progressToken":1}}"#;
/// `echo`, as FastMCP's proxy serves it, mounted under the namespace `bench`.
const FASTMCP_ECHO: &str = r#"{"name":"bench_echo","arguments":{"text":"hello"}}"#;
/// Searches of the progressive catalog per run, after as many untimed.
const SEARCHES: usize = 200;

/// Runs every measure; returns the tables, in Markdown.
pub(crate) fn measure(workspace: &Workspace) -> io::Result<String> {
    workspace.build(&[Server::Toolwright], 50)?;
    workspace.build(&[Server::Toolwright], 500)?;
    let small = workspace.binary(Server::Toolwright, 50);
    let large = workspace.binary(Server::Toolwright, 500);
    let gateway = workspace.build_gateway()?;
    let dir = workspace.root().join("target").join("gateway-configs");
    std::fs::create_dir_all(&dir)?;

    // Unpinned, a forwarded call's time is mostly the wake-ups of idle CPUs: how they wait is
    // said with the figures.
    let mut out = format!("{}.\n\n", crate::report::idle_cpus());
    let one = configure(&gateway, &dir, "one", &[("bench", &small)], None)?;
    let one_handshake = configure(
        &gateway,
        &dir,
        "one-handshake",
        &[("bench", &small)],
        Some("handshake"),
    )?;
    let fastmcp = fastmcp(workspace.root());
    if fastmcp.is_none() {
        crate::progress(
            "gateway: FastMCP's proxy not measured: TOOLWRIGHT_FASTMCP_PYTHON names no Python \
             with FastMCP (`pip install fastmcp`)",
        );
    }
    out.push_str(&round_trips(
        &small,
        &gateway,
        [&one, &one_handshake],
        fastmcp.as_ref(),
    )?);

    let ten: Vec<(String, &Path)> = (0..10)
        .map(|i| (format!("bench{i}"), small.as_path()))
        .collect();
    let ten: Vec<(&str, &Path)> = ten.iter().map(|(n, p)| (n.as_str(), *p)).collect();
    let ten = configure(&gateway, &dir, "ten", &ten, None)?;
    out.push_str(&memory(&small, &gateway, &ten)?);

    let thousand = configure(
        &gateway,
        &dir,
        "thousand",
        &[("a", &large), ("b", &large)],
        None,
    )?;
    out.push_str(&listing(&large, &gateway, &thousand)?);
    Ok(out)
}

/// Writes the configuration `name` mounting `mounts` (in the protocol era `versions` says, if
/// it says one) and approves their tools: its path.
fn configure(
    gateway: &Path,
    dir: &Path,
    name: &str,
    mounts: &[(&str, &Path)],
    versions: Option<&str>,
) -> io::Result<PathBuf> {
    let mut toml = String::from("name = \"bench-gateway\"\n");
    for (mount, binary) in mounts {
        let _ = writeln!(
            toml,
            "\n[upstreams.{mount}]\ncommand = [{:?}]",
            binary.display().to_string()
        );
        if let Some(versions) = versions {
            let _ = writeln!(toml, "versions = {versions:?}");
        }
    }
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml)?;
    let approved = Command::new(gateway)
        .arg("--config")
        .arg(&path)
        .arg("--approve")
        .env("RUST_LOG", "warn")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()?;
    if !approved.success() {
        return Err(io::Error::other(format!(
            "approving {} failed: {approved}",
            path.display()
        )));
    }
    Ok(path)
}

fn spawn_gateway(
    gateway: &Path,
    config: &Path,
    pinned: bool,
    args: &[&str],
) -> io::Result<Connection> {
    let config = config.display().to_string();
    let mut connection = Connection::spawn_with_args(
        Server::Gateway,
        gateway,
        pinned,
        args,
        &[("TOOLWRIGHT_GATEWAY_CONFIG", config.as_str())],
    )?;
    connection.initialize()?;
    Ok(connection)
}

/// FastMCP's proxy mounting the bench server, when `TOOLWRIGHT_FASTMCP_PYTHON` names a Python
/// with FastMCP: the Python, and the script.
fn fastmcp(workspace_root: &Path) -> Option<(PathBuf, PathBuf)> {
    let python = std::env::var_os("TOOLWRIGHT_FASTMCP_PYTHON")?;
    let script = workspace_root.join("servers/fastmcp-proxy/proxy.py");
    Some((PathBuf::from(python), script))
}

/// `RUNS` runs of one-at-a-time `echo` calls, direct, through the gateway (with `configs`: its
/// upstream in the era it negotiates, 2026-07-28, and in the handshake era the direct calls use)
/// and through FastMCP's proxy (when there is one) in turn, unpinned and pinned to one CPU: a
/// table row each.
fn round_trips(
    bench: &Path,
    gateway: &Path,
    configs: [&Path; 2],
    fastmcp: Option<&(PathBuf, PathBuf)>,
) -> io::Result<String> {
    let mut table = format!(
        "| 50 tools, `echo` round trip, median of {RUNS} runs' medians (each run's) | direct | \
         through `toolwright-gateway` | added | ratio | the same, its upstream in the handshake \
         era | added |"
    );
    if fastmcp.is_some() {
        table.push_str(" through FastMCP's proxy | added | FastMCP's added over the gateway's |");
    }
    table.push_str("\n| --- | ---: | ---: | ---: | ---: | ---: | ---: |");
    if fastmcp.is_some() {
        table.push_str(" ---: | ---: | ---: |");
    }
    table.push('\n');
    let mut cpu_table = String::from(
        "\n| 50 tools, `echo`: CPU time per call, all threads | the server called directly | \
         the same in 2026-07-28 (round trip; CPU) | `toolwright-gateway` | the server it mounts \
         (in 2026-07-28) | the two, over the direct server's | the gateway and the server it \
         mounts, in the handshake era |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for pinned in [false, true] {
        pin_self(pinned)?;
        let mut connections = Vec::new();
        let mut direct = Connection::spawn(Server::Toolwright, bench, pinned)?;
        direct.initialize()?;
        connections.push((direct, ECHO));
        for config in configs {
            connections.push((spawn_gateway(gateway, config, pinned, &[])?, BENCH_ECHO));
        }
        if let Some((python, script)) = fastmcp {
            let script = script.display().to_string();
            let bench = bench.display().to_string();
            let mut proxy = Connection::spawn_with_args(
                Server::FastmcpProxy,
                python,
                pinned,
                &[script.as_str(), bench.as_str()],
                &[],
            )?;
            proxy.initialize()?;
            connections.push((proxy, FASTMCP_ECHO));
        }
        // The server called directly in 2026-07-28, as the gateway calls it: no handshake.
        let stateless = connections.len();
        connections.push((
            Connection::spawn(Server::Toolwright, bench, pinned)?,
            STATELESS_ECHO,
        ));
        let count = connections.len();
        // The direct servers, the gateways, and the servers the gateways started.
        let pids = [
            vec![connections[0].0.pid()],
            vec![connections[stateless].0.pid()],
            vec![connections[1].0.pid()],
            children(connections[1].0.pid())?,
            vec![connections[2].0.pid()],
            children(connections[2].0.pid())?,
        ];
        let cpu_before = pids.each_ref().map(|pids| cpu_time(pids));
        let mut runs: Vec<Vec<f64>> = vec![Vec::new(); count];
        for round in 0..RUNS {
            for k in 0..count {
                let index = (round + k) % count;
                let (connection, call) = &mut connections[index];
                let mut samples = Samples::default();
                for i in 0..CALL_WARMUP + CALL_REQUESTS {
                    let (elapsed, _) = connection.call("tools/call", call)?;
                    if i >= CALL_WARMUP {
                        samples.push(elapsed);
                    }
                }
                runs[index].push(secs(samples.median()) * 1e6);
            }
        }
        let cpu_after = pids.each_ref().map(|pids| cpu_time(pids));
        for (connection, _) in connections {
            connection.close()?;
        }
        let calls = (RUNS * (CALL_WARMUP + CALL_REQUESTS)) as f64;
        let mut spent = [0.0; 6];
        for (k, (before, after)) in cpu_before.into_iter().zip(cpu_after).enumerate() {
            spent[k] = secs(after?.saturating_sub(before?)) * 1e6 / calls;
        }
        let medians: Vec<f64> = runs.iter().map(|runs| stats::median(runs)).collect();
        let _ = writeln!(
            cpu_table,
            "| {} | {:.1} µs | {:.1} µs; {:.1} µs | {:.1} µs | {:.1} µs | +{:.1} µs | {:.1} µs; \
             {:.1} µs |",
            if pinned {
                "pinned to one CPU"
            } else {
                "unpinned"
            },
            spent[0],
            medians[stateless],
            spent[1],
            spent[2],
            spent[3],
            spent[2] + spent[3] - spent[0],
            spent[4],
            spent[5],
        );
        let (d, g, h) = (medians[0], medians[1], medians[2]);
        let _ = write!(
            table,
            "| {} | {} | {} | +{:.1} µs | {:.2}× | {} | +{:.1} µs |",
            if pinned {
                "pinned to one CPU"
            } else {
                "unpinned"
            },
            stats::with_runs(d, &runs[0]),
            stats::with_runs(g, &runs[1]),
            g - d,
            g / d,
            stats::with_runs(h, &runs[2]),
            h - d,
        );
        if fastmcp.is_some() {
            let f = medians[3];
            let _ = write!(
                table,
                " {} | +{:.1} µs | {:.1}× |",
                stats::with_runs(f, &runs[3]),
                f - d,
                (f - d) / (g - d),
            );
        }
        table.push('\n');
    }
    pin_self(false)?;
    table.push_str(&cpu_table);
    Ok(table)
}

/// The processes `pid` started.
fn children(pid: u32) -> io::Result<Vec<u32>> {
    let mut children = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))? {
        let listed = std::fs::read_to_string(task?.path().join("children"))?;
        children.extend(
            listed
                .split_whitespace()
                .filter_map(|id| id.parse::<u32>().ok()),
        );
    }
    Ok(children)
}

/// The CPU time the processes `pids` have had so far, all their threads.
fn cpu_time(pids: &[u32]) -> io::Result<Duration> {
    let mut total = Duration::ZERO;
    for &pid in pids {
        for (.., time) in thread_cpu_times(pid)? {
            total += time;
        }
    }
    Ok(total)
}

/// The gateway's memory with ten 50-tool servers mounted, after a list and a call of each, and
/// one mounted server's, for scale.
fn memory(bench: &Path, gateway: &Path, config: &Path) -> io::Result<String> {
    let mut through = spawn_gateway(gateway, config, false, &[])?;
    through.call("tools/list", "{}")?;
    for i in 0..10 {
        let call = BENCH_ECHO.replace("bench__", &format!("bench{i}__"));
        through.call("tools/call", &call)?;
    }
    let (rss, peak) = (through.status_kib("VmRSS")?, through.status_kib("VmHWM")?);
    through.close()?;
    let mut alone = Connection::spawn(Server::Toolwright, bench, false)?;
    alone.initialize()?;
    alone.call("tools/list", "{}")?;
    alone.call("tools/call", ECHO)?;
    let upstream = alone.status_kib("VmRSS")?;
    alone.close()?;
    let mib = |kib: u64| kib as f64 * 1024.0 / MIB;
    Ok(format!(
        "\n| memory, after a list and a call of each | RSS | peak (VmHWM) |\n| --- | ---: | ---: |\n\
         | `toolwright-gateway` with 10 mounted 50-tool servers (520 tools) | {:.1} MiB | {:.1} MiB |\n\
         | one mounted server's own process, for scale | {:.1} MiB | – |\n",
        mib(rss),
        mib(peak),
        mib(upstream),
    ))
}

/// `tools/list` of the 1,004 tools of two mounted 500-tool servers, against one such server
/// directly; and a `search_tools` query of the progressive catalog over them.
fn listing(bench: &Path, gateway: &Path, config: &Path) -> io::Result<String> {
    let time = |connection: &mut Connection, method: &str, params: &str| -> io::Result<f64> {
        let mut samples = Samples::default();
        for i in 0..LIST_WARMUP + LIST_REQUESTS {
            let (elapsed, _) = connection.call(method, params)?;
            if i >= LIST_WARMUP {
                samples.push(elapsed);
            }
        }
        Ok(secs(samples.median()) * 1e3)
    };
    let mut direct = Connection::spawn(Server::Toolwright, bench, false)?;
    direct.initialize()?;
    let direct_list = time(&mut direct, "tools/list", "{}")?;
    direct.close()?;
    let mut through = spawn_gateway(gateway, config, false, &[])?;
    let gateway_list = time(&mut through, "tools/list", "{}")?;
    through.close()?;
    let mut catalog = spawn_gateway(gateway, config, false, &["--catalog", "progressive"])?;
    let mut samples = Samples::default();
    let search = r#"{"name":"search_tools","arguments":{"query":"add two numbers with a label"}}"#;
    for i in 0..2 * SEARCHES {
        let (elapsed, _) = catalog.call("tools/call", search)?;
        if i >= SEARCHES {
            samples.push(elapsed);
        }
    }
    catalog.close()?;
    Ok(format!(
        "\n| listing and searching mounted tools, median | time |\n| --- | ---: |\n\
         | `tools/list`, one 502-tool server directly | {direct_list:.2} ms |\n\
         | `tools/list` through the gateway, two 502-tool servers mounted (1,004 tools) | {gateway_list:.2} ms |\n\
         | `search_tools` (progressive catalog) over the 1,004 mounted tools | {:.0} µs |\n",
        secs(samples.median()) * 1e6,
    ))
}
