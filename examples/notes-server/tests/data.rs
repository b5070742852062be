//! `notes-server --data FILE`, as processes that share a file and die: every note a server
//! acknowledged is in the database once, under an id of its own.

use std::collections::HashSet;
use std::io::{BufRead, BufReader, Lines, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use notes_tools::Notebook;
use serde_json::{Value, json};

/// A directory of its own for one test, removed at its end.
struct Dir(PathBuf);

impl Dir {
    fn new(name: &str) -> Dir {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let dir = std::env::temp_dir().join(format!("notes-data-{name}-{nanos}"));
        std::fs::create_dir_all(&dir).unwrap();
        Dir(dir)
    }

    fn database(&self) -> PathBuf {
        self.0.join("notes.db")
    }

    /// The names of the files in the directory, sorted.
    fn files(&self) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&self.0)
            .unwrap()
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A notes-server on pipes, initialized.
struct Server {
    child: Child,
    input: ChildStdin,
    output: Lines<BufReader<ChildStdout>>,
}

impl Server {
    fn start(database: &Path) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_notes-server"))
            .arg("--data")
            .arg(database)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("notes-server runs");
        let input = child.stdin.take().unwrap();
        let output = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut server = Server {
            child,
            input,
            output,
        };
        server.send(&json!({
            "jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                       "clientInfo": {"name": "data-test", "version": "1"}},
        }));
        let answer = server.next();
        assert_eq!(answer["id"], 0, "{answer}");
        server.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        server
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.input, "{message}").unwrap();
        self.input.flush().unwrap();
    }

    /// The next message the server writes.
    fn next(&mut self) -> Value {
        let line = self.output.next().expect("the server answers").unwrap();
        serde_json::from_str(&line).unwrap()
    }

    fn send_add(&mut self, id: u64, title: &str) {
        self.send(&json!({
            "jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "add_note", "arguments": {"title": title, "body": "b"}},
        }));
    }

    /// The note id and title an `add_note` answer acknowledges.
    fn acknowledged(answer: &Value) -> (u64, String) {
        let note = &answer["result"]["structuredContent"];
        assert!(note.is_object(), "not an added note: {answer}");
        (
            note["id"].as_u64().unwrap(),
            note["title"].as_str().unwrap().to_owned(),
        )
    }

    fn stop(mut self) {
        drop(self.input);
        assert!(self.child.wait().unwrap().success());
    }
}

#[test]
fn two_servers_on_one_file_lose_nothing_and_share_no_id() {
    const NOTES: u64 = 100;
    let dir = Dir::new("two");
    let database = dir.database();
    let writers: Vec<_> = ["a", "b"]
        .into_iter()
        .map(|name| {
            let database = database.clone();
            std::thread::spawn(move || {
                let mut server = Server::start(&database);
                // Every request at once: the server runs them side by side.
                for n in 1..=NOTES {
                    server.send_add(n, &format!("{name}-{n}"));
                }
                let acknowledged: Vec<(u64, String)> = (0..NOTES)
                    .map(|_| Server::acknowledged(&server.next()))
                    .collect();
                server.stop();
                acknowledged
            })
        })
        .collect();
    let acknowledged: Vec<(u64, String)> = writers
        .into_iter()
        .flat_map(|writer| writer.join().unwrap())
        .collect();
    let ids: HashSet<u64> = acknowledged.iter().map(|(id, _)| *id).collect();
    assert_eq!(ids.len(), acknowledged.len(), "an id was handed out twice");
    let notebook = Notebook::open(Some(&database)).unwrap();
    let notes = notebook.all(None).unwrap();
    assert_eq!(notes.len() as u64, 2 * NOTES);
    for (id, title) in &acknowledged {
        assert_eq!(&notebook.get(*id).unwrap().title, title);
    }
}

#[test]
fn a_server_killed_while_writing_loses_no_acknowledged_note_and_leaves_no_debris() {
    const SENT: u64 = 300;
    const READ: u64 = 60;
    let dir = Dir::new("kill");
    let database = dir.database();
    let mut server = Server::start(&database);
    for n in 1..=SENT {
        server.send_add(n, &format!("note-{n}"));
    }
    let acknowledged: Vec<(u64, String)> = (0..READ)
        .map(|_| Server::acknowledged(&server.next()))
        .collect();
    // SIGKILL, with requests still being written.
    server.child.kill().unwrap();
    server.child.wait().unwrap();
    {
        let notebook = Notebook::open(Some(&database)).unwrap();
        for (id, title) in &acknowledged {
            assert_eq!(
                &notebook.get(*id).unwrap().title,
                title,
                "note {id} was lost"
            );
        }
        let kept = notebook.all(None).unwrap();
        let ids: HashSet<u64> = kept.iter().map(|note| note.id).collect();
        assert_eq!(ids.len(), kept.len());
        assert!(kept.len() as u64 >= READ && kept.len() as u64 <= SENT);
    }
    // Closed cleanly, the database is one file again: the log was recovered and folded in.
    assert_eq!(dir.files(), ["notes.db"]);
}
