//! What one `add_note` costs in a notebook of 1,000 notes and in one of 100,000, in memory and
//! in a database file (synced at every change): the ratio should stay near 1.
//!
//! ```text
//! cargo bench -p notes-tools --bench add_note
//! ```
//!
//! Each call goes through a server in this process (`toolwright::testing`), as a model's would:
//! the argument check, the tool (on the blocking thread pool), the answer. The two notebooks of
//! one kind are called in turn, call by call, so that both share the machine's noise. They are
//! filled beforehand; every note has two tags.

use std::path::Path;
use std::time::{Duration, Instant};

use notes_tools::Notebook;
use serde_json::json;

/// The notebooks' sizes, in notes.
const SIZES: [usize; 2] = [1_000, 100_000];

/// Calls timed per notebook, after `WARMUP` untimed ones.
const CALLS: usize = 1000;
const WARMUP: usize = 50;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = std::env::temp_dir().join(format!("notes-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    println!("| notebook | notes before | median | p90 | 100,000 ÷ 1,000 (median) |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for storage in ["memory", "file"] {
        let notebooks = SIZES.map(|notes| match storage {
            "file" => {
                let path = dir.join(format!("notes-{notes}.db"));
                fill(&path, notes);
                Notebook::open(Some(&path)).unwrap()
            }
            _ => {
                let notebook = Notebook::in_memory();
                for n in 0..notes {
                    notebook
                        .add(&format!("note {n}"), "body".into(), &tags(n))
                        .unwrap();
                }
                notebook
            }
        });
        let [small, large] = runtime.block_on(time_adds(notebooks));
        let median = |times: &[Duration]| times[times.len() / 2];
        let p90 = |times: &[Duration]| times[times.len() * 9 / 10];
        let ratio = median(&large).as_secs_f64() / median(&small).as_secs_f64();
        for (notes, times, ratio) in [
            (SIZES[0], &small, String::new()),
            (SIZES[1], &large, format!("{ratio:.2}")),
        ] {
            println!(
                "| {storage} | {notes} | {} | {} | {ratio} |",
                micros(median(times)),
                micros(p90(times))
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Two tags per note, from a few dozen in use.
fn tags(n: usize) -> Vec<String> {
    vec![format!("topic-{}", n % 37), format!("week-{}", n % 52)]
}

/// A database file with `notes` notes, written in one transaction without syncing: the setting
/// up is not what is measured.
fn fill(path: &Path, notes: usize) {
    let _ = std::fs::remove_file(path);
    drop(Notebook::open(Some(path)).unwrap());
    let mut connection = rusqlite::Connection::open(path).unwrap();
    connection
        .pragma_update(None, "synchronous", "OFF")
        .unwrap();
    let tx = connection.transaction().unwrap();
    {
        let mut note = tx
            .prepare(
                "INSERT INTO notes (title, body, created_at, updated_at) VALUES (?1, 'body', 0, 0)",
            )
            .unwrap();
        let mut tag = tx
            .prepare("INSERT INTO note_tags (note_id, tag) VALUES (?1, ?2)")
            .unwrap();
        for n in 0..notes {
            note.execute([format!("note {n}")]).unwrap();
            let id = tx.last_insert_rowid();
            for t in tags(n) {
                tag.execute(rusqlite::params![id, t]).unwrap();
            }
        }
    }
    tx.commit().unwrap();
}

/// The time of each timed `add_note` call to each notebook, sorted, the notebooks called in
/// turn.
async fn time_adds(notebooks: [Notebook; 2]) -> [Vec<Duration>; 2] {
    let mut clients = Vec::new();
    for notebook in notebooks {
        let client = toolwright::server!(notes_tools)
            .state(notebook)
            .test_client()
            .await
            .unwrap();
        clients.push(client);
    }
    let mut times = [Vec::with_capacity(CALLS), Vec::with_capacity(CALLS)];
    for n in 0..WARMUP + CALLS {
        for (client, times) in clients.iter().zip(&mut times) {
            let arguments =
                json!({"title": format!("added {n}"), "body": "text", "tags": ["bench"]});
            let start = Instant::now();
            let added = client.call("add_note", arguments).await.unwrap();
            let elapsed = start.elapsed();
            assert!(!added.is_error(), "{}", added.text());
            if n >= WARMUP {
                times.push(elapsed);
            }
        }
    }
    for times in &mut times {
        times.sort();
    }
    times
}

fn micros(duration: Duration) -> String {
    format!("{:.0} µs", duration.as_secs_f64() * 1e6)
}
