//! Tool names as each client accepts them.

use sha2::{Digest, Sha256};

use super::Profile;

/// The longest name OpenAI, Anthropic and Gemini accept.
const MAX_LEN: usize = 64;

/// How many hex digits of the original name's SHA-256 end a name that was cut.
const DIGEST_LEN: usize = 8;

/// The name `profile` gives the tool named `name`: `name` itself when the client accepts it.
pub(super) fn client_name(name: &str, profile: Profile) -> String {
    let allowed: fn(char) -> bool = match profile {
        Profile::Mcp => return name.to_owned(),
        Profile::OpenAi | Profile::Anthropic => {
            |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-')
        }
        Profile::Gemini => |c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'),
    };
    let mut clean: String = name
        .chars()
        .map(|c| if allowed(c) { c } else { '_' })
        .collect();
    // Gemini wants a letter or `_` first. A `_` in front keeps `1st` and `2nd` apart, where
    // replacing the first character would not.
    let starts_well = clean.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_');
    if clean.is_empty() || (profile == Profile::Gemini && !starts_well) {
        clean.insert(0, '_');
    }
    if clean.len() > MAX_LEN {
        // Every character is ASCII by now, so any byte is a boundary.
        clean.truncate(MAX_LEN - 1 - DIGEST_LEN);
        clean.push('_');
        clean.push_str(&digest_prefix(name));
    }
    clean
}

/// The first [`DIGEST_LEN`] hex digits of the SHA-256 of `name`.
fn digest_prefix(name: &str) -> String {
    let mut hex = format!("{:x}", Sha256::digest(name.as_bytes()));
    hex.truncate(DIGEST_LEN);
    hex
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_digest_is_sha_256() {
        // FIPS 180-2, appendix B.1: SHA-256("abc") = ba7816bf 8f01cfea ...
        assert_eq!(digest_prefix("abc"), "ba7816bf");
        assert_eq!(digest_prefix(""), "e3b0c442");
    }

    #[test]
    fn names_a_client_accepts_are_kept() {
        for profile in Profile::ALL {
            for name in ["getUser", "DATA_EXPORT-v2", "_x", &"n".repeat(64)] {
                assert_eq!(client_name(name, profile), name, "{profile}");
            }
        }
        assert_eq!(client_name("notes.search", Profile::Mcp), "notes.search");
        assert_eq!(client_name("notes.search", Profile::Gemini), "notes.search");
    }

    #[test]
    fn refused_characters_become_underscores() {
        assert_eq!(client_name("notes.search", Profile::OpenAi), "notes_search");
        assert_eq!(client_name("a.b.c", Profile::Anthropic), "a_b_c");
        assert_eq!(client_name("café:latte", Profile::OpenAi), "caf__latte");
        assert_eq!(client_name("café:latte", Profile::Gemini), "caf__latte");
        assert_eq!(client_name("", Profile::OpenAi), "_");
    }

    #[test]
    fn gemini_names_start_with_a_letter_or_an_underscore() {
        assert_eq!(client_name("1st", Profile::Gemini), "_1st");
        assert_eq!(client_name("-x", Profile::Gemini), "_-x");
        assert_eq!(client_name(".hidden", Profile::Gemini), "_.hidden");
        assert_eq!(client_name("1st", Profile::OpenAi), "1st");
    }

    #[test]
    fn long_names_are_cut_and_end_with_the_digest_of_the_whole_name() {
        let long = "x".repeat(65);
        let cut = client_name(&long, Profile::OpenAi);
        assert_eq!(cut, format!("{}_9537c5fd", "x".repeat(55)));
        assert_eq!(cut.len(), 64);
        // The digest is of the name as given, not as cleaned.
        let dotted = format!("a.{}", "b".repeat(70));
        assert_eq!(
            client_name(&dotted, Profile::OpenAi),
            format!("a_{}_d162292c", "b".repeat(53))
        );
        assert_eq!(
            client_name(&dotted, Profile::Gemini),
            format!("a.{}_d162292c", "b".repeat(53))
        );
        // Gemini's `_` in front counts towards the 64.
        let digits = "9".repeat(64);
        let gemini = client_name(&digits, Profile::Gemini);
        assert_eq!(gemini.len(), 64);
        assert_eq!(
            gemini,
            format!("_{}_{}", "9".repeat(54), digest_prefix(&digits))
        );
        assert_eq!(client_name(&digits, Profile::OpenAi), digits);
    }
}
