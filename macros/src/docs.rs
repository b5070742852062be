//! Doc comments to descriptions: the text a model reads is the text rustdoc shows.

use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// The description written in `///` comments (or `#[doc = "..."]`), or `None` when there is none.
///
/// Lines are unindented by their common indentation, as rustdoc does. The lines of one paragraph
/// are joined with spaces, because rustdoc renders them as one line and a model reads them the
/// same way; paragraphs stay apart, and lists, headings, quotes, tables and fenced code keep their
/// line breaks, since there the breaks carry meaning.
pub(crate) fn description(attrs: &[Attribute]) -> Option<String> {
    let mut lines: Vec<String> = Vec::new();
    for attr in attrs {
        if let Meta::NameValue(nv) = &attr.meta {
            if !nv.path.is_ident("doc") {
                continue;
            }
            if let Expr::Lit(ExprLit {
                lit: Lit::Str(s), ..
            }) = &nv.value
            {
                lines.extend(
                    s.value()
                        .split('\n')
                        .map(|l| l.trim_end_matches('\r').to_owned()),
                );
            }
        }
    }
    let text = reflow(&unindent(&lines));
    (!text.is_empty()).then_some(text)
}

fn unindent(lines: &[String]) -> Vec<&str> {
    let indent = lines
        .iter()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.len() - l.trim_start().len())
        .min()
        .unwrap_or(0);
    lines
        .iter()
        .map(|l| {
            if l.trim().is_empty() {
                ""
            } else {
                l[indent..].trim_end()
            }
        })
        .collect()
}

fn reflow(lines: &[&str]) -> String {
    let mut out = String::new();
    let mut in_fence = false;
    let mut previous_joins = false;
    for line in lines {
        let is_fence = line.trim_start().starts_with("```") || line.trim_start().starts_with("~~~");
        let joins = !in_fence && !is_fence && !line.is_empty() && !starts_block(line);
        if !out.is_empty() {
            if previous_joins && joins {
                out.push(' ');
                out.push_str(line.trim_start());
            } else {
                out.push('\n');
                out.push_str(line);
            }
        } else {
            out.push_str(line);
        }
        if is_fence {
            in_fence = !in_fence;
        }
        // A list item or quote line may itself be continued by the next plain line.
        let trimmed = line.trim_start();
        previous_joins = !in_fence
            && !is_fence
            && !line.is_empty()
            && !line.starts_with("    ")
            && !trimmed.starts_with('#')
            && !trimmed.starts_with('|');
    }
    // Blank lines between paragraphs collapse to one, and none lead or trail.
    let mut text = String::new();
    for part in out
        .split("\n\n")
        .map(|p| p.trim_matches('\n'))
        .filter(|p| !p.is_empty())
    {
        if !text.is_empty() {
            text.push_str("\n\n");
        }
        text.push_str(part);
    }
    text
}

/// Whether a line begins a Markdown block whose line break matters.
fn starts_block(line: &str) -> bool {
    let trimmed = line.trim_start();
    if line.starts_with("    ") {
        return true;
    }
    if ["- ", "* ", "+ ", "#", ">", "|"]
        .iter()
        .any(|m| trimmed.starts_with(m))
    {
        return true;
    }
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && matches!(trimmed[digits..].chars().next(), Some('.' | ')'))
}

#[cfg(test)]
mod tests {
    use super::description;
    use syn::{Attribute, parse_quote};

    fn docs(attrs: Vec<Attribute>) -> Option<String> {
        description(&attrs)
    }

    #[test]
    fn soft_wrapped_lines_join_and_paragraphs_stay_apart() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[doc = " Find notes whose title"]),
            parse_quote!(#[doc = " contains the query."]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " Matching ignores case."]),
        ];
        assert_eq!(
            docs(attrs).unwrap(),
            "Find notes whose title contains the query.\n\nMatching ignores case."
        );
    }

    #[test]
    fn lists_headings_and_code_keep_their_lines() {
        let attrs: Vec<Attribute> = vec![
            parse_quote!(#[doc = " # Modes"]),
            parse_quote!(#[doc = " - fast: skips"]),
            parse_quote!(#[doc = "   the index"]),
            parse_quote!(#[doc = " - slow"]),
            parse_quote!(#[doc = ""]),
            parse_quote!(#[doc = " ```"]),
            parse_quote!(#[doc = " let a = 1;"]),
            parse_quote!(#[doc = " let b = 2;"]),
            parse_quote!(#[doc = " ```"]),
        ];
        assert_eq!(
            docs(attrs).unwrap(),
            "# Modes\n- fast: skips the index\n- slow\n\n```\nlet a = 1;\nlet b = 2;\n```"
        );
    }

    #[test]
    fn block_comments_are_unindented_and_blank_docs_are_none() {
        let attrs: Vec<Attribute> =
            vec![parse_quote!(#[doc = "\n    Add a note.\n\n    It gets a new id.\n"])];
        assert_eq!(docs(attrs).unwrap(), "Add a note.\n\nIt gets a new id.");
        let blank: Vec<Attribute> = vec![parse_quote!(#[doc = "   "])];
        assert_eq!(docs(blank), None);
        let other: Vec<Attribute> = vec![parse_quote!(#[inline])];
        assert_eq!(docs(other), None);
    }
}
