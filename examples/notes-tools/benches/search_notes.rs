//! What one `search_notes` and one `add_note` cost in a database file of 1,000 notes and in one
//! of 100,000, notes whose bodies are a few dozen words of prose.
//!
//! ```text
//! cargo bench -p notes-tools --bench search_notes
//! ```
//!
//! Each call goes through a server in this process (`toolwright::testing`), as a model's would:
//! the argument check, the tool (on the blocking thread pool), the answer. The two notebooks are
//! called in turn, call by call, so that both share the machine's noise. They are filled
//! beforehand, without syncing; the calls run on the notebook as `notes-server --data` opens it
//! (write-ahead log, synced at every change).

use std::path::Path;
use std::time::{Duration, Instant};

use notes_tools::Notebook;
use serde_json::{Value, json};
use toolwright::testing::TestClient;

/// The notebooks' sizes, in notes.
const SIZES: [usize; 2] = [1_000, 100_000];

/// Timed calls per notebook and query, after `WARMUP` untimed ones.
const SEARCHES: usize = 200;
const ADDS: usize = 1000;
const WARMUP: usize = 20;

/// The words bodies are written in: a few common ones, and many rarer ones.
const COMMON: [&str; 8] = [
    "the", "meeting", "notes", "project", "and", "with", "for", "plan",
];

/// The searches timed: a word most notes hold, a word about one note in 125 holds, two words
/// that each few notes hold, and a common word with a rare one.
const QUERIES: [(&str, &str); 4] = [
    ("common word", "meeting"),
    ("rare word", "word417"),
    ("two rare words", "budget word83"),
    ("common and rare word", "meeting word417"),
];

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a runtime");
    let dir = std::env::temp_dir().join(format!("notes-search-bench-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let clients = runtime.block_on(async {
        let mut clients = Vec::new();
        for notes in SIZES {
            let path = dir.join(format!("notes-{notes}.db"));
            fill(&path, notes);
            let notebook = Notebook::open(Some(&path)).unwrap();
            let client = toolwright::server!(notes_tools)
                .state(notebook)
                .test_client()
                .await
                .unwrap();
            clients.push(client);
        }
        clients
    });
    println!("| call | notes before | median | p90 | 100,000 ÷ 1,000 (median) |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (what, query) in QUERIES {
        let times = runtime.block_on(time_calls(&clients, SEARCHES, |_| {
            ("search_notes", json!({"query": query, "limit": 10}))
        }));
        report(&format!("`search_notes` ({what}: `{query}`)"), &times);
    }
    let times = runtime.block_on(time_calls(&clients, ADDS, |n| {
        let arguments = json!({
            "title": format!("added {n}"),
            "body": body(1_000_000 + n),
            "tags": ["bench"],
        });
        ("add_note", arguments)
    }));
    report("`add_note`", &times);
    drop(clients);
    std::fs::remove_dir_all(&dir).unwrap();
}

fn report(call: &str, [small, large]: &[Vec<Duration>; 2]) {
    let median = |times: &[Duration]| times[times.len() / 2];
    let p90 = |times: &[Duration]| times[times.len() * 9 / 10];
    let ratio = median(large).as_secs_f64() / median(small).as_secs_f64();
    for (notes, times, ratio) in [
        (SIZES[0], small, String::new()),
        (SIZES[1], large, format!("{ratio:.2}")),
    ] {
        println!(
            "| {call} | {notes} | {} | {} | {ratio} |",
            micros(median(times)),
            micros(p90(times))
        );
    }
}

/// A body of 40 words for note `n`: common words, and every fifth word a rare one drawn from
/// 1,000 (each in about one note in 125); one note in 50 also says `budget`.
fn body(n: usize) -> String {
    let mut state = (n as u64)
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    let mut words = Vec::with_capacity(40);
    for i in 0..40 {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        let draw = (state >> 33) as usize;
        if i % 5 == 4 {
            words.push(format!("word{}", draw % 1000));
        } else if i == 7 && n.is_multiple_of(50) {
            words.push("budget".to_owned());
        } else {
            words.push(COMMON[draw % COMMON.len()].to_owned());
        }
    }
    words.join(" ")
}

/// Two tags per note, from a few dozen in use.
fn tags(n: usize) -> Vec<String> {
    vec![format!("topic-{}", n % 37), format!("week-{}", n % 52)]
}

/// A database file with `notes` notes, written in one transaction without syncing: the setting
/// up is not what is measured. The notebook opens it first, so that whatever it keeps beside
/// the notes is kept for these too.
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
                "INSERT INTO notes (title, body, created_at, updated_at) VALUES (?1, ?2, 0, 0)",
            )
            .unwrap();
        let mut tag = tx
            .prepare("INSERT INTO note_tags (note_id, tag) VALUES (?1, ?2)")
            .unwrap();
        for n in 0..notes {
            note.execute([format!("note {n}"), body(n)]).unwrap();
            let id = tx.last_insert_rowid();
            for t in tags(n) {
                tag.execute(rusqlite::params![id, t]).unwrap();
            }
        }
    }
    tx.commit().unwrap();
}

/// The time of each timed call to each notebook, sorted, the notebooks called in turn.
async fn time_calls(
    clients: &[TestClient],
    calls: usize,
    call: impl Fn(usize) -> (&'static str, Value),
) -> [Vec<Duration>; 2] {
    let mut times = [Vec::with_capacity(calls), Vec::with_capacity(calls)];
    for n in 0..WARMUP + calls {
        for (client, times) in clients.iter().zip(&mut times) {
            let (tool, arguments) = call(n);
            let start = Instant::now();
            let result = client.call(tool, arguments).await.unwrap();
            let elapsed = start.elapsed();
            assert!(!result.is_error(), "{}", result.text());
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
