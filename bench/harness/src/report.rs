//! The figures as a table, the targets they are held to, and `BENCHMARKS.md`.

use std::fmt::Write as _;
use std::io;
use std::process::Command;

use crate::stats::Samples;
use crate::workspace::Workspace;

/// The line that ends the part of `BENCHMARKS.md` the harness writes. What follows it is written
/// by hand (the analysis) and kept when the harness rewrites the file.
const KEEP_BELOW: &str =
    "<!-- The harness writes everything above this line; what follows is kept as written. -->";

/// Which way a figure is better.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Better {
    Lower,
    Higher,
}

/// One measure's figures: toolwright's, and rmcp's on each transport (`Both`) or the one
/// figure that holds for both (`Same`: sizes, rebuilds).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Figure {
    Both(f64, f64, f64),
    Same(f64, f64),
}

/// One measured quantity, in `unit`.
#[derive(Debug)]
pub(crate) struct Row {
    pub(crate) metric: String,
    unit: &'static str,
    figure: Figure,
    better: Better,
}

impl Row {
    pub(crate) fn new(metric: String, unit: &'static str, figure: Figure, better: Better) -> Row {
        Row {
            metric,
            unit,
            figure,
            better,
        }
    }

    /// toolwright's figure, and rmcp's better one.
    fn pair(&self) -> (f64, f64) {
        match (self.figure, self.better) {
            (Figure::Both(tw, stdio, pipes), Better::Lower) => (tw, stdio.min(pipes)),
            (Figure::Both(tw, stdio, pipes), Better::Higher) => (tw, stdio.max(pipes)),
            (Figure::Same(tw, rmcp), _) => (tw, rmcp),
        }
    }

    /// toolwright's figure divided by rmcp's best.
    pub(crate) fn ratio(&self) -> f64 {
        let (tw, rmcp) = self.pair();
        tw / rmcp
    }

    /// How many times better toolwright's figure is than rmcp's best (below 1: worse).
    pub(crate) fn advantage(&self) -> f64 {
        match self.better {
            Better::Lower => 1.0 / self.ratio(),
            Better::Higher => self.ratio(),
        }
    }

    fn verdict(&self) -> String {
        let advantage = self.advantage();
        let word = match (self.better, self.unit) {
            (_, "MiB") => "smaller",
            (Better::Lower, _) | (Better::Higher, _) => "better",
        };
        if advantage >= 1.0 {
            format!("toolwright {advantage:.2}× {word}")
        } else {
            format!("rmcp {:.2}× {word}", 1.0 / advantage)
        }
    }
}

/// One measure's per-run medians, in µs, for each server of `Server::COMPARED`.
#[derive(Debug)]
pub(crate) struct RunsRow {
    label: String,
    medians: [Vec<f64>; 3],
}

impl RunsRow {
    pub(crate) fn new(label: String, runs: &[Vec<Samples>; 3]) -> RunsRow {
        RunsRow {
            label,
            medians: runs.each_ref().map(|runs| {
                runs.iter()
                    .map(|s| s.median().as_secs_f64() * 1e6)
                    .collect()
            }),
        }
    }
}

/// A goal: toolwright's advantage must reach 1 (no worse than rmcp's best).
#[derive(Debug)]
pub(crate) struct Target {
    goal: String,
    advantage: f64,
}

impl Target {
    pub(crate) fn new(goal: String, advantage: f64) -> Target {
        Target { goal, advantage }
    }

    fn is_met(&self) -> bool {
        self.advantage >= 1.0
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
    idle: String,
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
            idle: idle_cpus(),
        })
    }

    fn markdown(&self) -> String {
        format!(
            "- Machine: {} CPUs (nproc), {}; {}\n- Toolchain: {}\n- rmcp {} (features `server`, \
             `macros`, `transport-io`, plus its defaults); toolwright at {}\n- Date: {}\n- {}\n",
            self.cpus,
            self.cpu_model,
            self.kernel,
            self.rustc,
            self.rmcp,
            self.toolwright,
            self.date,
            self.idle
        )
    }
}

/// How the machine's idle CPUs wait, which an unpinned round trip between processes depends
/// on: a CPU that halts as soon as it is idle takes a wake-up each time a process on it is
/// given work (in a virtual machine, an exit to the host), one that polls for a while first does
/// not. From Linux's `cpuidle` and, under its `haltpoll` driver, the guest's polling time.
pub(crate) fn idle_cpus() -> String {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|text| text.trim().to_owned())
    };
    let Some(driver) = read("/sys/devices/system/cpu/cpuidle/current_driver") else {
        return "Idle CPUs: no `cpuidle` driver named".to_owned();
    };
    let governor = read("/sys/devices/system/cpu/cpuidle/current_governor")
        .unwrap_or_else(|| "unknown".to_owned());
    let mut line = format!("Idle CPUs: `cpuidle` driver `{driver}`, governor `{governor}`");
    if driver == "haltpoll" {
        match read("/sys/module/haltpoll/parameters/guest_halt_poll_ns") {
            Some(ns) if ns == "0" => line.push_str(
                "; `guest_halt_poll_ns` 0: an idle CPU halts at once, without polling first",
            ),
            Some(ns) => {
                let _ = write!(line, "; an idle CPU polls up to {ns} ns before it halts");
            }
            None => {}
        }
    }
    line
}

