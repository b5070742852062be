//! The notebook the tools work on: a SQLite database, in a file or in memory.
//!
//! A file may be shared by several servers at once: SQLite serialises their changes, ids come
//! from the database, and a change is on disk (write-ahead log, synced) before the tool that made
//! it answers, so a crash loses no acknowledged note. Every change is one transaction, and costs
//! about the same however many notes there are.
//!
//! Search is the database's: an FTS5 full-text index of each note's title, body and tags
//! (`notes_fts`, whose content is the view `note_text`), kept in step by triggers on `notes`
//! and `note_tags`, so that whatever writes the file (another server, an older one, the
//! `sqlite3` shell) keeps it current. A database made before the index had it gets it, built
//! from its notes, when first opened.

use std::path::Path;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A note.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Note {
    /// The note's id, for `get_note`, `update_note`, `tag_note` and `delete_note`.
    pub id: u64,
    /// Title shown in lists.
    pub title: String,
    /// Body text, Markdown allowed.
    pub body: String,
    /// Tags the note is filed under, sorted.
    pub tags: Vec<String>,
    /// When the note was created, in seconds since the Unix epoch.
    pub created_at: u64,
    /// When the note last changed, in seconds since the Unix epoch.
    pub updated_at: u64,
}

/// The longest title, in characters.
pub const MAX_TITLE_CHARS: usize = 200;

/// The longest body, in characters.
pub const MAX_BODY_CHARS: usize = 100_000;

/// The longest tag, in characters.
pub const MAX_TAG_CHARS: usize = 64;

/// The most tags one note may carry.
pub const MAX_TAGS: usize = 20;

/// How long a change waits for another server writing to the same file.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Why a notebook operation failed; the text is what the model reads.
#[derive(Debug, thiserror::Error)]
pub enum NotesError {
    /// No note has this id.
    #[error("no note with id {0}; `list_notes` or `search_notes` shows the ids that exist")]
    NotFound(u64),
    /// A title must say something.
    #[error("a note needs a title that is not blank")]
    EmptyTitle,
    /// An update that changes nothing.
    #[error("nothing to update: give `title`, `body` or both")]
    NothingToUpdate,
    /// A tag must say something.
    #[error("a tag cannot be blank")]
    EmptyTag,
    /// A text longer than its limit.
    #[error("the {what} is {len} characters long; the most is {max}: shorten it")]
    TooLong {
        /// What: `title`, `body`, `tag "..."`.
        what: String,
        /// Its length, in characters.
        len: usize,
        /// The limit.
        max: usize,
    },
    /// More tags than a note may carry.
    #[error(
        "a note carries at most {MAX_TAGS} tags, and this one would carry {0}: remove some with \
         `untag_note` first"
    )]
    TooManyTags(usize),
    /// No note was added that a waiting call was waiting for.
    #[error("no note whose title contains {text:?} was added within {seconds} s")]
    NotAdded {
        /// What the title was to contain.
        text: String,
        /// How long the call waited.
        seconds: u64,
    },
    /// The database failed; the notebook is as it was before the call.
    #[error("the notebook could not be read or changed, so nothing changed: {0}")]
    Database(#[from] rusqlite::Error),
}

/// The notes: a SQLite database, behind a lock for this process's calls.
pub struct Notebook {
    connection: Mutex<Connection>,
}

