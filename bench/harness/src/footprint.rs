//! What a 50-tool stdio server is made of: each crate's bytes of code in the binary, and which
//! of those pages a server has in memory once it has answered a list and some calls.
//!
//! Bytes come from the binary's symbol table (each function's size, by the crate its demangled
//! path starts with, as `cargo bloat --crates` counts them). Pages come from the running
//! server's `/proc/<pid>/maps` and `/proc/<pid>/pagemap`: a page of the binary's code is
//! counted when it is mapped into the process, and shared among the crates whose functions it
//! holds, by bytes. The kernel maps a few neighbouring pages on each fault when they are in the
//! page cache ("fault-around"), so a page counted was touched or lies next to one that was:
//! this is what the server's resident memory holds, a little more than what it ran.

use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};

use crate::server::{Connection, Server};

/// The page size of the machines measured.
const PAGE: u64 = 4096;
/// Crates listed by name; the others are summed in one row.
const LISTED: usize = 16;
/// Calls made before the pages are read.
const CALLS: usize = 100;

/// One binary: its functions by crate, and the pages a server running it has in memory.
pub(crate) struct Footprint {
    /// What the column is called.
    pub(crate) label: String,
    /// The binary's size on disk, unstripped, in bytes.
    pub(crate) file_bytes: u64,
    /// Bytes of functions, by crate.
    pub(crate) code: BTreeMap<String, u64>,
    /// Pages of the binary's code in memory, by crate (shared by bytes, so fractional).
    pub(crate) pages: BTreeMap<String, f64>,
    /// The server's resident memory, in KiB, by kind of mapping.
    pub(crate) resident: Resident,
}

impl Footprint {
    /// The bytes of code and the resident pages of the crates `counted` keeps.
    fn sum(&self, counted: impl Fn(&String) -> bool) -> (u64, f64) {
        let bytes = self
            .code
            .iter()
            .filter(|(name, _)| counted(name))
            .map(|(_, b)| b)
            .sum();
        let pages = self
            .pages
            .iter()
            .filter(|(name, _)| counted(name))
            .map(|(_, p)| p)
            .sum();
        (bytes, pages)
    }
}

/// Resident memory (`Rss` in `/proc/<pid>/smaps`), in KiB.
#[derive(Default)]
pub(crate) struct Resident {
    /// The binary's executable mapping.
    pub(crate) code: u64,
    /// The binary's other mappings: constants, tables, relocated data.
    pub(crate) data: u64,
    /// Shared libraries (the C library, the loader).
    pub(crate) libraries: u64,
    /// Anonymous memory: the heap, thread stacks.
    pub(crate) anonymous: u64,
}

/// A function: where it starts in the binary, how long it is, and its crate.
struct Function {
    address: u64,
    size: u64,
    krate: usize,
}

/// Measures the server `binary`: reads its symbols, starts it, has it answer `initialize`,
/// `tools/list` and `CALLS` calls of `echo`, then reads its mappings.
pub(crate) fn measure(
    label: String,
    server: Server,
    binary: &Path,
    echo: &str,
) -> io::Result<Footprint> {
    let data = std::fs::read(binary)?;
    let file = object::File::parse(&*data).map_err(io::Error::other)?;
    let mut crates: Vec<String> = Vec::new();
    let mut functions = Vec::new();
    for symbol in file.symbols() {
        if symbol.kind() != SymbolKind::Text || symbol.size() == 0 {
            continue;
        }
        let name = crate_of(symbol.name().unwrap_or(""));
        let krate = match crates.iter().position(|known| *known == name) {
            Some(index) => index,
            None => {
                crates.push(name.clone());
                crates.len() - 1
            }
        };
        functions.push(Function {
            address: symbol.address(),
            size: symbol.size(),
            krate,
        });
    }
    functions.sort_by_key(|f| f.address);
    // Aliases (two names, one function) are counted once, by the first name, in bytes as in
    // pages.
    functions.dedup_by_key(|f| f.address);
    let mut code = BTreeMap::new();
    for function in &functions {
        *code.entry(crates[function.krate].clone()).or_insert(0) += function.size;
    }

    let mut connection = Connection::spawn(server, binary, false)?;
    connection.initialize()?;
    connection.call("tools/list", "{}")?;
    for _ in 0..CALLS {
        connection.call("tools/call", echo)?;
    }
    let pid = connection.pid();
    let canonical = std::fs::canonicalize(binary)?;
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps"))?;
    let mut pagemap = File::open(format!("/proc/{pid}/pagemap"))?;
    let mut pages = BTreeMap::new();
    for line in maps.lines() {
        let mapping = Mapping::parse(line)?;
        if mapping.path != canonical.as_os_str() || !mapping.executable {
            continue;
        }
        // Where the binary's addresses are in this process: the segment holding the
        // mapping's file offset.
        let segment = file
            .segments()
            .find(|s| {
                let (offset, size) = s.file_range();
                offset <= mapping.offset && mapping.offset < offset + size
            })
            .ok_or_else(|| io::Error::other("a mapping no segment of the binary holds"))?;
        let bias = mapping.start - (segment.address() + mapping.offset - segment.file_range().0);
        let mut page = mapping.start;
        while page < mapping.end {
            if present(&mut pagemap, page)? {
                share(&functions, &crates, page - bias, &mut pages);
            }
            page += PAGE;
        }
    }
    let resident = resident(pid, &canonical)?;
    connection.close()?;
    Ok(Footprint {
        label,
        file_bytes: data.len() as u64,
        code,
        pages,
        resident,
    })
}

