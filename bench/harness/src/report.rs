//! The figures as a table, the targets they are held to, and `BENCHMARKS.md`.

use std::fmt::Write as _;
use std::io;
use std::process::Command;

use crate::workspace::Workspace;

/// The line that ends the part of `BENCHMARKS.md` the harness writes. What follows it is written
/// by hand (the analysis) and kept when the harness rewrites the file.
const KEEP_BELOW: &str =
    "<!-- The harness writes everything above this line; what follows is kept as written. -->";

/// Which way a figure is better, and the word for it ("faster", "smaller").
#[derive(Clone, Copy, Debug)]
pub(crate) enum Better {
    Lower(&'static str),
    Higher(&'static str),
}

/// One measured quantity, for both servers: `[toolwright, rmcp]`, in `unit`.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) metric: String,
    pub(crate) unit: &'static str,
    pub(crate) values: [f64; 2],
    pub(crate) better: Better,
}

impl Row {
    /// How many times better toolwright's figure is than rmcp's (below 1: worse).
    pub(crate) fn advantage(&self) -> f64 {
        let [toolwright, rmcp] = self.values;
        match self.better {
            Better::Lower(_) => rmcp / toolwright,
            Better::Higher(_) => toolwright / rmcp,
        }
    }

    fn verdict(&self) -> String {
        let advantage = self.advantage();
        let word = match self.better {
            Better::Lower(word) | Better::Higher(word) => word,
        };
        if advantage >= 1.0 {
            format!("toolwright {advantage:.2}× {word}")
        } else {
            format!("rmcp {:.2}× {word}", 1.0 / advantage)
        }
    }
}

/// A goal for one row: toolwright's advantage must reach `needed`.
#[derive(Debug)]
pub(crate) struct Target {
    pub(crate) goal: &'static str,
    pub(crate) advantage: f64,
    pub(crate) needed: f64,
}

impl Target {
    pub(crate) fn is_met(&self) -> bool {
        self.advantage >= self.needed
    }
}

/// What the figures were measured on and with.
#[derive(Debug)]
pub(crate) struct Setting {
    cpus: usize,
    cpu_model: String,
    kernel: String,
    rustc: String,
    rmcp: String,
    toolwright: String,
    date: String,
}

impl Setting {
    pub(crate) fn describe(workspace: &Workspace) -> io::Result<Setting> {
        let cpuinfo = std::fs::read_to_string("/proc/cpuinfo")?;
        let cpu_model = cpuinfo
            .lines()
            .find_map(|line| line.strip_prefix("model name"))
            .and_then(|rest| rest.split_once(':'))
            .map(|(_, model)| model.trim().to_owned())
            .unwrap_or_else(|| "unknown".to_owned());
        let lock = std::fs::read_to_string(workspace.root().join("Cargo.lock"))?;
        let rmcp = locked_version(&lock, "rmcp").unwrap_or_else(|| "unknown".to_owned());
        let repository = workspace.repository().to_string_lossy().into_owned();
        let commit = output(
            "git",
            &["-C", &repository, "rev-parse", "--short=12", "HEAD"],
        );
        let dirty = output(
            "git",
            &[
                "-C",
                &repository,
                "status",
                "--porcelain",
                "--",
                "runtime",
                "macros",
            ],
        );
        let toolwright = if dirty.is_empty() {
            format!("commit {commit}")
        } else {
            format!("commit {commit} plus uncommitted changes in runtime/ or macros/")
        };
        Ok(Setting {
            cpus: std::thread::available_parallelism().map_or(0, |n| n.get()),
            cpu_model,
            kernel: output("uname", &["-sr"]),
            rustc: output("rustc", &["-V"]),
            rmcp,
            toolwright,
            date: output("date", &["-u", "+%Y-%m-%d %H:%M UTC"]),
        })
    }

