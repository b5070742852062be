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

mod notebooks;

use notebooks::{SIZES, client, fill, report, tags, time_calls};
use notes_tools::Notebook;
use serde_json::json;

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
                fill(&path, notes, |_| "body".to_owned());
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
        let times = runtime.block_on(async {
            let [small, large] = notebooks;
            let clients = [client(small).await, client(large).await];
            time_calls(&clients, WARMUP, CALLS, |n| {
                let arguments =
                    json!({"title": format!("added {n}"), "body": "text", "tags": ["bench"]});
                ("add_note", arguments)
            })
            .await
        });
        report(storage, &times);
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