/// The crate a symbol's function belongs to: the first segment of its demangled path, or of
/// the type in `<Type as Trait>::method`. Symbols that are not Rust's are `[other]`.
fn crate_of(mangled: &str) -> String {
    let Ok(demangled) = rustc_demangle::try_demangle(mangled) else {
        return "[other]".to_owned();
    };
    let path = format!("{demangled:#}");
    let path = path.trim_start_matches(['<', '&', '*', '[', '(']);
    let path = path
        .strip_prefix("mut ")
        .or_else(|| path.strip_prefix("dyn "))
        .or_else(|| path.strip_prefix("const "))
        .unwrap_or(path);
    let head: String = path
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
        .collect();
    let is_crate = !head.is_empty()
        && path[head.len()..].starts_with("::")
        && head.starts_with(|c: char| c.is_ascii_lowercase() || c == '_');
    if is_crate { head } else { "[other]".to_owned() }
}

/// Adds the page at binary address `page` to the crates whose functions it holds, by bytes;
/// a page of no function (padding, a C routine without a size) is `[no symbol]`.
fn share(functions: &[Function], crates: &[String], page: u64, pages: &mut BTreeMap<String, f64>) {
    let end = page + PAGE;
    let first = functions.partition_point(|f| f.address + f.size <= page);
    let mut by_crate: BTreeMap<usize, u64> = BTreeMap::new();
    for function in functions[first..].iter().take_while(|f| f.address < end) {
        let overlap = (function.address + function.size).min(end) - function.address.max(page);
        *by_crate.entry(function.krate).or_insert(0) += overlap;
    }
    let total: u64 = by_crate.values().sum();
    if total == 0 {
        *pages.entry("[no symbol]".to_owned()).or_insert(0.0) += 1.0;
        return;
    }
    for (krate, bytes) in by_crate {
        *pages.entry(crates[krate].clone()).or_insert(0.0) += bytes as f64 / total as f64;
    }
}

/// Whether the page at `address` is in the process's memory (bit 63 of its pagemap entry).
fn present(pagemap: &mut File, address: u64) -> io::Result<bool> {
    let mut entry = [0u8; 8];
    pagemap.seek(SeekFrom::Start(address / PAGE * 8))?;
    pagemap.read_exact(&mut entry)?;
    Ok(u64::from_le_bytes(entry) >> 63 == 1)
}

/// The process's resident memory by kind of mapping, from `/proc/<pid>/smaps`.
fn resident(pid: u32, binary: &Path) -> io::Result<Resident> {
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps"))?;
    let mut resident = Resident::default();
    let mut current: Option<Mapping> = None;
    for line in smaps.lines() {
        if let Some(kib) = line.strip_prefix("Rss:") {
            let kib: u64 = kib
                .trim()
                .trim_end_matches("kB")
                .trim()
                .parse()
                .map_err(io::Error::other)?;
            let Some(mapping) = &current else { continue };
            let slot = if mapping.path == binary.as_os_str() {
                if mapping.executable {
                    &mut resident.code
                } else {
                    &mut resident.data
                }
            } else if mapping.path.to_string_lossy().starts_with('/') {
                &mut resident.libraries
            } else {
                &mut resident.anonymous
            };
            *slot += kib;
        } else if line.starts_with(|c: char| c.is_ascii_hexdigit())
            && line.contains('-')
            && let Ok(mapping) = Mapping::parse(line)
        {
            current = Some(mapping);
        }
    }
    Ok(resident)
}