impl Notebook {
    /// The notebook in the SQLite database `path` (created if it does not exist), or, without
    /// one, an empty notebook that lives in memory only.
    pub fn open(path: Option<&Path>) -> Result<Notebook, NotesError> {
        let connection = match path {
            Some(path) => {
                let connection = Connection::open(path)?;
                connection.busy_timeout(BUSY_TIMEOUT)?;
                // The write-ahead log lets servers read while one writes; `FULL` syncs it at
                // every commit, so an answered change survives a crash of the machine too.
                // Switching a new file to it can be refused at once, without the busy timeout,
                // while another server switches it: wait and try again.
                let started = std::time::Instant::now();
                loop {
                    match connection.pragma_update(None, "journal_mode", "WAL") {
                        Err(rusqlite::Error::SqliteFailure(error, _))
                            if error.code == rusqlite::ErrorCode::DatabaseBusy
                                && started.elapsed() < BUSY_TIMEOUT =>
                        {
                            std::thread::sleep(std::time::Duration::from_millis(10));
                        }
                        outcome => break outcome?,
                    }
                }
                connection.pragma_update(None, "synchronous", "FULL")?;
                connection
            }
            None => Connection::open_in_memory()?,
        };
        connection.pragma_update(None, "foreign_keys", true)?;
        // One write transaction, taken at once: servers opening a new file together wait for
        // each other instead of failing as deadlocked readers would.
        let mut connection = connection;
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        transaction.execute_batch(
            "CREATE TABLE IF NOT EXISTS notes (
                 id INTEGER PRIMARY KEY AUTOINCREMENT,
                 title TEXT NOT NULL,
                 body TEXT NOT NULL,
                 created_at INTEGER NOT NULL,
                 updated_at INTEGER NOT NULL
             );
             CREATE TABLE IF NOT EXISTS note_tags (
                 note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
                 tag TEXT NOT NULL,
                 PRIMARY KEY (note_id, tag)
             ) WITHOUT ROWID;
             CREATE INDEX IF NOT EXISTS note_tags_by_tag ON note_tags(tag, note_id);",
        )?;
        let indexed: bool = transaction.query_row(
            "SELECT EXISTS (SELECT 1 FROM sqlite_schema WHERE name = 'notes_fts')",
            [],
            |row| row.get(0),
        )?;
        if !indexed {
            transaction.execute_batch(SEARCH_INDEX)?;
            transaction.execute("INSERT INTO notes_fts (notes_fts) VALUES ('rebuild')", [])?;
        }
        transaction.commit()?;
        Ok(Notebook {
            connection: Mutex::new(connection),
        })
    }

    /// An empty notebook that lives in memory only.
    pub fn in_memory() -> Notebook {
        Notebook::open(None).expect("an in-memory database opens")
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        // A panic while the lock was held rolled its transaction back with it.
        self.connection.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` in one transaction that takes the write lock at once: committed if it
    /// succeeds, rolled back if it fails.
    fn change<T>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T, NotesError>,
    ) -> Result<T, NotesError> {
        // A span of its own: traced with the server's telemetry, it is a child of the call's.
        let _span = tracing::info_span!("notebook.write").entered();
        let mut connection = self.lock();
        let transaction = connection.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let value = f(&transaction)?;
        transaction.commit()?;
        Ok(value)
    }

    /// Adds a note and returns it with its new id.
    pub fn add(&self, title: &str, body: String, tags: &[String]) -> Result<Note, NotesError> {
        let title = checked_title(title)?;
        check_body(&body)?;
        let tags = normalise_tags(tags)?;
        check_tag_count(tags.len())?;
        let now = now();
        self.change(|tx| {
            tx.execute(
                "INSERT INTO notes (title, body, created_at, updated_at) VALUES (?1, ?2, ?3, ?3)",
                params![title, body, now as i64],
            )?;
            let id = tx.last_insert_rowid() as u64;
            add_tags(tx, id, &tags)?;
            Ok(Note {
                id,
                title,
                body,
                tags,
                created_at: now,
                updated_at: now,
            })
        })
    }

    /// One note, whole.
    pub fn get(&self, id: u64) -> Result<Note, NotesError> {
        note(&self.lock(), id)
    }

    /// Changes a note's title, body or both.
    pub fn update(
        &self,
        id: u64,
        title: Option<&str>,
        body: Option<String>,
    ) -> Result<Note, NotesError> {
        if title.is_none() && body.is_none() {
            return Err(NotesError::NothingToUpdate);
        }
        let title = title.map(checked_title).transpose()?;
        if let Some(body) = &body {
            check_body(body)?;
        }
        self.change(|tx| {
            let changed = tx.execute(
                "UPDATE notes SET title = coalesce(?2, title), body = coalesce(?3, body),
                     updated_at = ?4
                 WHERE id = ?1",
                params![id as i64, title, body, now() as i64],
            )?;
            if changed == 0 {
                return Err(NotesError::NotFound(id));
            }
            note(tx, id)
        })
    }

    /// Files a note under more tags, and takes others off: what `tag_note`, `untag_note` and
    /// the board's `move_note` do.
    pub fn retag(&self, id: u64, add: &[String], remove: &[String]) -> Result<Note, NotesError> {
        let add = normalise_tags(add)?;
        let remove = normalise_tags(remove)?;
        self.change(|tx| {
            let mut note = note(tx, id)?;
            note.tags.retain(|tag| !remove.contains(tag));
            note.tags.extend(add);
            note.tags.sort();
            note.tags.dedup();
            check_tag_count(note.tags.len())?;
            tx.execute("DELETE FROM note_tags WHERE note_id = ?1", [id as i64])?;
            add_tags(tx, id, &note.tags)?;
            note.updated_at = now();
            tx.execute(
                "UPDATE notes SET updated_at = ?2 WHERE id = ?1",
                params![id as i64, note.updated_at as i64],
            )?;
            Ok(note)
        })
    }

    /// Deletes a note, and returns it as it was.
    pub fn delete(&self, id: u64) -> Result<Note, NotesError> {
        self.change(|tx| {
            let note = note(tx, id)?;
            tx.execute("DELETE FROM notes WHERE id = ?1", [id as i64])?;
            Ok(note)
        })
    }

    /// How many notes carry `tag` (every note without one), and one page of them, newest first.
    pub fn list(
        &self,
        tag: Option<&str>,
        limit: u32,
        offset: u32,
    ) -> Result<(u64, Vec<Note>), NotesError> {
        let connection = self.lock();
        let tag = tag.map(|t| t.trim().to_lowercase());
        let total: i64 = match &tag {
            Some(tag) => connection.query_row(
                "SELECT count(*) FROM note_tags WHERE tag = ?1",
                [tag],
                |row| row.get(0),
            )?,
            None => connection.query_row("SELECT count(*) FROM notes", [], |row| row.get(0))?,
        };
        let ids: Vec<u64> = match &tag {
            Some(tag) => ids(
                &connection,
                "SELECT note_id FROM note_tags WHERE tag = ?1 ORDER BY note_id DESC
                 LIMIT ?2 OFFSET ?3",
                params![tag, limit, offset],
            )?,
            None => ids(
                &connection,
                "SELECT id FROM notes ORDER BY id DESC LIMIT ?1 OFFSET ?2",
                params![limit, offset],
            )?,
        };
        let notes = ids
            .into_iter()
            .map(|id| note(&connection, id))
            .collect::<Result<_, _>>()?;
        Ok((total as u64, notes))
    }

    /// The newest note's id; 0 when there is none.
    pub fn newest_id(&self) -> Result<u64, NotesError> {
        let connection = self.lock();
        let id: Option<i64> =
            connection.query_row("SELECT max(id) FROM notes", [], |row| row.get(0))?;
        Ok(id.map_or(0, |id| id as u64))
    }

    /// The oldest note added after note `after` whose title contains `text`, ignoring case.
    pub fn added_after(&self, after: u64, text: &str) -> Result<Option<Note>, NotesError> {
        let connection = self.lock();
        let pattern = format!(
            "%{}%",
            text.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        let id: Option<i64> = connection.query_row(
            "SELECT min(id) FROM notes WHERE id > ?1 AND title LIKE ?2 ESCAPE '\\'",
            params![after as i64, pattern],
            |row| row.get(0),
        )?;
        id.map(|id| note(&connection, id as u64)).transpose()
    }

    /// Every note, newest first; with `tag`, those that carry it.
    pub fn all(&self, tag: Option<&str>) -> Result<Vec<Note>, NotesError> {
        self.list(tag, u32::MAX, 0).map(|(_, notes)| notes)
    }

    /// The notes that hold any of `words` (a word of their title, body or tags that starts
    /// with it, whatever its case), best first, `limit` at most: each with its title, body and
    /// score, how many of the words it holds (a word given twice counts twice). Among notes of
    /// the same score, the newest first.
    ///
    /// The index answers: a note is read only if it is returned. When enough notes hold every
    /// word, they are the best, and only they are looked up; otherwise each word's notes are
    /// counted.
    pub fn search(&self, words: &[String], limit: u32) -> Result<Vec<Found>, NotesError> {
        // A word without a letter or digit is no word to the index: it matches nothing.
        let phrases: Vec<String> = words
            .iter()
            .filter(|word| word.chars().any(char::is_alphanumeric))
            .map(|word| prefix_phrase(word))
            .collect();
        if phrases.is_empty() || limit == 0 {
            return Ok(Vec::new());
        }
        let connection = self.lock();
        let every = phrases.join(" AND ");
        let mut best: Vec<(u64, u32)> = ids(
            &connection,
            "SELECT rowid FROM notes_fts WHERE notes_fts MATCH ?1 ORDER BY rowid DESC LIMIT ?2",
            params![every, limit],
        )?
        .into_iter()
        .map(|id| (id, phrases.len() as u32))
        .collect();
        if best.len() < limit as usize && phrases.len() > 1 {
            let each =
                vec!["SELECT rowid AS id FROM notes_fts WHERE notes_fts MATCH ?"; phrases.len()];
            let sql = format!(
                "SELECT id, count(*) AS score FROM ({}) GROUP BY id
                 ORDER BY score DESC, id DESC LIMIT {limit}",
                each.join(" UNION ALL ")
            );
            let mut statement = connection.prepare_cached(&sql)?;
            best = statement
                .query_map(rusqlite::params_from_iter(&phrases), |row| {
                    Ok((row.get::<_, i64>(0)? as u64, row.get::<_, i64>(1)? as u32))
                })?
                .collect::<Result<_, _>>()?;
        }
        let mut statement =
            connection.prepare_cached("SELECT title, body FROM notes WHERE id = ?1")?;
        let found = best
            .into_iter()
            .map(|(id, score)| {
                statement.query_row([id as i64], |row| {
                    Ok(Found {
                        id,
                        title: row.get(0)?,
                        body: row.get(1)?,
                        score,
                    })
                })
            })
            .collect::<Result<_, _>>()?;
        Ok(found)
    }

    /// The ids, newest first and `limit` at most, whose decimal digits start with `prefix`.
    pub fn ids_starting_with(&self, prefix: &str, limit: u32) -> Result<Vec<u64>, NotesError> {
        if !prefix.bytes().all(|b| b.is_ascii_digit()) {
            return Ok(Vec::new());
        }
        ids(
            &self.lock(),
            "SELECT id FROM notes WHERE CAST(id AS TEXT) LIKE ?1 || '%' ORDER BY id DESC LIMIT ?2",
            params![prefix, limit],
        )
    }

    /// Every tag in use, with how many notes carry it, by tag.
    pub fn tag_counts(&self) -> Result<Vec<(String, u64)>, NotesError> {
        let connection = self.lock();
        let mut statement =
            connection.prepare("SELECT tag, count(*) FROM note_tags GROUP BY tag ORDER BY tag")?;
        let counts = statement
            .query_map([], |row| Ok((row.get(0)?, row.get::<_, i64>(1)? as u64)))?
            .collect::<Result<_, _>>()?;
        Ok(counts)
    }
}

/// A note a search found.
#[derive(Debug)]
pub struct Found {
    /// The note's id.
    pub id: u64,
    /// Its title.
    pub title: String,
    /// Its body.
    pub body: String,
    /// How many of the words searched for it holds.
    pub score: u32,
}

/// The full-text index of the notes, and the triggers that keep it in step with them.
///
/// Its content is the view `note_text`, one row per note with its tags joined in order, from
/// which `rebuild` fills it. A change removes the note's old text from the index (FTS5's
/// `delete`, given the text as it was indexed) and adds the new: a note's title or body after
/// the update, its tags after one is added or removed, computed as they were before from the
/// tags as they are now. A note's own deletion removes its text before it goes, while its tags
/// are still there; the tags its deletion takes with it then find no note to index again.
///
/// Tags are joined in order by `group_concat` over an ordered subquery, which SQLite does not
/// flatten into an aggregate, rather than by `group_concat(... ORDER BY ...)`: that syntax needs
/// SQLite 3.44, and a database whose schema holds it cannot be opened by an older one (Python's
/// `sqlite3`, Debian 12's `sqlite3` shell), since SQLite reads every view as it opens a file.
const SEARCH_INDEX: &str = "
    CREATE VIEW IF NOT EXISTS note_text (id, title, body, tags) AS
        SELECT id, title, body,
            coalesce((SELECT group_concat(tag, ' ') FROM (
                          SELECT tag FROM note_tags WHERE note_id = notes.id ORDER BY tag)), '')
        FROM notes;
    CREATE VIRTUAL TABLE IF NOT EXISTS notes_fts USING fts5 (
        title, body, tags, content = 'note_text', content_rowid = 'id'
    );
    CREATE TRIGGER IF NOT EXISTS notes_fts_insert AFTER INSERT ON notes BEGIN
        INSERT INTO notes_fts (rowid, title, body, tags)
            SELECT id, title, body, tags FROM note_text WHERE id = new.id;
    END;
    CREATE TRIGGER IF NOT EXISTS notes_fts_update AFTER UPDATE OF title, body ON notes BEGIN
        INSERT INTO notes_fts (notes_fts, rowid, title, body, tags)
            SELECT 'delete', old.id, old.title, old.body, tags FROM note_text WHERE id = old.id;
        INSERT INTO notes_fts (rowid, title, body, tags)
            SELECT id, title, body, tags FROM note_text WHERE id = new.id;
    END;
    CREATE TRIGGER IF NOT EXISTS notes_fts_delete BEFORE DELETE ON notes BEGIN
        INSERT INTO notes_fts (notes_fts, rowid, title, body, tags)
            SELECT 'delete', id, title, body, tags FROM note_text WHERE id = old.id;
    END;
    CREATE TRIGGER IF NOT EXISTS note_tags_fts_insert AFTER INSERT ON note_tags BEGIN
        INSERT INTO notes_fts (notes_fts, rowid, title, body, tags)
            SELECT 'delete', id, title, body,
                coalesce((SELECT group_concat(tag, ' ') FROM (
                              SELECT tag FROM note_tags
                              WHERE note_id = new.note_id AND tag <> new.tag ORDER BY tag)), '')
            FROM notes WHERE id = new.note_id;
        INSERT INTO notes_fts (rowid, title, body, tags)
            SELECT id, title, body, tags FROM note_text WHERE id = new.note_id;
    END;
    CREATE TRIGGER IF NOT EXISTS note_tags_fts_delete AFTER DELETE ON note_tags BEGIN
        INSERT INTO notes_fts (notes_fts, rowid, title, body, tags)
            SELECT 'delete', id, title, body,
                (SELECT group_concat(tag, ' ') FROM (
                    SELECT tag FROM note_tags WHERE note_id = old.note_id
                    UNION ALL SELECT old.tag ORDER BY tag))
            FROM notes WHERE id = old.note_id;
        INSERT INTO notes_fts (rowid, title, body, tags)
            SELECT id, title, body, tags FROM note_text WHERE id = old.note_id;
    END;
";

/// A word as an FTS5 query that matches the words starting with it: quoted, so that the
/// query syntax's characters (`"`, `*`, `:`, `^`, `-`, `AND`, `NEAR`, ...) are text.
fn prefix_phrase(word: &str) -> String {
    format!("\"{}\"*", word.replace('"', "\"\""))
}

/// The note with this id, with its tags.
fn note(connection: &Connection, id: u64) -> Result<Note, NotesError> {
    let found = connection
        .query_row(
            "SELECT title, body, created_at, updated_at FROM notes WHERE id = ?1",
            [id as i64],
            |row| {
                Ok(Note {
                    id,
                    title: row.get(0)?,
                    body: row.get(1)?,
                    tags: Vec::new(),
                    created_at: row.get::<_, i64>(2)? as u64,
                    updated_at: row.get::<_, i64>(3)? as u64,
                })
            },
        )
        .optional()?;
    let mut note = found.ok_or(NotesError::NotFound(id))?;
    let mut statement =
        connection.prepare_cached("SELECT tag FROM note_tags WHERE note_id = ?1 ORDER BY tag")?;
    note.tags = statement
        .query_map([id as i64], |row| row.get(0))?
        .collect::<Result<_, _>>()?;
    Ok(note)
}

/// The ids a query selects, in its order.
fn ids(
    connection: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<u64>, NotesError> {
    let mut statement = connection.prepare_cached(sql)?;
    let ids = statement
        .query_map(params, |row| row.get::<_, i64>(0).map(|id| id as u64))?
        .collect::<Result<_, _>>()?;
    Ok(ids)
}

fn add_tags(tx: &rusqlite::Transaction<'_>, id: u64, tags: &[String]) -> Result<(), NotesError> {
    let mut statement =
        tx.prepare_cached("INSERT OR IGNORE INTO note_tags (note_id, tag) VALUES (?1, ?2)")?;
    for tag in tags {
        statement.execute(params![id as i64, tag])?;
    }
    Ok(())
}

/// A title as stored: trimmed, not blank, within the limit.
fn checked_title(title: &str) -> Result<String, NotesError> {
    let title = title.trim();
    if title.is_empty() {
        return Err(NotesError::EmptyTitle);
    }
    within("title", title, MAX_TITLE_CHARS)?;
    Ok(title.to_owned())
}

fn check_body(body: &str) -> Result<(), NotesError> {
    within("body", body, MAX_BODY_CHARS)
}

fn check_tag_count(count: usize) -> Result<(), NotesError> {
    if count > MAX_TAGS {
        return Err(NotesError::TooManyTags(count));
    }
    Ok(())
}

/// `Ok` when `text` is at most `max` characters; counting stops past the limit.
fn within(what: &str, text: &str, max: usize) -> Result<(), NotesError> {
    // A byte length within the limit is a character count within it too.
    if text.len() <= max {
        return Ok(());
    }
    let len = text.chars().count();
    if len > max {
        return Err(NotesError::TooLong {
            what: what.to_owned(),
            len,
            max,
        });
    }
    Ok(())
}

/// Tags as stored: trimmed, lowercase, within the limit, sorted, without repeats.
pub(crate) fn normalise_tags<S: AsRef<str>>(tags: &[S]) -> Result<Vec<String>, NotesError> {
    let mut out: Vec<String> = Vec::with_capacity(tags.len());
    for tag in tags {
        let tag = tag.as_ref().trim();
        if tag.is_empty() {
            return Err(NotesError::EmptyTag);
        }
        within(&format!("tag {:?}", cut(tag)), tag, MAX_TAG_CHARS)?;
        out.push(tag.to_lowercase());
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// The start of a long text, for a message about it.
fn cut(text: &str) -> String {
    match text.char_indices().nth(20) {
        Some((end, _)) => format!("{}…", &text[..end]),
        None => text.to_owned(),
    }
}

/// Seconds since the Unix epoch.
fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tags(list: &[&str]) -> Vec<String> {
        list.iter().map(|t| (*t).to_owned()).collect()
    }

    #[test]
    fn notes_are_kept_with_their_tags_and_ids_grow() {
        let book = Notebook::in_memory();
        let first = book
            .add("  First ", "body".into(), &tags(&["B", "a", "b"]))
            .unwrap();
        assert_eq!((first.id, first.title.as_str()), (1, "First"));
        assert_eq!(first.tags, ["a", "b"]);
        let second = book.add("Second", String::new(), &[]).unwrap();
        assert_eq!(second.id, 2);
        assert_eq!(book.get(1).unwrap(), first);
        let (total, page) = book.list(None, 10, 0).unwrap();
        assert_eq!(
            (total, page.iter().map(|n| n.id).collect::<Vec<_>>()),
            (2, vec![2, 1])
        );
        let (total, page) = book.list(Some(" A "), 10, 0).unwrap();
        assert_eq!((total, page.len()), (1, 1));
        assert_eq!(
            book.tag_counts().unwrap(),
            [("a".to_owned(), 1), ("b".to_owned(), 1)]
        );
        let moved = book.retag(1, &tags(&["c"]), &tags(&["a"])).unwrap();
        assert_eq!(moved.tags, ["b", "c"]);
        assert_eq!(book.delete(1).unwrap().title, "First");
        assert!(matches!(book.get(1), Err(NotesError::NotFound(1))));
        assert!(
            book.tag_counts().unwrap().is_empty(),
            "a note's tags go with it"
        );
    }

    #[test]
    fn limits_are_refused_with_what_to_do() {
        let book = Notebook::in_memory();
        let long_title = "t".repeat(MAX_TITLE_CHARS + 1);
        assert_eq!(
            book.add(&long_title, String::new(), &[])
                .unwrap_err()
                .to_string(),
            "the title is 201 characters long; the most is 200: shorten it"
        );
        let many: Vec<String> = (0..=MAX_TAGS).map(|n| format!("t{n}")).collect();
        assert_eq!(
            book.add("x", String::new(), &many).unwrap_err().to_string(),
            "a note carries at most 20 tags, and this one would carry 21: remove some with \
             `untag_note` first"
        );
        let long_tag = "x".repeat(MAX_TAG_CHARS + 1);
        assert_eq!(
            book.add("x", String::new(), &[long_tag])
                .unwrap_err()
                .to_string(),
            "the tag \"xxxxxxxxxxxxxxxxxxxx…\" is 65 characters long; the most is 64: shorten it"
        );
        assert!(matches!(
            book.add(" ", String::new(), &[]),
            Err(NotesError::EmptyTitle)
        ));
        // Nothing refused was kept.
        assert_eq!(book.list(None, 10, 0).unwrap().0, 0);
    }

    #[test]
    fn a_file_is_shared_by_two_notebooks_and_survives_them() {
        let dir = std::env::temp_dir().join(format!("notes-db-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notes.db");
        let one = Notebook::open(Some(&path)).unwrap();
        let two = Notebook::open(Some(&path)).unwrap();
        let a = one.add("from one", String::new(), &[]).unwrap();
        let b = two.add("from two", String::new(), &[]).unwrap();
        assert_ne!(a.id, b.id);
        drop((one, two));
        let again = Notebook::open(Some(&path)).unwrap();
        assert_eq!(again.list(None, 10, 0).unwrap().0, 2);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The index checked against the notes (FTS5's `integrity-check`, which reads the
    /// content too), and what a search finds: (id, score), best first.
    fn searched(book: &Notebook, query: &str) -> Vec<(u64, u32)> {
        book.lock()
            .execute(
                "INSERT INTO notes_fts (notes_fts, rank) VALUES ('integrity-check', 1)",
                [],
            )
            .expect("the index holds the notes as they are");
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        book.search(&words, 10)
            .unwrap()
            .into_iter()
            .map(|found| (found.id, found.score))
            .collect()
    }

    #[test]
    fn the_bundled_sqlite_has_fts5() {
        let book = Notebook::in_memory();
        let fts5: bool = book
            .lock()
            .query_row(
                "SELECT sqlite_compileoption_used('ENABLE_FTS5')",
                [],
                |row| row.get(0),
            )
            .unwrap();
        assert!(fts5);
    }

    #[test]
    fn a_search_finds_words_by_their_start_in_titles_bodies_and_tags() {
        let book = Notebook::in_memory();
        book.add("Groceries", "Milk, EGGS and bread".into(), &tags(&["home"]))
            .unwrap();
        book.add("Eggplant recipe", "Roast it".into(), &[]).unwrap();
        book.add("Begged", "nothing to see".into(), &tags(&["homework"]))
            .unwrap();
        assert_eq!(searched(&book, "egg"), [(2, 1), (1, 1)]);
        assert_eq!(searched(&book, "Home"), [(3, 1), (1, 1)]);
        // More words found is better; then newer.
        assert_eq!(searched(&book, "eggs bread roast"), [(1, 2), (2, 1)]);
        assert_eq!(searched(&book, "egg milk"), [(1, 2), (2, 1)]);
        assert_eq!(searched(&book, "absent"), []);
        // Enough notes hold every word: only those come.
        assert_eq!(
            book.search(&tags(&["egg", "egg"]), 1)
                .unwrap()
                .iter()
                .map(|f| (f.id, f.score))
                .collect::<Vec<_>>(),
            [(2, 2)]
        );
    }

    #[test]
    fn the_index_follows_every_change() {
        let book = Notebook::in_memory();
        book.add("Alpha", "first body".into(), &tags(&["red", "blue"]))
            .unwrap();
        book.add("Beta", "second body".into(), &tags(&["green"]))
            .unwrap();
        assert_eq!(searched(&book, "first"), [(1, 1)]);
        book.update(1, Some("Gamma"), Some("changed text".into()))
            .unwrap();
        assert_eq!(searched(&book, "alpha first"), []);
        assert_eq!(searched(&book, "gamma changed"), [(1, 2)]);
        book.retag(1, &tags(&["yellow"]), &tags(&["red"])).unwrap();
        assert_eq!(searched(&book, "red"), []);
        assert_eq!(searched(&book, "yellow blue"), [(1, 2)]);
        book.retag(2, &[], &tags(&["green"])).unwrap();
        assert_eq!(searched(&book, "green"), []);
        book.delete(1).unwrap();
        assert_eq!(searched(&book, "gamma yellow blue"), []);
        assert_eq!(searched(&book, "body"), [(2, 1)]);
    }

    #[test]
    fn query_syntax_is_text() {
        let book = Notebook::in_memory();
        book.add(
            "C++ \"quotes\"",
            "a*b NEAR(x) -minus col:on ^caret".into(),
            &[],
        )
        .unwrap();
        for query in [
            "\"",
            "\"quotes\"",
            "*",
            "a*b",
            "NEAR(x)",
            "-minus",
            "col:on",
            "^caret",
            "AND",
            "OR NOT",
            "(",
            "c++",
            "title:c",
        ] {
            let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
            assert!(book.search(&words, 10).is_ok(), "{query}");
        }
        assert_eq!(searched(&book, "\"quotes\""), [(1, 1)]);
        assert_eq!(searched(&book, "near(x)"), [(1, 1)]);
        assert_eq!(searched(&book, "-minus"), [(1, 1)]);
        assert_eq!(searched(&book, "* ("), []);
    }

    #[test]
    fn a_database_made_before_the_index_gets_it_when_opened() {
        let dir = std::env::temp_dir().join(format!("notes-fts-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notes.db");
        {
            // The schema as it was, with a note and its tag.
            let old = Connection::open(&path).unwrap();
            old.execute_batch(
                "CREATE TABLE notes (
                     id INTEGER PRIMARY KEY AUTOINCREMENT, title TEXT NOT NULL,
                     body TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL
                 );
                 CREATE TABLE note_tags (
                     note_id INTEGER NOT NULL REFERENCES notes(id) ON DELETE CASCADE,
                     tag TEXT NOT NULL, PRIMARY KEY (note_id, tag)
                 ) WITHOUT ROWID;
                 INSERT INTO notes VALUES (1, 'Old note', 'kept from before', 0, 0);
                 INSERT INTO note_tags VALUES (1, 'archive');",
            )
            .unwrap();
        }
        let book = Notebook::open(Some(&path)).unwrap();
        assert_eq!(searched(&book, "kept archive"), [(1, 2)]);
        drop(book);
        // Opened again, it is not built again: what changed since is there.
        let book = Notebook::open(Some(&path)).unwrap();
        book.add("New note", "kept too".into(), &[]).unwrap();
        drop(book);
        let book = Notebook::open(Some(&path)).unwrap();
        assert_eq!(searched(&book, "kept"), [(2, 1), (1, 1)]);
        drop(book);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
