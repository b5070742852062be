//! toolwright-gateway's command line: what it says of a configuration it cannot use, and a lock
//! written by `--approve`.

use std::path::PathBuf;
use std::process::{Command, Output};

const GATEWAY: &str = env!("CARGO_BIN_EXE_toolwright-gateway");

/// A folder of this test's own, made anew.
fn folder(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("toolwright-gateway-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn gateway(args: &[&str]) -> Output {
    Command::new(GATEWAY)
        .args(args)
        .env_remove("TOOLWRIGHT_GATEWAY_CONFIG")
        .env_remove("TOOLWRIGHT_GATEWAY_LOCK")
        .output()
        .expect("the gateway runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn a_configuration_it_cannot_read_stops_it_with_status_2() {
    let dir = folder("unread");
    let missing = dir.join("gateway.toml");
    let output = gateway(&["--config", missing.to_str().unwrap(), "--print-manifest"]);
    assert_eq!(output.status.code(), Some(2));
    assert!(
        stderr(&output).starts_with(&format!("error: cannot read {}: ", missing.display())),
        "{}",
        stderr(&output)
    );

    let config = dir.join("bad.toml");
    std::fs::write(
        &config,
        "[upstreams.time]\ncommand = [\"x\"]\nurl = \"http://h/mcp\"\n",
    )
    .unwrap();
    let output = gateway(&["--config", config.to_str().unwrap(), "--print-manifest"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        "error: upstream `time`: give a `command` or a `url`, not both\n"
    );

    let lock = dir.join("bad.lock");
    std::fs::write(&config, "name = \"empty\"\n").unwrap();
    std::fs::write(&lock, "[]").unwrap();
    let output = gateway(&["--config", config.to_str().unwrap(), "--print-manifest"]);
    assert_eq!(output.status.code(), Some(2));
    assert_eq!(
        stderr(&output),
        format!(
            "error: {} is not a gateway lock file: it lacks `\"toolwright-gateway-lock\": 1`\n",
            lock.display()
        )
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn approve_writes_the_lock_beside_the_configuration() {
    let dir = folder("approve");
    let config = dir.join("gateway.toml");
    std::fs::write(&config, "name = \"nothing-yet\"\n").unwrap();
    let output = gateway(&["--config", config.to_str().unwrap(), "--approve"]);
    assert!(output.status.success(), "{}", stderr(&output));
    let lock = dir.join("gateway.lock");
    assert_eq!(
        String::from_utf8_lossy(&output.stdout),
        format!("approved 0 tools of 0 servers in {}\n", lock.display())
    );
    let written: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&lock).unwrap()).unwrap();
    assert_eq!(
        written,
        serde_json::json!({"toolwright-gateway-lock": 1, "upstreams": {}})
    );
    let _ = std::fs::remove_dir_all(&dir);
}
