//! Tool names: the wire name a client calls, and the canonical name that identifies a tool
//! across servers.
//!
//! | name | form | where |
//! | --- | --- | --- |
//! | wire name | the tool's name, SEP-986: 1 to 128 of `A-Z a-z 0-9 _ - .` | `tools/list`, `tools/call` |
//! | namespaced wire name | `<provider>__<tool>` | the same, on a server that serves several providers |
//! | canonical name | `mcp::<provider>::<tool>` | inside a catalog; never on the wire, since `::` is outside SEP-986 and most clients refuse it |
//!
//! A provider is 1 to 64 of `A-Z a-z 0-9 _ -`, with no `__` and no trailing `_`. With that rule
//! the first `__` of a namespaced name always ends the provider, so two different tools can never
//! share a namespaced name, and a canonical name (whose parts contain no `:`) always parses back
//! into the parts it was built from.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use toolwright_rules::{self as rules, MAX_TOOL_NAME_LEN, PROVIDER_RULE};

/// The first segment of every canonical name.
pub const CANONICAL_PREFIX: &str = "mcp";

const SEPARATOR: &str = "::";
const NAMESPACE_SEPARATOR: &str = "__";

/// Whether a name obeys SEP-986: 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
pub(crate) fn is_wire_name(name: &str) -> bool {
    rules::tool_name(name).is_ok()
}

/// Why a provider or tool name, or a canonical or namespaced name, was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum NameError {
    /// The provider does not follow the provider rule.
    #[error("`{0}` is not a valid provider: {rule}", rule = PROVIDER_RULE)]
    Provider(String),
    /// The tool name does not follow SEP-986.
    #[error("`{0}` is not a valid tool name: a tool name is 1 to 128 of `A-Z a-z 0-9 _ - .`")]
    Tool(String),
    /// The text is not a canonical name.
    #[error("`{0}` is not a canonical tool name: expected `mcp::<provider>::<tool>`")]
    Canonical(String),
    /// The text is not a namespaced wire name.
    #[error("`{0}` is not a namespaced tool name: expected `<provider>__<tool>`")]
    Namespaced(String),
    /// A namespaced name would not fit the protocol's length limit.
    #[error("`{0}` is too long for a tool name: the protocol allows 128 characters")]
    TooLong(String),
}

/// Whether `provider` can be part of canonical and namespaced names.
pub fn is_provider(provider: &str) -> bool {
    rules::is_provider(provider)
}

/// A tool's identity across servers: `mcp::<provider>::<tool>`.
///
/// ```
/// use toolwright::names::CanonicalName;
///
/// let name = CanonicalName::new("notes-tools", "add_note")?;
/// assert_eq!(name.to_string(), "mcp::notes-tools::add_note");
/// assert_eq!(name.namespaced()?, "notes-tools__add_note");
/// assert_eq!("mcp::notes-tools::add_note".parse::<CanonicalName>()?, name);
/// assert_eq!(CanonicalName::from_namespaced("notes-tools__add_note")?, name);
/// # Ok::<(), toolwright::names::NameError>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CanonicalName {
    // A registered tool's names are `&'static`: a server makes one per tool at start.
    provider: Cow<'static, str>,
    tool: Cow<'static, str>,
}

impl CanonicalName {
    /// The canonical name of `tool` from `provider`; both are checked.
    pub fn new(provider: &str, tool: &str) -> Result<CanonicalName, NameError> {
        CanonicalName::checked(Cow::Owned(provider.to_owned()), Cow::Owned(tool.to_owned()))
    }

    /// The canonical name of a registered tool, borrowing its names, which `#[mcp_tool]`
    /// checked when it compiled the tool.
    pub(crate) fn registered(provider: &'static str, tool: &'static str) -> CanonicalName {
        debug_assert!(is_provider(provider) && is_wire_name(tool));
        CanonicalName {
            provider: Cow::Borrowed(provider),
            tool: Cow::Borrowed(tool),
        }
    }

    fn checked(
        provider: Cow<'static, str>,
        tool: Cow<'static, str>,
    ) -> Result<CanonicalName, NameError> {
        if !is_provider(&provider) {
            return Err(NameError::Provider(provider.into_owned()));
        }
        if !is_wire_name(&tool) {
            return Err(NameError::Tool(tool.into_owned()));
        }
        Ok(CanonicalName { provider, tool })
    }

    /// Reads back a namespaced wire name, `<provider>__<tool>`.
    pub fn from_namespaced(name: &str) -> Result<CanonicalName, NameError> {
        let (provider, tool) = name
            .split_once(NAMESPACE_SEPARATOR)
            .ok_or_else(|| NameError::Namespaced(name.to_owned()))?;
        CanonicalName::new(provider, tool).map_err(|_| NameError::Namespaced(name.to_owned()))
    }

    /// The provider.
    pub fn provider(&self) -> &str {
        &self.provider
    }

