//! Writes `tools.rs` into `OUT_DIR`: 1,000 `#[mcp_tool]` functions, ten domains of ten nouns
//! each, every noun with ten verbs. The tables below are the only input, so every build writes
//! the same file.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::PathBuf;

/// One area of the imagined product: its tag, where its things live, and the four verbs it
/// has besides the six every area has.
struct Domain {
    tag: &'static str,
    place: &'static str,
    verbs: [&'static str; 4],
    /// Each noun (snake_case, singular) and what it is.
    nouns: [(&'static str, &'static str); 10],
}

const COMMON_VERBS: [&str; 6] = ["list", "get", "create", "update", "delete", "search"];

/// The tools a client always sees, even when the catalog hides the rest.
const CORE: [&str; 4] = [
    "list_calendar_events",
    "list_repositories",
    "search_contacts",
    "search_tickets",
];

const DOMAINS: [Domain; 10] = [
    Domain {
        tag: "tickets",
        place: "in the help desk",
        verbs: ["assign", "prioritize", "archive", "watch"],
        nouns: [
            (
                "ticket",
                "a customer's request for help, with its conversation",
            ),
            ("ticket_comment", "a reply or internal note on a ticket"),
            (
                "ticket_attachment",
                "a file a customer or agent attached to a ticket",
            ),
            (
                "ticket_queue",
                "a list of tickets that one group of agents works through",
            ),
            (
                "sla_policy",
                "the first-response and resolution targets a ticket must meet",
            ),
            ("canned_reply", "a saved answer agents insert into replies"),
            (
                "escalation_rule",
                "a condition that moves a ticket to a senior queue",
            ),
            (
                "satisfaction_survey",
                "the rating a customer gives after a ticket is solved",
            ),
            (
                "ticket_view",
                "a saved filter over tickets, such as 'unassigned urgent'",
            ),
            ("agent_group", "a team of agents that tickets are routed to"),
        ],
    },
    Domain {
        tag: "repos",
        place: "on the code host",
        verbs: ["archive", "export", "tag", "watch"],
        nouns: [
            (
                "repository",
                "a Git repository with its settings and collaborators",
            ),
            ("branch", "a named line of commits in a repository"),
            (
                "pull_request",
                "a proposal to merge one branch into another, with its review",
            ),
            ("commit", "one recorded change to a repository's files"),
            (
                "release",
                "a published version of a repository, with notes and assets",
            ),
            (
                "issue",
                "a bug report or feature request filed against a repository",
            ),
            (
                "webhook",
                "a URL the code host calls when something happens in a repository",
            ),
            (
                "deploy_key",
                "an SSH key that gives one server access to one repository",
            ),
            (
                "workflow_run",
                "one run of a CI workflow, with its jobs and logs",
            ),
            (
                "code_review",
                "a reviewer's verdict and comments on a pull request",
            ),
        ],
    },
    Domain {
        tag: "calendar",
        place: "on the team calendar",
        verbs: ["share", "duplicate", "export", "restore"],
        nouns: [
            (
                "calendar_event",
                "a meeting or appointment with a start, an end and attendees",
            ),
            ("calendar", "a named set of events that people subscribe to"),
            (
                "meeting_room",
                "a bookable room, with its capacity and equipment",
            ),
            (
                "attendee",
                "a person invited to an event, with their response",
            ),
            ("reminder", "a notification sent some time before an event"),
            (
                "availability_slot",
                "a window of time in which someone can be booked",
            ),
            (
                "recurring_series",
                "the rule that repeats an event, such as every Monday",
            ),
            (
                "event_invite",
                "an invitation sent to someone outside the calendar",
            ),
            (
                "time_off_block",
                "time someone is away, shown as busy to others",
            ),
            (
                "booking_page",
                "a public page where others pick a free slot",
            ),
        ],
    },
    Domain {
        tag: "billing",
        place: "in the billing system",
        verbs: ["export", "approve", "count", "purge"],
        nouns: [
            (
                "invoice",
                "a bill sent to a customer, with its lines and due date",
            ),
            ("payment", "money received against an invoice"),
            (
                "subscription",
                "a customer's recurring plan, renewed each period",
            ),
            (
                "billing_plan",
                "a price and billing period customers subscribe to",
            ),
            (
                "credit_note",
                "a document that reduces what a customer owes",
            ),
            ("refund", "money returned to a customer for a payment"),
            ("tax_rate", "a percentage charged on invoices in one region"),
            ("coupon", "a discount code customers apply at checkout"),
            (
                "payment_method",
                "a saved card or bank account a customer pays with",
            ),
            (
                "usage_record",
                "metered usage reported for a usage-based plan",
            ),
        ],
    },
    Domain {
        tag: "storage",
        place: "in object storage",
        verbs: ["share", "restore", "purge", "count"],
        nouns: [
            (
                "bucket",
                "a container of stored objects, with its region and policy",
            ),
            (
                "stored_object",
                "a file kept in a bucket, with its metadata",
            ),
            (
                "object_version",
                "an earlier copy of an object, kept by versioning",
            ),
            ("upload_session", "a multipart upload in progress"),
            (
                "access_policy",
                "the rules saying who may read or write a bucket",
            ),
            (
                "lifecycle_rule",
                "a rule that moves or expires objects by age",
            ),
            ("signed_url", "a time-limited link to one object"),
            ("storage_snapshot", "a point-in-time copy of a volume"),
            (
                "replication_job",
                "a copy of a bucket's objects to another region",
            ),
            ("volume", "a block device attached to a virtual machine"),
        ],
    },
    Domain {
        tag: "chat",
        place: "in team chat",
        verbs: ["archive", "export", "watch", "purge"],
        nouns: [
            ("channel", "a named room where a team talks"),
            ("message", "one post in a channel or conversation"),
            ("thread", "replies gathered under one message"),
            (
                "direct_conversation",
                "a private conversation between a few people",
            ),
            ("reaction", "an emoji someone added to a message"),
            ("pinned_message", "a message kept at the top of a channel"),
            (
                "chat_bot",
                "an automated member that posts and answers commands",
            ),
            ("custom_emoji", "an image uploaded to use as an emoji"),
            (
                "chat_member",
                "a person's membership of a channel, with their role",
            ),
            ("message_draft", "a message written but not yet sent"),
        ],
    },
    Domain {
        tag: "crm",
        place: "in the CRM",
        verbs: ["assign", "tag", "export", "count"],
        nouns: [
            (
                "contact",
                "a person the sales team talks to, with their details",
            ),
            ("company", "an organisation that contacts work for"),
            ("deal", "a possible sale, with its amount and stage"),
            (
                "lead",
                "someone who showed interest and is not yet qualified",
            ),
            (
                "pipeline_stage",
                "a step deals move through, such as 'proposal sent'",
            ),
            (
                "sales_activity",
                "a call, email or meeting logged against a deal",
            ),
            (
                "sales_note",
                "free text a salesperson wrote about a contact or deal",
            ),
            ("quote", "a priced offer sent to a customer"),
            (
                "territory",
                "a region or segment that one sales team covers",
            ),
            (
                "campaign",
                "an outreach effort, with the contacts it reached",
            ),
        ],
    },
    Domain {
        tag: "monitoring",
        place: "in the monitoring service",
        verbs: ["watch", "count", "export", "summarize"],
        nouns: [
            ("alert", "a notification that a rule's condition held"),
            ("alert_rule", "a condition on metrics that raises an alert"),
            ("dashboard", "a page of charts over metrics and logs"),
            ("metric", "a named time series, such as request latency"),
            (
                "incident",
                "an outage or degradation being handled, with its timeline",
            ),
            ("uptime_check", "a probe that requests a URL every minute"),
            ("log_query", "a saved search over logs"),
            ("on_call_schedule", "the rota saying who is paged when"),
            ("status_page", "a public page showing each service's health"),
            ("error_group", "exceptions grouped by their stack trace"),
        ],
    },
    Domain {
        tag: "docs",
        place: "in the documentation wiki",
        verbs: ["share", "summarize", "restore", "export"],
        nouns: [
            ("doc_page", "a page of documentation, in Markdown"),
            ("doc_space", "a section of the wiki that one team owns"),
            ("page_comment", "a comment left on a page"),
            ("doc_template", "a starting point for new pages"),
            ("doc_revision", "an earlier saved state of a page"),
            ("page_attachment", "a file attached to a page"),
            ("glossary_term", "a word and its agreed definition"),
            ("doc_link", "a link from one page to another or to the web"),
            (
                "reading_list",
                "pages gathered for someone to read in order",
            ),
            ("style_guide", "the rules for writing in one space"),
        ],
    },
    Domain {
        tag: "hr",
        place: "in the HR system",
        verbs: ["approve", "assign", "export", "count"],
        nouns: [
            ("employee", "a person employed, with their role and manager"),
            ("team", "a group of employees with one manager"),
            ("job_opening", "a role being hired for"),
            ("candidate", "a person applying for a job opening"),
            ("interview", "a scheduled conversation with a candidate"),
            ("leave_request", "a request for days off, with its dates"),
            (
                "performance_review",
                "a periodic review of an employee's work",
            ),
            ("payslip", "the statement of one month's pay"),
            (
                "onboarding_task",
                "a step a new employee completes in their first weeks",
            ),
            (
                "expense_claim",
                "a request to be paid back for a work expense",
            ),
        ],
    },
];

/// A noun in its forms.
struct Noun {
    ident: &'static str,
    phrase: String,
    plural: String,
    plural_phrase: String,
    blurb: &'static str,
}

impl Noun {
    fn new(ident: &'static str, blurb: &'static str) -> Noun {
        let plural = plural(ident);
        Noun {
            ident,
            phrase: ident.replace('_', " "),
            plural_phrase: plural.replace('_', " "),
            plural,
            blurb,
        }
    }

