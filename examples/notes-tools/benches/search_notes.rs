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

mod notebooks;

use notebooks::{SIZES, client, fill, report, time_calls};
use notes_tools::Notebook;
use serde_json::json;

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
        let [small, large] = SIZES.map(|notes| {
            let path = dir.join(format!("notes-{notes}.db"));
            fill(&path, notes, body);
            Notebook::open(Some(&path)).unwrap()
        });
        [client(small).await, client(large).await]
    });
    println!("| call | notes before | median | p90 | 100,000 ÷ 1,000 (median) |");
    println!("| --- | ---: | ---: | ---: | ---: |");
    for (what, query) in QUERIES {
        let times = runtime.block_on(time_calls(&clients, WARMUP, SEARCHES, |_| {
            ("search_notes", json!({"query": query, "limit": 10}))
        }));
        report(&format!("`search_notes` ({what}: `{query}`)"), &times);
    }
    let times = runtime.block_on(time_calls(&clients, WARMUP, ADDS, |n| {
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
