//! URI templates (RFC 6570) as resources use them: literal text and variables, `{id}` (simple
//! expansion, level 1) or `{+path}` (reserved expansion, level 2), read in one place for both
//! crates: `#[mcp_resource]` checks a template at compile time, with a spanned error, and the
//! runtime matches URIs against it.

use alloc::borrow::ToOwned;
use alloc::string::String;
use alloc::vec::Vec;
use core::fmt;

/// One part of a URI template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Part<'a> {
    /// Text matched as written.
    Literal(&'a str),
    /// A variable: its name, and whether it is a reserved expansion (`{+name}`), whose value
    /// may hold `/`, `?`, `#` and the other reserved characters.
    Variable {
        /// The name, without the braces and the operator.
        name: &'a str,
        /// Written `{+name}`.
        reserved: bool,
    },
}

/// A URI, or a URI template, that is not one a resource can have. Phrased to follow "invalid
/// resource URI `...`: ".
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TemplateProblem {
    /// No `scheme:` at the start.
    NoScheme,
    /// A character no URI holds (a space, a control character, a non-ASCII one): percent-encode
    /// it.
    Character(char),
    /// A `{` without its `}`, or a `}` without its `{`.
    Unbalanced,
    /// An expression this library does not match: an operator other than `+`, several
    /// variables, a modifier.
    Unsupported(String),
    /// A variable name outside RFC 6570's `varname`.
    VariableName(String),
    /// The same variable twice.
    Repeated(String),
    /// Two variables with no literal text between them, which no URI can be split between.
    Adjacent(String, String),
}

impl fmt::Display for TemplateProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TemplateProblem::NoScheme => {
                f.write_str("it does not start with a scheme, such as `notes://` or `file:///`")
            }
            TemplateProblem::Character(c) => write!(
                f,
                "it contains {c:?}, which a URI cannot hold; percent-encode it"
            ),
            TemplateProblem::Unbalanced => f.write_str("a `{` and a `}` do not pair up"),
            TemplateProblem::Unsupported(expression) => write!(
                f,
                "`{{{expression}}}` is not matched by toolwright, which matches `{{name}}` (any \
                 text without `/`, `?`, `#` and the other reserved characters) and `{{+name}}` \
                 (any text)"
            ),
            TemplateProblem::VariableName(name) => write!(
                f,
                "`{name}` is not a variable name: letters, digits and `_`, with `.` between them"
            ),
            TemplateProblem::Repeated(name) => write!(f, "variable `{name}` appears twice"),
            TemplateProblem::Adjacent(first, second) => write!(
                f,
                "variables `{first}` and `{second}` have no text between them, so a URI cannot \
                 be split between them"
            ),
        }
    }
}

/// Reads a resource's URI or URI template into its parts. A URI without variables is one
/// literal part.
pub fn parse(template: &str) -> Result<Vec<Part<'_>>, TemplateProblem> {
    if let Some(c) = template
        .chars()
        .find(|c| !c.is_ascii_graphic() || matches!(c, '"' | '<' | '>' | '\\' | '^' | '`' | '|'))
    {
        return Err(TemplateProblem::Character(c));
    }
    let scheme = template.split(':').next().unwrap_or_default();
    let mut scheme_chars = scheme.chars();
    let scheme_ok = template.contains(':')
        && scheme_chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme_chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'));
    if !scheme_ok {
        return Err(TemplateProblem::NoScheme);
    }
    let mut parts = Vec::new();
    let mut rest = template;
    while !rest.is_empty() {
        match rest.find(['{', '}']) {
            None => {
                parts.push(Part::Literal(rest));
                break;
            }
            Some(at) if rest.as_bytes()[at] == b'}' => return Err(TemplateProblem::Unbalanced),
            Some(at) => {
                if at > 0 {
                    parts.push(Part::Literal(&rest[..at]));
                }
                let after = &rest[at + 1..];
                let Some(end) = after.find('}') else {
                    return Err(TemplateProblem::Unbalanced);
                };
                let expression = &after[..end];
                if expression.contains('{') {
                    return Err(TemplateProblem::Unbalanced);
                }
                let (name, reserved) = match expression.strip_prefix('+') {
                    Some(name) => (name, true),
                    None => (expression, false),
                };
                if name.starts_with(['#', '.', '/', ';', '?', '&', '=', ',', '!', '@', '|'])
                    || name.contains([',', ':', '*'])
                {
                    return Err(TemplateProblem::Unsupported(expression.to_owned()));
                }
                if !is_varname(name) {
                    return Err(TemplateProblem::VariableName(name.to_owned()));
                }
                if let Some(Part::Variable { name: previous, .. }) = parts.last() {
                    return Err(TemplateProblem::Adjacent(
                        (*previous).to_owned(),
                        name.to_owned(),
                    ));
                }
                let repeated = parts
                    .iter()
                    .any(|part| matches!(part, Part::Variable { name: n, .. } if *n == name));
                if repeated {
                    return Err(TemplateProblem::Repeated(name.to_owned()));
                }
                parts.push(Part::Variable { name, reserved });
                rest = &after[end + 1..];
            }
        }
    }
    Ok(parts)
}

/// RFC 6570's `varname`: `varchar *( ["."] varchar )`, where a `varchar` is a letter, a digit,
/// `_` or a percent-encoded octet (which no Rust parameter is named after, so it is left out).
fn is_varname(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_literals_and_variables() {
        assert_eq!(
            parse("notes://{id}/files/{+path}"),
            Ok(alloc::vec![
                Part::Literal("notes://"),
                Part::Variable {
                    name: "id",
                    reserved: false
                },
                Part::Literal("/files/"),
                Part::Variable {
                    name: "path",
                    reserved: true
                },
            ])
        );
        assert_eq!(
            parse("notes://tags"),
            Ok(alloc::vec![Part::Literal("notes://tags")])
        );
    }

    #[test]
    fn refuses_what_no_uri_can_match() {
        assert_eq!(parse("tags"), Err(TemplateProblem::NoScheme));
        assert_eq!(parse("notes://{id"), Err(TemplateProblem::Unbalanced));
        assert_eq!(
            parse("notes://{?q}"),
            Err(TemplateProblem::Unsupported("?q".to_owned()))
        );
        assert_eq!(
            parse("notes://{a}{b}"),
            Err(TemplateProblem::Adjacent("a".to_owned(), "b".to_owned()))
        );
        assert_eq!(
            parse("notes://{a}/{a}"),
            Err(TemplateProblem::Repeated("a".to_owned()))
        );
        assert_eq!(parse("notes://a b"), Err(TemplateProblem::Character(' ')));
    }
}