    fn id(&self) -> Param {
        Param::new(
            format!("{}_id", self.ident),
            "u64",
            format!(
                "The {}'s id, from `list_{}` or `search_{}`.",
                self.phrase, self.plural, self.plural
            ),
        )
    }

    /// "a ticket comment", "an alert rule".
    fn a_phrase(&self) -> String {
        let article = if self.phrase.starts_with(['a', 'e', 'i', 'o', 'u']) {
            "an"
        } else {
            "a"
        };
        format!("{article} {}", self.phrase)
    }

    /// "A ticket comment: a reply or internal note on a ticket."
    fn definition(&self) -> String {
        let a_phrase = self.a_phrase();
        format!(
            "{}{}: {}.",
            a_phrase[..1].to_uppercase(),
            &a_phrase[1..],
            self.blurb
        )
    }

    fn title(&self) -> String {
        self.phrase
            .split(' ')
            .map(|w| {
                let mut chars = w.chars();
                let first = chars.next().map(|c| c.to_ascii_uppercase());
                first.into_iter().chain(chars).collect::<String>()
            })
            .collect::<Vec<_>>()
            .join(" ")
    }
}

fn plural(word: &str) -> String {
    if let Some(stem) = word.strip_suffix('y')
        && !stem.ends_with(['a', 'e', 'o', 'u'])
    {
        return format!("{stem}ies");
    }
    if word.ends_with('s') || word.ends_with("sh") || word.ends_with("ch") || word.ends_with('x') {
        return format!("{word}es");
    }
    format!("{word}s")
}

/// One parameter of a generated tool.
struct Param {
    name: String,
    ty: &'static str,
    doc: String,
    default: Option<&'static str>,
}

impl Param {
    fn new(name: impl Into<String>, ty: &'static str, doc: impl Into<String>) -> Param {
        Param {
            name: name.into(),
            ty,
            doc: doc.into(),
            default: None,
        }
    }

