//! The notebook the tools work on: in memory, or kept in a file that is replaced atomically on
//! every change.

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

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
    /// The change could not be written; the notebook is as it was before the call.
    #[error("the notebook could not be saved, so nothing changed: {0}")]
    Save(#[from] io::Error),
}

#[derive(Default, Serialize, Deserialize)]
struct Contents {
    next_id: u64,
    notes: BTreeMap<u64, Note>,
}

/// The notes, behind a lock, with the file they are kept in, if any.
pub struct Notebook {
    contents: Mutex<Contents>,
    path: Option<PathBuf>,
}

static NOTEBOOK: OnceLock<Notebook> = OnceLock::new();

/// Opens the notebook the tools use: the notes in `path` (created on the first change if it
/// does not exist), or an empty notebook in memory. Call it once, before serving.
///
/// Fails if the file cannot be read or is not a notebook, or if the notebook is already open.
pub fn open(path: Option<&Path>) -> io::Result<&'static Notebook> {
    let opened = match path {
        Some(path) => Notebook::load(path)?,
        None => Notebook::in_memory(),
    };
    NOTEBOOK
        .set(opened)
        .map_err(|_| io::Error::other("the notebook is already open"))?;
    Ok(notebook())
}

/// The notebook the tools use: the one [`open`] opened, or an empty one in memory.
pub fn notebook() -> &'static Notebook {
    NOTEBOOK.get_or_init(Notebook::in_memory)
}

impl Notebook {
    /// An empty notebook that lives in memory only.
    pub fn in_memory() -> Notebook {
        Notebook {
            contents: Mutex::new(Contents {
                next_id: 1,
                notes: BTreeMap::new(),
            }),
            path: None,
        }
    }

    /// The notebook kept in `path`; empty if the file does not exist yet.
    pub fn load(path: &Path) -> io::Result<Notebook> {
        let contents = match fs::read(path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|err| {
                io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!("{} is not a notebook: {err}", path.display()),
                )
            })?,
            Err(err) if err.kind() == io::ErrorKind::NotFound => Contents {
                next_id: 1,
                notes: BTreeMap::new(),
            },
            Err(err) => return Err(err),
        };
        Ok(Notebook {
            contents: Mutex::new(contents),
            path: Some(path.to_owned()),
        })
    }

    /// The file the notebook is kept in, if any.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Reads the notes.
    pub fn read<T>(&self, f: impl FnOnce(&BTreeMap<u64, Note>) -> T) -> T {
        f(&self.lock().notes)
    }

    /// Changes the notes. The change is made on a copy and kept only once it is saved, so a
    /// failed save leaves the notebook (in memory and on disk) as it was.
    pub fn change<T>(
        &self,
        f: impl FnOnce(&mut BTreeMap<u64, Note>, &mut u64) -> Result<T, NotesError>,
    ) -> Result<T, NotesError> {
        let mut contents = self.lock();
        let mut notes = contents.notes.clone();
        let mut next_id = contents.next_id;
        let value = f(&mut notes, &mut next_id)?;
        let changed = Contents { next_id, notes };
        if let Some(path) = &self.path {
            save(path, &changed)?;
        }
        *contents = changed;
        Ok(value)
    }

    fn lock(&self) -> MutexGuard<'_, Contents> {
        // A tool that panicked while holding the lock changed nothing: changes are made on a copy.
        self.contents.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Writes the notebook to a temporary file beside `path`, flushes it to disk, and renames it over
/// `path`: a crash at any point leaves either the old notebook or the new one, never a mix.
fn save(path: &Path, contents: &Contents) -> io::Result<()> {
    let bytes = serde_json::to_vec_pretty(contents).map_err(io::Error::other)?;
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    let mut tmp_name = path.file_name().unwrap_or_default().to_owned();
    tmp_name.push(format!(".tmp-{}", std::process::id()));
    let tmp = dir.join(tmp_name);
    let written = (|| {
        let mut file = File::create(&tmp)?;
        file.write_all(&bytes)?;
        file.sync_all()?;
        fs::rename(&tmp, path)?;
        // The rename is durable once the directory entry is.
        File::open(dir)?.sync_all()
    })();
    if written.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    written
}

/// Seconds since the Unix epoch.
pub(crate) fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn note(id: u64) -> Note {
        Note {
            id,
            title: format!("note {id}"),
            body: String::new(),
            tags: vec![],
            created_at: 0,
            updated_at: 0,
        }
    }

    #[test]
    fn changes_survive_a_reload() {
        let dir = std::env::temp_dir().join(format!("notes-tools-test-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("notes.json");
        let _ = fs::remove_file(&path);
        let book = Notebook::load(&path).unwrap();
        book.change(|notes, next| {
            notes.insert(*next, note(*next));
            *next += 1;
            Ok(())
        })
        .unwrap();
        let again = Notebook::load(&path).unwrap();
        assert_eq!(again.read(|n| n.get(&1).cloned()), Some(note(1)));
        let leftovers: Vec<_> = fs::read_dir(&dir).unwrap().collect();
        assert_eq!(leftovers.len(), 1, "no temporary file is left behind");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_failed_change_leaves_the_notebook_as_it_was() {
        let book = Notebook::in_memory();
        let result: Result<(), _> = book.change(|notes, _| {
            notes.insert(9, note(9));
            Err(NotesError::EmptyTitle)
        });
        assert!(result.is_err());
        assert!(book.read(BTreeMap::is_empty));
    }

    #[test]
    fn a_corrupt_file_is_refused_not_overwritten() {
        let path = std::env::temp_dir().join(format!("notes-corrupt-{}.json", std::process::id()));
        fs::write(&path, b"{ half a notebook").unwrap();
        let err = Notebook::load(&path).err().unwrap();
        assert!(err.to_string().contains("is not a notebook"), "{err}");
        assert_eq!(fs::read(&path).unwrap(), b"{ half a notebook");
        fs::remove_file(&path).unwrap();
    }
}