/// The results table, in Markdown with aligned columns, so it also reads as plain text.
pub(crate) fn table(rows: &[Row]) -> String {
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|row| {
            let with_unit = |value: f64| format!("{} {}", number(value), row.unit);
            let (stdio, pipes) = match row.figure {
                Figure::Both(_, stdio, pipes) => (with_unit(stdio), with_unit(pipes)),
                Figure::Same(_, rmcp) => (with_unit(rmcp), "same binary".to_owned()),
            };
            let tw = match row.figure {
                Figure::Both(tw, ..) | Figure::Same(tw, _) => with_unit(tw),
            };
            [
                row.metric.clone(),
                tw,
                stdio,
                pipes,
                format!("{:.2}", row.ratio()),
                row.verdict(),
            ]
        })
        .collect();
    let header = [
        "measure",
        "toolwright",
        "rmcp stdio()",
        "rmcp stdio_pipes()",
        "toolwright ÷ rmcp's best",
        "which is better",
    ]
    .map(str::to_owned);
    aligned(&header, &cells, &[false, true, true, true, true, false])
}

/// Each run's median round trip, per server.
pub(crate) fn runs_table(rows: &[RunsRow]) -> String {
    let mut cells: Vec<[String; 3]> = Vec::new();
    for row in rows {
        for (server, medians) in ["toolwright", "rmcp stdio()", "rmcp stdio_pipes()"]
            .iter()
            .zip(&row.medians)
        {
            let runs: Vec<String> = medians.iter().map(|m| number(*m)).collect();
            cells.push([row.label.clone(), (*server).to_owned(), runs.join(" · ")]);
        }
    }
    let header = ["`echo` round trips", "server", "each run's median, µs"].map(str::to_owned);
    aligned(&header, &cells, &[false, false, true])
}

/// The targets and whether each is met.
pub(crate) fn targets_table(targets: &[Target]) -> String {
    let cells: Vec<[String; 3]> = targets
        .iter()
        .map(|target| {
            [
                target.goal.clone(),
                format!("{:.2}×", target.advantage),
                if target.is_met() { "met" } else { "NOT met" }.to_owned(),
            ]
        })
        .collect();
    let header = ["target", "toolwright's advantage", "verdict"].map(str::to_owned);
    aligned(&header, &cells, &[false, true, false])
}

/// What a full run writes.
pub(crate) struct Report<'a> {
    pub(crate) setting: &'a Setting,
    /// The machine's load while it ran.
    pub(crate) load: &'a str,
    pub(crate) method: &'a str,
    pub(crate) rows: &'a [Row],
    pub(crate) runs: &'a [RunsRow],
    pub(crate) targets: &'a [Target],
    /// The footprint tables, as Markdown.
    pub(crate) footprint: &'a str,
}

/// Writes `BENCHMARKS.md` at the repository's root, keeping the hand-written part of the old
/// one.
pub(crate) fn write_benchmarks_md(workspace: &Workspace, report: &Report<'_>) -> io::Result<()> {
    let Report {
        setting,
        load,
        method,
        rows,
        runs,
        targets,
        footprint,
    } = report;
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
    writeln!(text, "## Setting\n\n{}- {load}\n", setting.markdown()).expect("writing to a String");
    writeln!(text, "## Results\n\n{}", table(rows)).expect("writing to a String");
    writeln!(text, "### Every run\n\n{}", runs_table(runs)).expect("writing to a String");
    writeln!(text, "## Targets\n\n{}", targets_table(targets)).expect("writing to a String");
    writeln!(
        text,
        "## What a 50-tool server is made of\n\n\
         Each crate's functions in the binary (KiB), and in brackets the pages of them the \
         server holds in memory after `initialize`, `tools/list` and 100 calls of `echo` (from \
         `/proc/<pid>/pagemap`; a page shared by crates is split by bytes, and the kernel maps \
         a few cached neighbours of each page a fault asks for). `cargo run --release -p harness \
         -- --footprint` prints it alone.\n\n{footprint}"
    )
    .expect("writing to a String");
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
    fn ratios_are_to_rmcps_best() {
        let latency = Row::new(
            "latency".into(),
            "µs",
            Figure::Both(10.0, 50.0, 20.0),
            Better::Lower,
        );
        assert_eq!(latency.ratio(), 0.5);
        assert_eq!(latency.verdict(), "toolwright 2.00× better");
        let rate = Row::new(
            "rate".into(),
            "calls/s",
            Figure::Both(100.0, 50.0, 200.0),
            Better::Higher,
        );
        assert_eq!(rate.ratio(), 0.5);
        assert_eq!(rate.verdict(), "rmcp 2.00× better");
        let size = Row::new("size".into(), "MiB", Figure::Same(4.0, 5.0), Better::Lower);
        assert_eq!(size.verdict(), "toolwright 1.25× smaller");
    }
}