    fn default(mut self, value: &'static str) -> Param {
        self.default = Some(value);
        self
    }
}

/// One generated tool, before it is written out.
struct Tool {
    name: String,
    description: String,
    /// The `#[mcp_tool]` options before `tags`: annotations and `title`.
    options: Vec<String>,
    reads: bool,
    params: Vec<Param>,
}

fn tool(verb: &str, noun: &Noun, place: &str) -> Tool {
    let Noun {
        phrase,
        plural,
        plural_phrase,
        ..
    } = noun;
    let definition = noun.definition();
    let a_phrase = noun.a_phrase();
    let with_id = |rest: Vec<Param>| {
        let mut params = vec![noun.id()];
        params.extend(rest);
        params
    };
    let (name, sentence, options, params): (String, String, &[&str], Vec<Param>) = match verb {
        "list" => (
            format!("list_{plural}"),
            format!("List the {plural_phrase} {place}, newest first, one page at a time."),
            &["read_only"],
            vec![
                Param::new(
                    "limit",
                    "u32",
                    format!("How many {plural_phrase} to return at most."),
                )
                .default("20"),
                Param::new(
                    "cursor",
                    "Option<String>",
                    "Where the page starts: `next_cursor` from the previous page; leave it out \
                     for the first page.",
                ),
            ],
        ),
        "get" => (
            format!("get_{}", noun.ident),
            format!("Get one {phrase} {place} by its id, with every field."),
            &["read_only"],
            with_id(vec![]),
        ),
        "create" => (
            format!("create_{}", noun.ident),
            format!(
                "Create {a_phrase} {place}, seen by its owner's team unless `visibility` says \
                 otherwise."
            ),
            &["destructive = false"],
            vec![
                Param::new(
                    "name",
                    "String",
                    format!("The new {phrase}'s name, shown in lists."),
                ),
                Param::new(
                    "description",
                    "Option<String>",
                    "A longer description, in Markdown.",
                ),
                Param::new("labels", "Vec<String>", "Labels to file it under.")
                    .default("Vec::new()"),
                Param::new("visibility", "Visibility", "Who can see it.")
                    .default("Visibility::Team"),
            ],
        ),
        "update" => (
            format!("update_{}", noun.ident),
            format!(
                "Change the name or description of {a_phrase} {place}; what is left out keeps \
                 its value."
            ),
            &["idempotent"],
            with_id(vec![
                Param::new("name", "Option<String>", "The new name."),
                Param::new(
                    "description",
                    "Option<String>",
                    "The new description, in Markdown.",
                ),
            ]),
        ),
        "delete" => (
            format!("delete_{}", noun.ident),
            format!("Delete {a_phrase} {place} for good; this cannot be undone."),
            &["destructive"],
            with_id(vec![Param::new(
                "confirm",
                "bool",
                "Must be true: deleting cannot be undone.",
            )]),
        ),
        "search" => (
            format!("search_{plural}"),
            format!(
                "Find {plural_phrase} {place} whose name or description contains the query's \
                 words, best match first."
            ),
            &["read_only"],
            vec![
                Param::new("query", "String", "Words to look for."),
                Param::new("limit", "u32", "How many matches to return at most.").default("10"),
            ],
        ),
        "archive" => (
            format!("archive_{}", noun.ident),
            format!(
                "Archive {a_phrase} {place}: it leaves lists and searches but is kept, and can \
                 be brought back."
            ),
            &["idempotent"],
            with_id(vec![Param::new(
                "reason",
                "Option<String>",
                "Why it is archived, kept in its history.",
            )]),
        ),
        "restore" => (
            format!("restore_{}", noun.ident),
            format!("Restore a removed {phrase} {place} from the trash, as it was when removed."),
            &["idempotent"],
            with_id(vec![]),
        ),
        "export" => (
            format!("export_{plural}"),
            format!("Export the {plural_phrase} {place} as one file, oldest first."),
            &["read_only"],
            vec![
                Param::new("format", "ExportFormat", "The file's format.")
                    .default("ExportFormat::Json"),
                Param::new(
                    "since",
                    "Option<String>",
                    "Only those changed on or after this date, as YYYY-MM-DD.",
                ),
            ],
        ),
        "share" => (
            format!("share_{}", noun.ident),
            format!("Share {a_phrase} {place} with a person or a team, who is notified."),
            &[],
            with_id(vec![
                Param::new(
                    "recipient",
                    "String",
                    "The email address or team handle to share with.",
                ),
                Param::new(
                    "visibility",
                    "Visibility",
                    "Who can see it once it is shared.",
                ),
            ]),
        ),
        "duplicate" => (
            format!("duplicate_{}", noun.ident),
            format!("Copy {a_phrase} {place}; the copy gets a new id."),
            &["destructive = false"],
            with_id(vec![Param::new(
                "name",
                "Option<String>",
                "The copy's name; by default the original's, with \" (copy)\" added.",
            )]),
        ),
        "assign" => (
            format!("assign_{}", noun.ident),
            format!("Assign {a_phrase} {place} to a person, who is notified."),
            &["idempotent"],
            with_id(vec![
                Param::new("assignee", "String", "The assignee's email address."),
                Param::new(
                    "note",
                    "Option<String>",
                    "A note for the assignee, sent with the notification.",
                ),
            ]),
        ),
        "prioritize" => (
            format!("prioritize_{}", noun.ident),
            format!("Set the priority of {a_phrase} {place}; higher priorities sort first."),
            &["idempotent"],
            with_id(vec![Param::new(
                "priority",
                "Priority",
                "The new priority.",
            )]),
        ),
        "watch" => (
            format!("watch_{}", noun.ident),
            format!("Follow {a_phrase} {place}, to be notified whenever it changes."),
            &["idempotent"],
            with_id(vec![
                Param::new(
                    "email",
                    "bool",
                    "Send each notification by email too, not only in the app.",
                )
                .default("false"),
            ]),
        ),
        "tag" => (
            format!("tag_{}", noun.ident),
            format!("Add labels to {a_phrase} {place}; labels it already has are kept."),
            &["idempotent"],
            with_id(vec![Param::new(
                "labels",
                "Vec<String>",
                "The labels to add.",
            )]),
        ),
        "approve" => (
            format!("approve_{}", noun.ident),
            format!("Approve a pending {phrase} {place}; whoever asked is notified."),
            &["idempotent"],
            with_id(vec![Param::new(
                "comment",
                "Option<String>",
                "A comment sent with the approval.",
            )]),
        ),
        "count" => (
            format!("count_{plural}"),
            format!("Count the {plural_phrase} {place} without listing them."),
            &["read_only"],
            vec![Param::new(
                "since",
                "Option<String>",
                "Only those created on or after this date, as YYYY-MM-DD.",
            )],
        ),
        "purge" => (
            format!("purge_{plural}"),
            format!(
                "Delete every {phrase} {place} older than a number of days. Run it with \
                 `dry_run` first to see what would go."
            ),
            &["destructive"],
            vec![
                Param::new(
                    "older_than_days",
                    "u32",
                    "Delete those last changed more than this many days ago.",
                ),
                Param::new(
                    "dry_run",
                    "bool",
                    "Only report what would be deleted, deleting nothing.",
                )
                .default("true"),
            ],
        ),
        "summarize" => (
            format!("summarize_{}", noun.ident),
            format!(
                "Summarize {a_phrase} {place} in plain words: what it is, its state, and what \
                 changed last."
            ),
            &["read_only"],
            with_id(vec![
                Param::new("max_words", "u32", "How long the summary may be, in words.")
                    .default("100"),
            ]),
        ),
        other => panic!("no template for the verb `{other}`"),
    };
    let mut options: Vec<String> = options.iter().map(|o| o.to_string()).collect();
    if verb == "get" {
        options.push(format!("title = \"Get {}\"", noun.title()));
    }
    Tool {
        name,
        description: format!("{sentence}\n\n{definition}"),
        reads: options.iter().any(|o| o == "read_only"),
        options,
        params,
    }
}

fn write_tool(out: &mut String, tool: &Tool, tag: &str) {
    for (i, paragraph) in tool.description.split("\n\n").enumerate() {
        if i > 0 {
            out.push_str("///\n");
        }
        writeln!(out, "/// {paragraph}").unwrap();
    }
    let mut options = tool.options.clone();
    if CORE.contains(&tool.name.as_str()) {
        options.push("core".to_owned());
    }
    let kind = if tool.reads { "read" } else { "write" };
    options.push(format!("tags = [{tag:?}, {kind:?}]"));
    writeln!(out, "#[mcp_tool({})]", options.join(", ")).unwrap();
    writeln!(out, "fn {}(", tool.name).unwrap();
    for param in &tool.params {
        writeln!(out, "    /// {}", param.doc).unwrap();
        if let Some(default) = param.default {
            writeln!(out, "    #[arg(default = {default})]").unwrap();
        }
        writeln!(out, "    {}: {},", param.name, param.ty).unwrap();
    }
    writeln!(out, ") -> Receipt {{").unwrap();
    write!(out, "    Receipt::new({:?})", tool.name).unwrap();
    for param in &tool.params {
        write!(out, "\n        .with({:?}, {})", param.name, param.name).unwrap();
    }
    out.push_str("\n}\n\n");
}

fn main() {
    println!("cargo::rerun-if-changed=build.rs");
    let mut out = String::from("// Written by build.rs; edit the tables there.\n\n");
    let mut names = BTreeSet::new();
    for domain in &DOMAINS {
        for (ident, blurb) in domain.nouns {
            let noun = Noun::new(ident, blurb);
            for verb in COMMON_VERBS.iter().chain(&domain.verbs) {
                let tool = tool(verb, &noun, domain.place);
                assert!(
                    names.insert(tool.name.clone()),
                    "two tools are named `{}`",
                    tool.name
                );
                write_tool(&mut out, &tool, domain.tag);
            }
        }
    }
    assert_eq!(names.len(), 1000, "the catalog has 1,000 tools");
    for core in CORE {
        assert!(
            names.contains(core),
            "the core tool `{core}` is not generated"
        );
    }
    let path = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(path.join("tools.rs"), out).expect("OUT_DIR is writable");
}
