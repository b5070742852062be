//! The protocol's naming rules, in one place for both crates that enforce them: `#[mcp_tool]`
//! checks a tool's names and view at compile time, with a spanned error, and the runtime checks
//! the names it reads (`CanonicalName`) and the views it is given (`UiResource::new`, at compile
//! time too).
//!
//! This file is the `rules` module of `toolwright` and, through a symbolic link, of
//! `toolwright-macros`, which cannot depend on `toolwright`. It uses `core` alone.

/// The longest tool name SEP-986 allows.
pub(crate) const MAX_TOOL_NAME_LEN: usize = 128;

/// The longest provider, so that a namespaced name `<provider>__<tool>` has room for a tool.
pub(crate) const MAX_PROVIDER_LEN: usize = 64;

/// The provider rule, as a message states it.
pub(crate) const PROVIDER_RULE: &str =
    "a provider is 1 to 64 of `A-Z a-z 0-9 _ -`, with no `__` and no trailing `_`";

/// Why a tool (or argument) name breaks SEP-986: 1 to 128 of `A-Z a-z 0-9 _ - .`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum NameProblem {
    Empty,
    /// Longer than `MAX_TOOL_NAME_LEN`: this many bytes.
    TooLong(usize),
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
pub(crate) fn tool_name(name: &str) -> Result<(), NameProblem> {
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
pub(crate) fn is_provider(provider: &str) -> bool {
    (1..=MAX_PROVIDER_LEN).contains(&provider.len())
        && provider
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'))
        && !provider.contains("__")
        && !provider.ends_with('_')
}

/// Checks the URI of an MCP Apps view: `ui://<server>/<view>`, both parts non-empty, printable
/// ASCII. `Err` says what is wrong, as a sentence of its own.
pub(crate) const fn ui_uri(uri: &str) -> Result<(), &'static str> {
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
pub(crate) fn header_name(name: &str) -> Result<(), NameProblem> {
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
#[allow(
    dead_code,
    reason = "the macro's, and the runtime's with its `oauth` feature"
)]
pub(crate) const SCOPE_RULE: &str = "a scope is 1 or more printable ASCII characters other than \
     space, `\"` and `\\` (RFC 6749, section 3.3)";

/// Whether `scope` is one OAuth scope (RFC 6749 `scope-token`): 1 or more of `%x21 / %x23-5B /
/// %x5D-7E`, so that a list of them can be written space-separated, as tokens and challenges
/// carry them.
#[allow(
    dead_code,
    reason = "the macro's, and the runtime's with its `oauth` feature"
)]
pub(crate) const fn is_scope(scope: &str) -> bool {
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
