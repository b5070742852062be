//! The protocol's rules, in one place for both crates that enforce them: names (SEP-986 tool
//! names, providers, `Mcp-Param-*` headers, OAuth scopes), the URI of an MCP Apps view, and
//! resources' URI templates ([`template`]).
//!
//! `#[mcp_tool]`, `#[mcp_prompt]` and `#[mcp_resource]` check what they are given at compile
//! time, with a spanned error; the runtime checks the names it reads (`CanonicalName`), the views
//! it is given (`UiResource::new`, in `const` context too) and matches URIs against templates.
//! A proc-macro crate cannot depend on the crate that re-exports it, so the rules live here,
//! below both.
//!
//! This crate is internal to toolwright and has no stable API: depend on `toolwright`.

#![no_std]

extern crate alloc;

pub mod template;

/// The longest tool name SEP-986 allows.
pub const MAX_TOOL_NAME_LEN: usize = 128;

/// The longest provider, so that a namespaced name `<provider>__<tool>` has room for a tool.
pub const MAX_PROVIDER_LEN: usize = 64;

/// The provider rule, as a message states it.
pub const PROVIDER_RULE: &str =
    "a provider is 1 to 64 of `A-Z a-z 0-9 _ -`, with no `__` and no trailing `_`";

/// Why a tool (or argument) name breaks SEP-986: 1 to 128 of `A-Z a-z 0-9 _ - .`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NameProblem {
    /// No characters at all.
    Empty,
    /// Longer than `MAX_TOOL_NAME_LEN`: this many bytes.
    TooLong(usize),
    /// A space, a tab or another whitespace character.
    Whitespace,
    /// The first character outside the rule.
    Character(char),
}

impl core::fmt::Display for NameProblem {
    /// Phrased to follow "is not a valid tool name: ".
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        match self {
            NameProblem::Empty => f.write_str("it is empty"),
            NameProblem::TooLong(len) => write!(f, "it is {len} characters long"),
            NameProblem::Whitespace => f.write_str("it contains whitespace"),
            NameProblem::Character(c) => write!(f, "it contains `{c}`"),
        }
    }
}

/// Checks a name against SEP-986.
pub fn tool_name(name: &str) -> Result<(), NameProblem> {
    if name.is_empty() {
        return Err(NameProblem::Empty);
    }
    if name.len() > MAX_TOOL_NAME_LEN {
        return Err(NameProblem::TooLong(name.len()));
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.')))
    {
        Some(c) if c.is_whitespace() => Err(NameProblem::Whitespace),
        Some(c) => Err(NameProblem::Character(c)),
        None => Ok(()),
    }
}

/// Whether `provider` can be the middle of a canonical name `mcp::<provider>::<tool>` and the
/// prefix of a namespaced one `<provider>__<tool>`. Without `__` and a trailing `_` in a provider,
/// the first `__` of a namespaced name always ends it, so two tools never share one.
pub fn is_provider(provider: &str) -> bool {
    (1..=MAX_PROVIDER_LEN).contains(&provider.len())
        && provider
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
        && !provider.contains("__")
        && !provider.ends_with('_')
}

/// Checks the URI of an MCP Apps view: `ui://<server>/<view>`, both parts non-empty, printable
/// ASCII. `Err` says what is wrong, as a sentence of its own.
pub const fn ui_uri(uri: &str) -> Result<(), &'static str> {
    const SCHEME: &[u8] = b"ui://";
    let bytes = uri.as_bytes();
    let mut i = 0;
    while i < SCHEME.len() {
        if i >= bytes.len() || bytes[i] != SCHEME[i] {
            return Err(
                "a view's URI starts with `ui://`, the scheme MCP Apps serves views \
                        under, as in `ui://notes/board.html`",
            );
        }
        i += 1;
    }
    let mut slash = SCHEME.len();
    while slash < bytes.len() && bytes[slash] != b'/' {
        slash += 1;
    }
    if slash == SCHEME.len() || slash + 1 >= bytes.len() {
        return Err("a view's URI names a server and a view, `ui://<server>/<view>`");
    }
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] <= b' ' || bytes[i] >= 0x7f {
            return Err(
                "a view's URI is printable ASCII, without whitespace: percent-encode the \
                        rest",
            );
        }
        i += 1;
    }
    Ok(())
}

/// Checks the name of a header that mirrors an argument (`x-mcp-header`, sent as
/// `Mcp-Param-<name>`): an RFC 9110 token, 1 or more of `A-Z a-z 0-9 ! # $ % & ' * + - . ^ _ ` | ~`.
/// `Err` says what is wrong, to follow "cannot name a header: ".
pub fn header_name(name: &str) -> Result<(), NameProblem> {
    if name.is_empty() {
        return Err(NameProblem::Empty);
    }
    match name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(*c)))
    {
        Some(c) if c.is_whitespace() => Err(NameProblem::Whitespace),
        Some(c) => Err(NameProblem::Character(c)),
        None => Ok(()),
    }
}

/// The scope rule, as a message states it.
pub const SCOPE_RULE: &str = "a scope is 1 or more printable ASCII characters other than \
     space, `\"` and `\\` (RFC 6749, section 3.3)";

/// Whether `scope` is one OAuth scope (RFC 6749 `scope-token`): 1 or more of `%x21 / %x23-5B /
/// %x5D-7E`, so that a list of them can be written space-separated, as tokens and challenges
/// carry them.
pub const fn is_scope(scope: &str) -> bool {
    let bytes = scope.as_bytes();
    if bytes.is_empty() {
        return false;
    }
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x21 || b > 0x7e || b == b'"' || b == b'\\' {
            return false;
        }
        i += 1;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_names_follow_sep_986() {
        assert_eq!(tool_name("notes.add_note-2"), Ok(()));
        assert_eq!(tool_name(""), Err(NameProblem::Empty));
        assert_eq!(tool_name("add note"), Err(NameProblem::Whitespace));
        assert_eq!(tool_name("notes/add"), Err(NameProblem::Character('/')));
        let long = "a".repeat(MAX_TOOL_NAME_LEN + 1);
        assert_eq!(tool_name(&long), Err(NameProblem::TooLong(129)));
    }

    #[test]
    fn providers_leave_namespaced_names_unambiguous() {
        assert!(is_provider("notes-tools"));
        assert!(!is_provider("notes__tools"));
        assert!(!is_provider("notes_"));
        assert!(!is_provider("notes.tools"));
        assert!(!is_provider(""));
    }

    #[test]
    fn views_headers_and_scopes() {
        assert_eq!(ui_uri("ui://notes/board.html"), Ok(()));
        assert!(ui_uri("https://notes/board.html").is_err());
        assert!(ui_uri("ui://notes/").is_err());
        assert!(ui_uri("ui://notes/a b").is_err());
        assert_eq!(header_name("X-Trace_1"), Ok(()));
        assert_eq!(header_name("a:b"), Err(NameProblem::Character(':')));
        assert!(is_scope("notes:write"));
        assert!(!is_scope("notes write"));
        assert!(!is_scope("a\"b"));
    }
}
