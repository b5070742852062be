//! The `tools/list` results, serialised once at start: a page at a time, in both eras, with
//! cursors tied to what is listed.

use std::sync::{Arc, RwLock};

use base64::Engine as _;
use bytes::Bytes;
use serde_json::Value;

use super::step::Step;
use crate::apps;
use crate::catalog::{self, Audience, Progressive};
use crate::live::Live;
use crate::manifest::{Manifest, sha256_hex};
use crate::protocol::jsonrpc::{INVALID_PARAMS, Id, Reply, SharedResult};
use crate::protocol::{Client, Wire};
use crate::registry::{Registry, Tool};

/// The tool lists a server serves, made again when a tool is disabled or enabled.
pub(super) struct ToolLists {
    registry: Arc<Registry>,
    page_size: Option<usize>,
    /// What the stateless era adds to each page.
    cacheable: Value,
    /// Whether some tools are for views only, so that clients without views see another list.
    app_only: bool,
    current: RwLock<Arc<Lists>>,
}

/// The lists as they are for one set of disabled tools.
struct Lists {
    /// The [`Live::version`] they were made at.
    version: u64,
    /// Every tool, as clients that declared MCP Apps see them.
    apps: Listing,
    /// Without the tools only views may call, for the other clients; `None` when there are no
    /// such tools.
    model: Option<Listing>,
}

impl ToolLists {
    pub(super) fn new(
        registry: Arc<Registry>,
        progressive: Option<&Progressive>,
        page_size: Option<usize>,
        cacheable: Value,
        live: &Live,
    ) -> ToolLists {
        let app_only = registry.tools().iter().any(Tool::is_app_only);
        let current = RwLock::new(Arc::new(Lists::new(
            &registry,
            progressive,
            page_size,
            &cacheable,
            app_only,
            live,
        )));
        ToolLists {
            registry,
            page_size,
            cacheable,
            app_only,
            current,
        }
    }

    /// The tool list the client sees, with the tools only views call if it declared MCP Apps:
    /// made again first when a tool was disabled or enabled since it was last made.
    pub(super) fn answer(
        &self,
        id: &Id,
        params: &Value,
        wire: &Wire,
        client: &Client,
        progressive: Option<&Progressive>,
        live: &Live,
    ) -> Step {
        let mut lists = Arc::clone(&self.current.read().unwrap_or_else(|e| e.into_inner()));
        if lists.version != live.version() {
            lists = Arc::new(Lists::new(
                &self.registry,
                progressive,
                self.page_size,
                &self.cacheable,
                self.app_only,
                live,
            ));
            *self.current.write().unwrap_or_else(|e| e.into_inner()) = Arc::clone(&lists);
        }
        let listing = match &lists.model {
            Some(listing) if !apps::declared_by(client) => listing,
            _ => &lists.apps,
        };
        listing.answer(id, params, wire)
    }
}

impl Lists {
    /// The lists without the tools disabled now.
    fn new(
        registry: &Registry,
        progressive: Option<&Progressive>,
        page_size: Option<usize>,
        cacheable: &Value,
        app_only: bool,
        live: &Live,
    ) -> Lists {
        let version = live.version();
        let disabled = live.disabled();
        let listing_for = |audience| {
            let listed = catalog::listed(progressive, registry, audience, &disabled);
            Listing::new(registry.manifest(), listed.as_deref(), page_size, cacheable)
        };
        Lists {
            version,
            apps: listing_for(Audience::Apps),
            model: app_only.then(|| listing_for(Audience::Model)),
        }
    }
}

/// One tool list's pages.
struct Listing {
    /// Each page's result in the handshake era; a single page is the manifest's own bytes.
    pages: Vec<Bytes>,
    /// `cursors[i]` asks for page `i + 1`.
    cursors: Vec<String>,
    /// What the stateless era adds to every page (`ttlMs`, `cacheScope`, `resultType`,
    /// `_meta`): object members, without braces.
    stateless_members: Vec<u8>,
}