/// A line of `/proc/<pid>/maps`.
struct Mapping {
    start: u64,
    end: u64,
    executable: bool,
    offset: u64,
    path: std::ffi::OsString,
}

impl Mapping {
    fn parse(line: &str) -> io::Result<Mapping> {
        let bad = || io::Error::other(format!("a line of /proc/<pid>/maps not understood: {line}"));
        let mut fields = line.split_whitespace();
        let (start, end) = fields
            .next()
            .and_then(|r| r.split_once('-'))
            .ok_or_else(bad)?;
        let perms = fields.next().ok_or_else(bad)?;
        let offset = fields.next().ok_or_else(bad)?;
        let hex = |s: &str| u64::from_str_radix(s, 16).map_err(|_| bad());
        // The device and the inode, then the path, which may be absent.
        let path = fields.nth(2).unwrap_or("");
        Ok(Mapping {
            start: hex(start)?,
            end: hex(end)?,
            executable: perms.contains('x'),
            offset: hex(offset)?,
            path: path.into(),
        })
    }
}

/// The footprints side by side, as Markdown: code by crate, pages by crate, resident memory.
pub(crate) fn table(footprints: &[Footprint]) -> String {
    let mut out = String::new();
    let header = |out: &mut String, first: &str| {
        out.push_str(&format!("| {first} |"));
        for f in footprints {
            out.push_str(&format!(" {} |", f.label));
        }
        out.push_str("\n| --- |");
        out.push_str(&" ---: |".repeat(footprints.len()));
        out.push('\n');
    };
    // Crates in order of their largest code in any column.
    let mut crates: Vec<(&String, u64)> = Vec::new();
    for f in footprints {
        for (name, bytes) in &f.code {
            match crates.iter_mut().find(|(known, _)| *known == name) {
                Some((_, most)) => *most = (*most).max(*bytes),
                None => crates.push((name, *bytes)),
            }
        }
    }
    crates.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let listed: Vec<&String> = crates.iter().take(LISTED).map(|(name, _)| *name).collect();

    header(&mut out, "code by crate, KiB (resident pages)");
    for name in &listed {
        out.push_str(&format!("| `{name}` |"));
        for f in footprints {
            let bytes = f.code.get(*name).copied().unwrap_or(0);
            let pages = f.pages.get(*name).copied().unwrap_or(0.0);
            out.push_str(&if bytes == 0 {
                " – |".to_owned()
            } else {
                format!(" {:.1} ({pages:.1}) |", bytes as f64 / 1024.0)
            });
        }
        out.push('\n');
    }
    out.push_str(&format!(
        "| {} other crates |",
        crates.len().saturating_sub(LISTED)
    ));
    for f in footprints {
        let (bytes, pages) = f.sum(|name| !listed.contains(&name));
        out.push_str(&format!(" {:.1} ({pages:.1}) |", bytes as f64 / 1024.0));
    }
    out.push_str("\n| **all code** |");
    for f in footprints {
        let (bytes, pages) = f.sum(|_| true);
        out.push_str(&format!(" **{:.1} ({pages:.0})** |", bytes as f64 / 1024.0));
    }
    out.push_str("\n| the binary, unstripped, KiB |");
    for f in footprints {
        out.push_str(&format!(" {:.0} |", f.file_bytes as f64 / 1024.0));
    }
    out.push_str("\n\n");

    header(&mut out, "resident after a list and 100 calls, KiB");
    type Kind = fn(&Resident) -> u64;
    let rows: [(&str, Kind); 4] = [
        ("the binary's code", |r| r.code),
        ("the binary's constants and data", |r| r.data),
        ("shared libraries", |r| r.libraries),
        ("heap and stacks", |r| r.anonymous),
    ];
    for (name, get) in rows {
        out.push_str(&format!("| {name} |"));
        for f in footprints {
            out.push_str(&format!(" {} |", get(&f.resident)));
        }
        out.push('\n');
    }
    out.push_str("| **all** |");
    for f in footprints {
        let r = &f.resident;
        out.push_str(&format!(
            " **{}** |",
            r.code + r.data + r.libraries + r.anonymous
        ));
    }
    out.push('\n');
    out
}