    fn markdown(&self) -> String {
        format!(
            "- Machine: {} CPUs (nproc), {}; {}\n- Toolchain: {}\n- rmcp {} (features `server`, \
             `macros`, `transport-io`, plus its defaults); toolwright at {}\n- Date: {}\n",
            self.cpus,
            self.cpu_model,
            self.kernel,
            self.rustc,
            self.rmcp,
            self.toolwright,
            self.date
        )
    }
}

/// The results table, in Markdown with aligned columns, so it also reads as plain text.
pub(crate) fn table(rows: &[Row]) -> String {
    let cells: Vec<[String; 5]> = rows
        .iter()
        .map(|row| {
            [
                row.metric.clone(),
                format!("{} {}", number(row.values[0]), row.unit),
                format!("{} {}", number(row.values[1]), row.unit),
                format!("{:.2}", row.values[0] / row.values[1]),
                row.verdict(),
            ]
        })
        .collect();
    let header = [
        "measure",
        "toolwright",
        "rmcp",
        "toolwright / rmcp",
        "which is better",
    ]
    .map(str::to_owned);
    aligned(&header, &cells, &[false, true, true, true, false])
}

/// The targets, met or not.
pub(crate) fn targets_table(targets: &[Target]) -> String {
    let cells: Vec<[String; 4]> = targets
        .iter()
        .map(|target| {
            [
                target.goal.to_owned(),
                format!("{:.2}×", target.advantage),
                format!("≥ {:.2}×", target.needed),
                if target.is_met() { "met" } else { "NOT met" }.to_owned(),
            ]
        })
        .collect();
    let header = ["target", "toolwright's advantage", "needed", "verdict"].map(str::to_owned);
    aligned(&header, &cells, &[false, true, true, false])
}

/// Writes `BENCHMARKS.md` at the repository's root, keeping the hand-written part of the old
/// one.
pub(crate) fn write_benchmarks_md(
    workspace: &Workspace,
    setting: &Setting,
    method: &str,
    rows: &[Row],
    targets: &[Target],
) -> io::Result<()> {
    let path = workspace.repository().join("BENCHMARKS.md");
    let kept = match std::fs::read_to_string(&path) {
        Ok(old) => old
            .split_once(KEEP_BELOW)
            .map(|(_, below)| below.to_owned()),
        Err(err) if err.kind() == io::ErrorKind::NotFound => None,
        Err(err) => return Err(err),
    };
    let mut text = String::new();
    writeln!(text, "# Benchmarks: toolwright against rmcp\n").expect("writing to a String");
    writeln!(
        text,
        "toolwright's stdio server measured against [rmcp](https://crates.io/crates/rmcp), the \
         official Rust MCP SDK, serving the same tools. Written by the harness in `bench/`, which \
         is not part of the main workspace. To reproduce, from the repository's root:\n\n\
         ```sh\ncd bench && cargo run --release -p harness\n```\n"
    )
    .expect("writing to a String");
    writeln!(text, "## Setting\n\n{}", setting.markdown()).expect("writing to a String");
    writeln!(text, "## Results\n\n{}", table(rows)).expect("writing to a String");
    writeln!(text, "## Targets\n\n{}", targets_table(targets)).expect("writing to a String");
    writeln!(text, "## Method\n\n{method}").expect("writing to a String");
    // The kept part starts with the line break that ends the marker's line.
    text.push_str(KEEP_BELOW);
    text.push_str(kept.as_deref().unwrap_or("\n"));
    std::fs::write(path, text)
}

fn aligned<const N: usize>(
    header: &[String; N],
    rows: &[[String; N]],
    right: &[bool; N],
) -> String {
    let mut widths = header.clone().map(|h| h.chars().count());
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |cells: &[String; N]| {
        let mut out = String::from("|");
        for ((cell, width), right) in cells.iter().zip(widths).zip(right) {
            let pad = " ".repeat(width - cell.chars().count());
            if *right {
                write!(out, " {pad}{cell} |").expect("writing to a String");
            } else {
                write!(out, " {cell}{pad} |").expect("writing to a String");
            }
        }
        out.push('\n');
        out
    };
    let mut out = line(header);
    out.push('|');
    for (width, right) in widths.iter().zip(right) {
        let dashes = "-".repeat(width.saturating_sub(1));
        if *right {
            write!(out, " {dashes}: |").expect("writing to a String");
        } else {
            write!(out, " -{dashes} |").expect("writing to a String");
        }
    }
    out.push('\n');
    for row in rows {
        out.push_str(&line(row));
    }
    out
}

/// A figure with three significant digits or so, and thousands separated.
fn number(value: f64) -> String {
    if value >= 1000.0 {
        let digits = format!("{value:.0}");
        let mut out = String::new();
        for (i, digit) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(digit);
        }
        out
    } else if value >= 100.0 {
        format!("{value:.0}")
    } else if value >= 10.0 {
        format!("{value:.1}")
    } else {
        format!("{value:.2}")
    }
}

/// The version of `package` that a `Cargo.lock` pins.
fn locked_version(lock: &str, package: &str) -> Option<String> {
    let name = format!("name = \"{package}\"");
    let mut lines = lock.lines();
    lines.find(|line| *line == name)?;
    let version = lines.next()?.strip_prefix("version = \"")?;
    Some(version.trim_end_matches('"').to_owned())
}

/// What a command prints, trimmed; empty when it cannot run.
fn output(program: &str, args: &[&str]) -> String {
    Command::new(program)
        .args(args)
        .output()
        .map(|out| String::from_utf8_lossy(&out.stdout).trim().to_owned())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_and_versions() {
        assert_eq!(number(1234567.4), "1,234,567");
        assert_eq!(number(123.4), "123");
        assert_eq!(number(12.34), "12.3");
        assert_eq!(number(1.234), "1.23");
        let lock = "[[package]]\nname = \"rmcp\"\nversion = \"3.11.0\"\n";
        assert_eq!(locked_version(lock, "rmcp").as_deref(), Some("3.11.0"));
        assert_eq!(locked_version(lock, "rmcp-macros"), None);
    }

    #[test]
    fn advantage_reads_the_right_way() {
        let faster = Row {
            metric: "latency".into(),
            unit: "µs",
            values: [10.0, 50.0],
            better: Better::Lower("faster"),
        };
        assert_eq!(faster.advantage(), 5.0);
        assert_eq!(faster.verdict(), "toolwright 5.00× faster");
        let slower = Row {
            metric: "throughput".into(),
            unit: "calls/s",
            values: [100.0, 200.0],
            better: Better::Higher("faster"),
        };
        assert_eq!(slower.verdict(), "rmcp 2.00× faster");
    }
}
