//! A tool's text as the ranking reads it: the words of each field, their stems, the initials of
//! a name.

use frostem::{Algorithm, Stemmer};
use serde_json::Value;

use super::FIELDS;

/// English function words, left out of a query that has other words.
pub(super) const STOP_WORDS: &[&str] = &[
    "a", "about", "an", "and", "are", "as", "at", "be", "but", "by", "can", "could", "did", "do",
    "does", "for", "from", "had", "has", "have", "how", "i", "if", "in", "into", "is", "it", "its",
    "me", "my", "of", "on", "or", "our", "s", "so", "some", "than", "that", "the", "their", "them",
    "then", "there", "these", "they", "this", "those", "to", "us", "was", "we", "were", "what",
    "when", "where", "which", "who", "whom", "why", "will", "with", "would", "you", "your",
];

/// The words of each field of one descriptor, in the order of [`FIELDS`], lowercase and not yet
/// stemmed.
pub(super) fn document(tool: &Value, tags: &[&str]) -> [Vec<String>; FIELDS.len()] {
    let text = |value: Option<&Value>| words(value.and_then(Value::as_str).unwrap_or(""));
    let title = tool
        .get("title")
        .or_else(|| tool.get("annotations").and_then(|a| a.get("title")));
    let mut argument_names = Vec::new();
    let mut argument_descriptions = Vec::new();
    if let Some(schema) = tool.get("inputSchema") {
        let defs = schema.get("$defs").and_then(Value::as_object);
        for node in std::iter::once(schema).chain(defs.into_iter().flat_map(|d| d.values())) {
            let Some(properties) = node.get("properties").and_then(Value::as_object) else {
                continue;
            };
            for (name, property) in properties {
                argument_names.extend(words(name));
                argument_descriptions.extend(text(property.get("description")));
            }
        }
    }
    let name = text(tool.get("name"));
    let initials = initials(&name);
    [
        name,
        text(title),
        text(tool.get("description")),
        tags.iter().flat_map(|tag| words(tag)).collect(),
        argument_names,
        argument_descriptions,
        initials,
    ]
}

/// What a model reads of a tool to make its vector: the words of its name, its title and its
/// description, as a sentence.
#[cfg(feature = "semantic")]
pub(super) fn prose(tool: &Value) -> String {
    let text = |value: Option<&Value>| {
        value
            .and_then(Value::as_str)
            .unwrap_or("")
            .trim()
            .to_owned()
    };
    let name = words(&text(tool.get("name"))).join(" ");
    let title = text(
        tool.get("title")
            .or_else(|| tool.get("annotations").and_then(|a| a.get("title"))),
    );
    let description = text(tool.get("description"));
    [name, title, description]
        .into_iter()
        .filter(|part| !part.is_empty())
        .collect::<Vec<_>>()
        .join(". ")
}

/// The abbreviations a name's words make: the initials of each run of two or three words in a
/// row, so that `pr` finds `create_pull_request` and `dm` finds `send_direct_message`.
fn initials(name: &[String]) -> Vec<String> {
    (2..=3)
        .flat_map(|run| name.windows(run))
        .map(|words| {
            words
                .iter()
                .filter_map(|word| word.chars().next())
                .collect()
        })
        .collect()
}

/// The lowercase words of `text`. Anything but a letter or a digit separates words, and so does
/// a camelCase boundary: a capital after a lowercase letter or a digit (`listV2Invoices` gives
/// `list`, `v2`, `invoices`), or the last capital of a run that a lowercase letter follows
/// (`HTTPServer` gives `http`, `server`). Digits stay with their letters: `k8s`, `s3`, `v2`.
pub(crate) fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !current.is_empty() {
                out.push(std::mem::take(&mut current));
            }
            continue;
        }
        let previous = i.checked_sub(1).map(|p| chars[p]);
        let next = chars.get(i + 1);
        let boundary = c.is_uppercase()
            && previous.is_some_and(|p| {
                p.is_lowercase()
                    || p.is_numeric()
                    || (p.is_uppercase() && next.is_some_and(|n| n.is_lowercase()))
            });
        if boundary && !current.is_empty() {
            out.push(std::mem::take(&mut current));
        }
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        out.push(current);
    }
    out
}

/// The stem of a lowercase word, by the Snowball English stemmer (Porter's second): the forms of
/// a word meet (`branches`, `branch`; `deleting`, `deleted`, `deletes`, `delete`; `entries`,
/// `entry`) and words that only look alike stay apart (`note` and `not`, `state` and `stat`).
/// One rule comes first: the plural of an acronym without vowels loses its `s` (`dsns`, `pvcs`),
/// which the stemmer, made for English words, keeps; tool names are full of them.
pub(super) fn stem(word: &str) -> String {
    if let Some(acronym) = word.strip_suffix('s')
        && acronym.len() >= 2
        && acronym
            .bytes()
            .all(|b| b.is_ascii_lowercase() && !b"aeiouy".contains(&b))
    {
        return acronym.to_owned();
    }
    Stemmer::new(Algorithm::English).stem(word).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_snake_kebab_dotted_and_camel_case() {
        assert_eq!(
            words("create_pull-request.v2"),
            ["create", "pull", "request", "v2"]
        );
        assert_eq!(words("createIssueComment"), ["create", "issue", "comment"]);
        assert_eq!(words("listHTTPRoutes"), ["list", "http", "routes"]);
        assert_eq!(words("getV2Report"), ["get", "v2", "report"]);
        assert_eq!(words("k8s_get_pods"), ["k8s", "get", "pods"]);
        assert_eq!(words("Über große Dateien"), ["über", "große", "dateien"]);
        assert!(words(" _-. ").is_empty());
    }

    #[test]
    fn stemming_joins_the_forms_of_a_word() {
        for forms in [
            &["branch", "branches"][..],
            &["delete", "deletes", "deleted", "deleting"],
            &["entry", "entries"],
            &["copy", "copies", "copied"],
            &["stop", "stops", "stopped", "stopping"],
            &["list", "lists", "listed", "listing"],
            &["address", "addresses"],
            &["file", "files"],
            &["note", "notes"],
        ] {
            let stems: Vec<String> = forms.iter().map(|word| stem(word)).collect();
            assert!(stems.iter().all(|s| *s == stems[0]), "{forms:?}: {stems:?}");
        }
    }

    #[test]
    fn stemming_keeps_apart_words_that_only_look_alike() {
        for (a, b) in [
            ("note", "not"),
            ("done", "don"),
            ("state", "stat"),
            ("theme", "them"),
            ("plane", "plan"),
            ("come", "com"),
        ] {
            assert_ne!(stem(a), stem(b), "{a} and {b}");
        }
        assert_eq!(stem("ids"), "id");
        assert_eq!(stem("dsns"), "dsn");
        assert_eq!(stem("pvcs"), "pvc");
        assert_eq!(stem("ss"), "ss");
        assert_eq!(stem("status"), "status");
        assert_eq!(stem("k8s"), "k8s");
    }
}
