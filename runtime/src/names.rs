//! Tool names on the wire.

/// The longest tool name the protocol allows.
pub(crate) const MAX_WIRE_NAME_LEN: usize = 128;

/// Whether a name obeys SEP-986: 1 to 128 characters of `A-Z a-z 0-9 _ - .`.
pub(crate) fn is_wire_name(name: &str) -> bool {
    (1..=MAX_WIRE_NAME_LEN).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
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
}