    /// The tool's own name: its wire name on a server that does not namespace.
    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// The wire name on a server that namespaces tools by provider: `<provider>__<tool>`. Fails
    /// only when the result is longer than the protocol allows.
    pub fn namespaced(&self) -> Result<String, NameError> {
        let name = format!("{}{NAMESPACE_SEPARATOR}{}", self.provider, self.tool);
        if name.len() > MAX_TOOL_NAME_LEN {
            return Err(NameError::TooLong(name));
        }
        Ok(name)
    }

    /// The tool's name if `canonical` names a tool of `provider`.
    pub fn strip<'a>(canonical: &'a str, provider: &str) -> Option<&'a str> {
        let tool = canonical
            .strip_prefix(CANONICAL_PREFIX)?
            .strip_prefix(SEPARATOR)?
            .strip_prefix(provider)?
            .strip_prefix(SEPARATOR)?;
        is_wire_name(tool).then_some(tool)
    }
}

impl fmt::Display for CanonicalName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{CANONICAL_PREFIX}{SEPARATOR}{}{SEPARATOR}{}",
            self.provider, self.tool
        )
    }
}

impl FromStr for CanonicalName {
    type Err = NameError;

    fn from_str(s: &str) -> Result<CanonicalName, NameError> {
        let invalid = || NameError::Canonical(s.to_owned());
        let rest = s
            .strip_prefix(CANONICAL_PREFIX)
            .and_then(|r| r.strip_prefix(SEPARATOR))
            .ok_or_else(invalid)?;
        let (provider, tool) = rest.split_once(SEPARATOR).ok_or_else(invalid)?;
        CanonicalName::new(provider, tool).map_err(|_| invalid())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sep_986_names() {
        for ok in [
            "getUser",
            "DATA_EXPORT_v2",
            "admin.tools.list",
            "a",
            &"x".repeat(128),
        ] {
            assert!(is_wire_name(ok), "{ok} should be accepted");
        }
        for bad in [
            "",
            "get user",
            "a,b",
            "mcp::notes::add",
            "café",
            &"x".repeat(129),
        ] {
            assert!(!is_wire_name(bad), "{bad} should be refused");
        }
    }

    #[test]
    fn canonical_names_round_trip() {
        for (provider, tool) in [
            ("fetch", "fetch"),
            ("notes-tools", "add_note"),
            ("a", "b"),
            ("my_crate", "admin.tools.list"),
            ("x-", "-y"),
            ("p", "__leading_underscores"),
            ("p", "trailing__"),
            ("p", "a__b__c"),
            ("p1-2", &"t".repeat(128)),
        ] {
            let name = CanonicalName::new(provider, tool).unwrap();
            let text = name.to_string();
            assert_eq!(text, format!("mcp::{provider}::{tool}"));
            assert_eq!(text.parse::<CanonicalName>().unwrap(), name);
            assert_eq!(CanonicalName::strip(&text, provider), Some(tool));
            if let Ok(namespaced) = name.namespaced() {
                assert_eq!(CanonicalName::from_namespaced(&namespaced).unwrap(), name);
            }
        }
    }

    #[test]
    fn malformed_canonical_names_are_refused() {
        for bad in [
            "",
            "mcp",
            "mcp::",
            "mcp::notes",
            "mcp::notes::",
            "mcp::::add",
            "ext::notes::add",
            "mcp:notes:add",
            "mcp::notes::add::more",
            "mcp::no tes::add",
            "mcp::notes::a b",
            "MCP::notes::add",
        ] {
            assert_eq!(
                bad.parse::<CanonicalName>(),
                Err(NameError::Canonical(bad.to_owned())),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn strip_needs_the_whole_provider() {
        assert_eq!(
            CanonicalName::strip("mcp::notes::add", "notes"),
            Some("add")
        );
        assert_eq!(CanonicalName::strip("mcp::notes::add", "note"), None);
        assert_eq!(CanonicalName::strip("mcp::notes::add", "notes::add"), None);
        assert_eq!(CanonicalName::strip("search_docs", "notes"), None);
    }

    #[test]
    fn providers_that_would_make_namespaces_ambiguous_are_refused() {
        // `a__b` + `c` and `a` + `b__c` would both be `a__b__c`; `a_` + `_b` and `a` + `__b`
        // would both be `a____b`.
        for bad in ["", "a__b", "a_", "a.b", "a::b", "a b", &"p".repeat(65)] {
            assert_eq!(
                CanonicalName::new(bad, "tool"),
                Err(NameError::Provider(bad.to_owned())),
                "{bad:?}"
            );
        }
        let one = CanonicalName::new("a", "b__c")
            .unwrap()
            .namespaced()
            .unwrap();
        assert_eq!(
            CanonicalName::from_namespaced(&one).unwrap(),
            CanonicalName::new("a", "b__c").unwrap()
        );
    }

    #[test]
    fn namespaced_names_stay_within_the_protocol_limit() {
        let long = CanonicalName::new("provider", &"t".repeat(120)).unwrap();
        assert!(matches!(long.namespaced(), Err(NameError::TooLong(_))));
        assert!(matches!(
            CanonicalName::from_namespaced("no-separator"),
            Err(NameError::Namespaced(_))
        ));
    }
}
