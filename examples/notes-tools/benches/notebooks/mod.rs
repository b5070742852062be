//! What the notes benches share: the notebooks' sizes, filling a database file, timing calls to
//! two notebooks in turn, and the table's rows.

use std::path::Path;
use std::time::{Duration, Instant};

use notes_tools::Notebook;
use serde_json::Value;
use toolwright::testing::TestClient;

/// The notebooks' sizes, in notes.
pub(crate) const SIZES: [usize; 2] = [1_000, 100_000];

/// Two tags per note, from a few dozen in use.
pub(crate) fn tags(n: usize) -> Vec<String> {
    vec![format!("topic-{}", n % 37), format!("week-{}", n % 52)]
}

/// A database file with `notes` notes, note `n` with the body `body(n)`, written in one
/// transaction without syncing: the setting up is not what is measured. The notebook opens it
/// first, so that whatever it keeps beside the notes (its search index) is kept for these too.
pub(crate) fn fill(path: &Path, notes: usize, body: impl Fn(usize) -> String) {
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

/// A server of the notes tools over `notebook`, in this process.
pub(crate) async fn client(notebook: Notebook) -> TestClient {
    toolwright::server!(notes_tools)
        .state(notebook)
        .test_client()
        .await
        .unwrap()
}

/// The time of each of `calls` timed calls (after `warmup` untimed ones) to each of the two
/// notebooks' servers, sorted, the two called in turn, call by call, so that both share the
/// machine's noise. `call(n)` is the `n`th call's tool and arguments; every call must succeed.
pub(crate) async fn time_calls(
    clients: &[TestClient; 2],
    warmup: usize,
    calls: usize,
    call: impl Fn(usize) -> (&'static str, Value),
) -> [Vec<Duration>; 2] {
    let mut times = [Vec::with_capacity(calls), Vec::with_capacity(calls)];
    for n in 0..warmup + calls {
        for (client, times) in clients.iter().zip(&mut times) {
            let (tool, arguments) = call(n);
            let start = Instant::now();
            let result = client.call(tool, arguments).await.unwrap();
            let elapsed = start.elapsed();
            assert!(!result.is_error(), "{}", result.text());
            if n >= warmup {
                times.push(elapsed);
            }
        }
    }
    for times in &mut times {
        times.sort();
    }
    times
}

/// The table's two rows for one call, one per notebook: `label` (the call, the storage), the
/// notebook's size, the median and the 90th percentile, and the ratio of the medians.
pub(crate) fn report(label: &str, [small, large]: &[Vec<Duration>; 2]) {
    let median = |times: &[Duration]| times[times.len() / 2];
    let p90 = |times: &[Duration]| times[times.len() * 9 / 10];
    let ratio = median(large).as_secs_f64() / median(small).as_secs_f64();
    for (notes, times, ratio) in [
        (SIZES[0], small, String::new()),
        (SIZES[1], large, format!("{ratio:.2}")),
    ] {
        println!(
            "| {label} | {notes} | {} | {} | {ratio} |",
            micros(median(times)),
            micros(p90(times))
        );
    }
}

fn micros(duration: Duration) -> String {
    format!("{:.0} µs", duration.as_secs_f64() * 1e6)
}