impl Listing {
    /// The pages of the manifest's tools, or, when `listed` says, of these tools instead (the
    /// progressive catalog's, or those a client without views sees). `cacheable` is what the
    /// stateless era adds to each page.
    fn new(
        manifest: &Manifest,
        listed: Option<&[Vec<u8>]>,
        page_size: Option<usize>,
        cacheable: &Value,
    ) -> Listing {
        let members = serde_json::to_vec(cacheable).expect("a JSON value serialises");
        let stateless_members = members[1..members.len() - 1].to_vec();
        let tools: Vec<&[u8]> = match listed {
            Some(listed) => listed.iter().map(Vec::as_slice).collect(),
            None => manifest.tool_bytes().collect(),
        };
        let size = match page_size {
            Some(size) if tools.len() > size => size,
            _ if listed.is_none() => {
                return Listing {
                    pages: vec![manifest.shared_bytes()],
                    cursors: Vec::new(),
                    stateless_members,
                };
            }
            // A list of its own on one page; `chunks` needs at least one tool per page, and a
            // list of none (every tool for views only) is one empty page.
            _ => tools.len().max(1),
        };
        let mut chunks: Vec<&[&[u8]]> = tools.chunks(size).collect();
        if chunks.is_empty() {
            chunks.push(&[]);
        }
        // Cursors are tied to what is listed: the manifest, or the list's own bytes (which tools
        // are core is not in the manifest).
        let list_hash = match listed {
            Some(listed) => sha256_hex(&listed.concat()),
            None => sha256_hex(manifest.tools_list_bytes()),
        };
        let cursors: Vec<String> = (1..chunks.len())
            .map(|page| cursor(&list_hash, page))
            .collect();
        let pages = chunks
            .iter()
            .enumerate()
            .map(|(i, chunk)| {
                // Keys in order, as in the manifest: `nextCursor` before `tools`.
                let mut page = b"{".to_vec();
                if let Some(next) = cursors.get(i) {
                    page.extend_from_slice(br#""nextCursor":"#);
                    serde_json::to_writer(&mut page, next).expect("a string serialises");
                    page.push(b',');
                }
                page.extend_from_slice(br#""tools":["#);
                page.extend_from_slice(&chunk.join(&b","[..]));
                page.extend_from_slice(b"]}");
                page.into()
            })
            .collect();
        Listing {
            pages,
            cursors,
            stateless_members,
        }
    }

    /// The answer to a `tools/list` request: the page its cursor asks for (the first without
    /// one), or the error for a cursor this server did not hand out.
    fn answer(&self, id: &Id, params: &Value, wire: &Wire) -> Step {
        let page = match params.get("cursor").filter(|c| !c.is_null()) {
            None => 0,
            Some(cursor) => match self.page_for(cursor) {
                Some(page) => page,
                None => {
                    let reason = if self.pages.len() == 1 {
                        "this server lists every tool on one page"
                    } else {
                        "it is not one this server handed out; list from the first page, \
                         without a cursor"
                    };
                    return Step::Reply(Reply::error(
                        id,
                        INVALID_PARAMS,
                        &format!("invalid cursor {cursor}: {reason}"),
                    ));
                }
            },
        };
        let page = self.pages[page].clone();
        Step::Reply(Reply::shared(match wire {
            Wire::Handshake => SharedResult::new(id, page),
            Wire::Stateless { .. } => SharedResult::with_members(id, page, &self.stateless_members),
        }))
    }

    /// The page a cursor asks for, if this server handed it out.
    fn page_for(&self, cursor: &Value) -> Option<usize> {
        let cursor = cursor.as_str()?;
        self.cursors.iter().position(|c| c == cursor).map(|i| i + 1)
    }
}

/// The cursor for a page: opaque to clients, and tied to this tool list by its hash, so a cursor
/// from another build of the server, or from the other catalog mode, is refused rather than
/// misread.
fn cursor(list_hash: &str, page: usize) -> String {
    let hash = &list_hash[..16];
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(format!("{hash}:{page}"))
}
