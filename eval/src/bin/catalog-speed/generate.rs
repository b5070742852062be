//! A generated catalog of tools and a mix of queries over it, the same on every run.
//!
//! Tools are named, described and given arguments the way MCP servers publish them: a verb and a
//! noun of one of 40 domains, sometimes behind a service prefix or in camelCase, a title on about
//! half of them, one or two sentences of description, one to five arguments and a few tags, and a
//! `$defs` entry on some.

use serde_json::{Map, Value, json};

/// A deterministic source of choices (SplitMix64): the catalog and the queries must be the same
/// on every run for figures to compare, and no statistical quality is needed.
pub(crate) struct Choices(u64);

impl Choices {
    pub(crate) fn new(seed: u64) -> Choices {
        Choices(seed)
    }

    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n`.
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// Whether an event of `percent` chances in a hundred happens.
    pub(crate) fn chance(&mut self, percent: usize) -> bool {
        self.below(100) < percent
    }

    pub(crate) fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len())]
    }
}

/// A domain: its name, its services (used as name prefixes and tags), its nouns, and the thing
/// its nouns belong to.
struct Domain {
    name: &'static str,
    services: Vec<&'static str>,
    nouns: Vec<&'static str>,
    parent: &'static str,
}

/// The domains, one a line: `name | services | nouns | parent`, lists separated by spaces.
const DOMAINS: [&str; 40] = [
    "code | github gitlab gh bitbucket | repository issue pull_request branch commit release tag review | repository",
    "ci | circleci jenkins actions | pipeline job workflow artifact runner build | project",
    "files | fs dropbox gdrive box | file directory folder symlink permission upload | drive",
    "calendar | gcal outlook cal | event calendar invitation reminder availability room | calendar",
    "email | gmail smtp mail | email draft thread label attachment filter | mailbox",
    "chat | slack teams discord | message channel reaction thread user emoji | workspace",
    "sql | postgres mysql sqlite db | table row query index schema migration | database",
    "documents | mongo dynamo firestore | document collection item index stream | database",
    "cache | redis memcached | key value hash stream set ttl | instance",
    "kubernetes | k8s kube helm | pod deployment service namespace secret chart node log | cluster",
    "cloud | aws ec2 s3 gcp azure | instance bucket object volume snapshot function role | account",
    "payments | stripe paypal adyen | payment refund invoice charge payout subscription customer dispute | account",
    "crm | salesforce hubspot crm | contact lead deal company note opportunity pipeline | organization",
    "wiki | notion confluence wiki | page database block space comment template | workspace",
    "tracker | jira linear asana | ticket issue sprint epic project label cycle | project",
    "maps | maps geo osm | place route address direction distance location | region",
    "weather | weather forecast | forecast condition alert temperature observation | location",
    "travel | flights hotels trips | flight hotel booking itinerary fare seat | trip",
    "web | web browser http | page url screenshot link request cookie | site",
    "notes | notes obsidian evernote | note notebook tag attachment backlink | vault",
    "monitoring | datadog grafana prometheus | metric dashboard alert monitor incident trace | service",
    "logging | loki splunk elastic | log query index stream saved_search | cluster",
    "support | zendesk intercom freshdesk | ticket conversation macro agent article customer | helpdesk",
    "hr | workday bamboo hr | employee position leave_request payslip review department | company",
    "accounting | quickbooks xero ledger | account journal_entry bill expense vendor tax_rate | ledger",
    "ecommerce | shopify woo shop | product order cart variant coupon fulfillment inventory | store",
    "marketing | mailchimp sendgrid ads | campaign audience segment template subscriber ad_group | account",
    "analytics | ga mixpanel amplitude | report event funnel cohort dimension segment | property",
    "design | figma canva sketch | file frame component comment style asset | team",
    "video | youtube vimeo zoom | video playlist meeting recording transcript caption | channel",
    "music | spotify music | track album playlist artist queue | library",
    "social | twitter linkedin mastodon | post follower mention profile hashtag | profile",
    "security | vault okta auth0 | secret user group policy token session | tenant",
    "dns | cloudflare route53 dns | record zone certificate domain firewall_rule | zone",
    "containers | docker podman registry | container image volume network tag | host",
    "iot | homeassistant hue iot | device sensor scene automation light | home",
    "learning | canvas moodle lms | course assignment grade student quiz submission | school",
    "legal | docusign contracts esign | contract envelope signature clause template | account",
    "shipping | fedex ups shipping | shipment parcel label rate tracking_number pickup | account",
    "ml | huggingface openai ml | model dataset embedding fine_tune completion prompt | project",
];

fn domains() -> Vec<Domain> {
    DOMAINS
        .iter()
        .map(|line| {
            let [name, services, nouns, parent] = parts(line);
            Domain {
                name,
                services: services.split(' ').collect(),
                nouns: nouns.split(' ').collect(),
                parent,
            }
        })
        .collect()
}

/// A verb, how a description starts with it, and the arguments it usually takes.
struct Verb {
    word: &'static str,
    /// `{n}` is the noun, `{ns}` its plural, `{p}` the parent, `{s}` the service.
    description: &'static str,
    arguments: Vec<&'static str>,
}

/// The verbs, one a line: `verb | description | arguments`, arguments separated by spaces.
const VERBS: [&str; 22] = [
    "list | List the {ns} of a {p} in {s}. | parent limit cursor sort include_archived",
    "get | Get one {n} by its id, with all of its fields. | id fields",
    "create | Create a new {n} in a {p}. | parent name description labels dry_run",
    "update | Update the fields of an existing {n}. | id name description status",
    "delete | Delete a {n} permanently from {s}. | id force dry_run",
    "search | Search {ns} by keyword across a {p}. | query limit since until",
    "archive | Archive a {n} so that it no longer shows in lists. | id reason",
    "restore | Restore a {n} that was archived or deleted. | id",
    "export | Export {ns} as CSV or JSON. | parent format since",
    "import | Import {ns} into a {p} from a file. | parent url format dry_run",
    "sync | Synchronise {ns} between {s} and a local copy. | parent since direction",
    "share | Share a {n} with a user or a group. | id email role",
    "move | Move a {n} to another {p}. | id target keep_copy",
    "copy | Copy a {n}, with its settings, into a {p}. | id target name",
    "watch | Subscribe to changes of a {n} and receive notifications. | id webhook_url events",
    "approve | Approve a pending {n}. | id comment",
    "assign | Assign a {n} to a member of the {p}. | id assignee notify",
    "count | Count the {ns} of a {p} that match a filter. | parent filter",
    "summarize | Summarise recent activity on {ns}. | parent since max_words",
    "validate | Check that a {n} is well formed before it is saved. | body strict",
    "schedule | Schedule a {n} to run or be sent later. | id at timezone repeat",
    "fetch | Fetch the latest state of a {n} from {s}. | id refresh",
];

fn verbs() -> Vec<Verb> {
    VERBS
        .iter()
        .map(|line| {
            let [word, description, arguments] = parts(line);
            Verb {
                word,
                description,
                arguments: arguments.split(' ').collect(),
            }
        })
        .collect()
}

/// The `|`-separated parts of a line of one of the tables above.
fn parts<const N: usize>(line: &'static str) -> [&'static str; N] {
    let parts: Vec<&str> = line.split('|').map(str::trim).collect();
    parts
        .try_into()
        .unwrap_or_else(|_| panic!("{N} parts in `{line}`"))
}

/// An argument's JSON type and description; `{n}` and `{p}` as in [`Verb::description`].
fn argument(name: &str) -> (&'static str, &'static str) {
    match name {
        "id" => ("string", "The id of the {n}."),
        "parent" => ("string", "The {p} to look in, by id or name."),
        "limit" => (
            "integer",
            "How many results to return at most (1 to 100, default 30).",
        ),
        "cursor" => (
            "string",
            "The cursor a previous page returned, to read the next page.",
        ),
        "sort" => ("string", "Sort order: `created`, `updated` or `name`."),
        "include_archived" => ("boolean", "Also return archived {ns}."),
        "fields" => (
            "array",
            "Which fields to return; all of them when left out.",
        ),
        "name" => ("string", "A short human-readable name for the {n}."),
        "description" => ("string", "Longer text describing the {n}, in Markdown."),
        "labels" => ("array", "Labels to attach."),
        "dry_run" => (
            "boolean",
            "Report what would change without changing anything.",
        ),
        "status" => (
            "string",
            "The new status: `open`, `in_progress` or `closed`.",
        ),
        "force" => (
            "boolean",
            "Delete even when other items still refer to this {n}.",
        ),
        "query" => (
            "string",
            "Words to look for; quotes match a phrase and a minus sign excludes a word.",
        ),
        "since" => (
            "string",
            "Only items changed at or after this time (RFC 3339).",
        ),
        "until" => ("string", "Only items changed before this time (RFC 3339)."),
        "reason" => ("string", "Why, kept in the audit log."),
        "format" => ("string", "`csv` or `json`."),
        "url" => ("string", "Where to read the file from."),
        "direction" => ("string", "`pull`, `push` or `both`."),
        "email" => ("string", "The email address of the person to share with."),
        "role" => ("string", "What they may do: `viewer`, `editor` or `owner`."),
        "target" => ("string", "The {p} to move or copy to."),
        "keep_copy" => ("boolean", "Leave a copy where the {n} was."),
        "webhook_url" => (
            "string",
            "The HTTPS endpoint that receives each notification.",
        ),
        "events" => (
            "array",
            "Which changes to report, such as `created` or `deleted`.",
        ),
        "comment" => ("string", "A note for the author."),
        "assignee" => ("string", "The user to assign, by handle or email."),
        "notify" => ("boolean", "Tell the assignee by email."),
        "filter" => ("object", "Conditions every counted {n} must meet."),
        "max_words" => ("integer", "The longest summary to write."),
        "body" => ("object", "The {n} as it would be saved."),
        "strict" => ("boolean", "Treat warnings as errors."),
        "at" => ("string", "When, as an RFC 3339 timestamp."),
        "timezone" => (
            "string",
            "An IANA time zone such as `Europe/Paris`; UTC when left out.",
        ),
        "repeat" => ("string", "An optional recurrence rule (RFC 5545 RRULE)."),
        "refresh" => ("boolean", "Bypass the cache."),
        _ => ("string", "An option of the {n}."),
    }
}

/// Second sentences, some short and some long, so description lengths vary as real ones do.
const SECOND_SENTENCES: [&str; 12] = [
    "Results are paginated; pass the cursor from the previous page.",
    "Requires write access to the {p}.",
    "Only {ns} the caller can see are returned.",
    "The change is recorded in the audit log of the {p}.",
    "Times are in UTC unless a time zone is given.",
    "Returns the {n} as {s} stores it.",
    "Use this when a {n} was changed by mistake or needs a second look from another member of the {p} before anyone relies on it; the previous version stays available for thirty days.",
    "Rate limited to 60 requests a minute per token.",
    "Large {ns} are truncated to their first megabyte.",
    "Idempotent: calling it twice has the effect of calling it once.",
    "Fails with `not_found` when the {n} does not exist or the token cannot see it.",
    "Prefer the bulk variant when handling more than a hundred {ns} at once.",
];

/// Words added to a name that is already taken, as real catalogs vary a tool.
const QUALIFIERS: [&str; 10] = [
    "by_id", "bulk", "v2", "for_team", "batch", "details", "summary", "history", "settings",
    "async",
];

/// The plural of an English noun, well enough for generated text.
pub(crate) fn plural(noun: &str) -> String {
    if let Some(base) = noun.strip_suffix('y')
        && !base.ends_with(['a', 'e', 'o', 'u'])
    {
        format!("{base}ies")
    } else if noun.ends_with(['s', 'x']) || noun.ends_with("ch") || noun.ends_with("sh") {
        format!("{noun}es")
    } else {
        format!("{noun}s")
    }
}

fn camel_case(words: &[&str]) -> String {
    let mut out = String::new();
    for (i, word) in words.iter().flat_map(|w| w.split('_')).enumerate() {
        let mut chars = word.chars();
        if i > 0
            && let Some(first) = chars.next()
        {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        } else {
            out.push_str(word);
        }
    }
    out
}

fn fill(template: &str, noun: &str, parent: &str, service: &str) -> String {
    let n = noun.replace('_', " ");
    template
        .replace("{ns}", &plural(&n))
        .replace("{n}", &n)
        .replace("{p}", &parent.replace('_', " "))
        .replace("{s}", service)
}

fn capitalised(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
}

/// `count` tool descriptors, as `tools/list` publishes them, with a `tags` array each.
pub(crate) fn catalog(count: usize) -> Vec<Value> {
    let (domains, verbs) = (domains(), verbs());
    let mut choices = Choices::new(10_000);
    let mut taken = std::collections::HashSet::new();
    let mut tools = Vec::with_capacity(count);
    for i in 0..count {
        let domain = &domains[i % domains.len()];
        let service = choices.pick(&domain.services);
        let noun = choices.pick(&domain.nouns);
        let verb = &verbs[choices.below(verbs.len())];
        let object = if verb.description.contains("{ns}") && choices.chance(70) {
            plural(noun)
        } else {
            noun.to_owned()
        };
        let prefixed = choices.chance(30);
        let camel = choices.chance(20);
        let mut words: Vec<&str> = Vec::new();
        if prefixed {
            words.push(service);
        }
        words.extend([verb.word, object.as_str()]);
        let join = |words: &[&str]| {
            if camel {
                camel_case(words)
            } else {
                words.join("_")
            }
        };
        let mut name = join(&words);
        while !taken.insert(name.clone()) {
            words.push(choices.pick(&QUALIFIERS));
            name = join(&words);
            if words.len() > 5 {
                name = format!("{}_{i}", join(&words[..3]));
                taken.insert(name.clone());
                break;
            }
        }

        let mut description = fill(verb.description, noun, domain.parent, service);
        if choices.chance(60) {
            description.push(' ');
            description.push_str(&fill(
                choices.pick(&SECOND_SENTENCES),
                noun,
                domain.parent,
                service,
            ));
        }

        let wanted = 1 + choices.below(verb.arguments.len().min(5));
        let mut properties = Map::new();
        for &argument_name in &verb.arguments[..wanted] {
            let (kind, text) = argument(argument_name);
            let property_name = match argument_name {
                "id" => format!("{noun}_id"),
                "parent" => format!("{}_id", domain.parent),
                other => other.to_owned(),
            };
            let property_name = if camel {
                camel_case(&[&property_name])
            } else {
                property_name
            };
            properties.insert(
                property_name,
                json!({"type": kind, "description": fill(text, noun, domain.parent, service)}),
            );
        }
        let required: Vec<&String> = properties.keys().take(1).collect();
        let mut schema = json!({"type": "object", "properties": properties, "required": required});
        if choices.chance(15) {
            let definition = capitalised(&camel_case(&[noun, "options"]));
            schema["$defs"] = json!({ definition: {
                "type": "object",
                "properties": {
                    "visibility": {"type": "string", "description": fill("Who can see the {n}: `private`, `{p}` or `public`.", noun, domain.parent, service)},
                    "notify": {"type": "boolean", "description": "Tell watchers about the change."},
                },
            }});
        }

        let mut tool = json!({
            "name": name,
            "description": description,
            "inputSchema": schema,
            "tags": [domain.name, service, verb.word],
        });
        if choices.chance(50) {
            tool["title"] = json!(capitalised(&format!(
                "{} {}",
                verb.word,
                object.replace('_', " ")
            )));
        }
        if matches!(verb.word, "list" | "get" | "search" | "count" | "fetch") {
            tool["annotations"] = json!({"readOnlyHint": true});
        }
        tools.push(tool);
    }
    tools
}

/// Kinds of query, with how they are made and how many of each in a hundred.
pub(crate) const STYLES: [(&str, usize); 8] = [
    ("keyword", 30),
    ("paraphrase", 15),
    ("description words", 10),
    ("prefix", 10),
    ("common word", 10),
    ("long", 10),
    ("no match", 10),
    ("empty", 5),
];

const REQUESTS: [&str; 8] = [
    "show me the {ns} in my {p}",
    "i need to find a {n} from last week",
    "which {ns} changed today",
    "get rid of the old {n}",
    "make a {n} for the team",
    "what is the status of this {n}",
    "send the {n} to someone else",
    "how many {ns} are there in the {p}",
];

const COMMON_WORDS: [&str; 8] = [
    "list", "get", "create", "id", "the", "delete", "search", "new",
];

const NONSENSE: [&str; 6] = [
    "zyxwv",
    "qqq frobnicate",
    "xylophonic",
    "blorptastic",
    "vvvv",
    "quux grault",
];

/// `count` queries over `tools`, each with its style, in a mixed order.
pub(crate) fn queries(tools: &[Value], count: usize) -> Vec<(&'static str, String)> {
    let domains = domains();
    let mut choices = Choices::new(5);
    let total: usize = STYLES.iter().map(|&(_, share)| share).sum();
    (0..count)
        .map(|_| {
            let mut roll = choices.below(total);
            let style = STYLES
                .iter()
                .find(|&&(_, share)| {
                    let found = roll < share;
                    roll = roll.saturating_sub(share);
                    found
                })
                .map_or("keyword", |&(style, _)| style);
            let tool = &tools[choices.below(tools.len())];
            let name = tool["name"].as_str().unwrap_or_default();
            let name_words: Vec<String> = name
                .split(|c: char| c == '_' || c.is_uppercase())
                .filter(|w| !w.is_empty())
                .map(str::to_lowercase)
                .collect();
            let description = tool["description"].as_str().unwrap_or_default();
            let domain = &domains[choices.below(domains.len())];
            let noun = choices.pick(&domain.nouns);
            let query = match style {
                "keyword" => {
                    let take = 1 + choices.below(name_words.len().clamp(1, 3));
                    let skip = choices.below(name_words.len() - take + 1);
                    name_words[skip..skip + take].join(" ")
                }
                "paraphrase" => fill(choices.pick(&REQUESTS), noun, domain.parent, ""),
                "description words" => {
                    let words: Vec<&str> = description.split_whitespace().collect();
                    let take = (2 + choices.below(3)).min(words.len());
                    let skip = choices.below(words.len() - take + 1);
                    words[skip..skip + take].join(" ")
                }
                "prefix" => noun.chars().take(3 + choices.below(3)).collect(),
                "common word" => choices.pick(&COMMON_WORDS).to_owned(),
                "long" => {
                    let mut words: Vec<String> = name_words.clone();
                    words.extend(["for", "the"].map(String::from));
                    words.push(domain.parent.replace('_', " "));
                    words.push(choices.pick(&domain.services).to_string());
                    words.truncate(6);
                    words.join(" ")
                }
                "no match" => choices.pick(&NONSENSE).to_owned(),
                _ => String::new(),
            };
            (style, query)
        })
        .collect()
}
