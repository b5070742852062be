//! `subscriptions/listen`, protocol 2026-07-28: a request whose answer is a stream of the
//! notifications it asked for (list changes, resource updates), each tagged with the request's
//! id, until the client closes it or cancels it.

use std::collections::BTreeSet;
use std::sync::Arc;

use serde_json::{Map, Value, json};

use super::call::Registered;
use super::session::{MAX_SUBSCRIPTIONS, Session};
use super::step::Step;
use crate::live::{Filter, Listener, Live, subscription_meta};
use crate::protocol::Wire;
use crate::protocol::jsonrpc::{INTERNAL_ERROR, INVALID_PARAMS, Id, Reply};
use crate::registry::{Registry, Resolved};
use crate::sink::{Answer, Sink};

/// The most `subscriptions/listen` streams a server keeps open at once, from all its clients.
pub(crate) const MAX_STREAMS: usize = 1024;

/// Opens a `subscriptions/listen` stream: acknowledges what it will be told (what it asked for
/// that the server has: its lists, the resources that change), then tells it until the client
/// cancels it, closes its stream or goes away.
pub(super) fn listen(
    live: &Arc<Live>,
    registry: &Registry,
    session: &Arc<Session>,
    id: Id,
    params: &Value,
    sink: &Sink,
    wire: &Wire,
) -> Step {
    let filter = match requested(params) {
        Ok(filter) => honoured(registry, filter),
        Err(message) => return Step::Reply(Reply::error(&id, INVALID_PARAMS, &message)),
    };
    if live.streams() >= MAX_STREAMS {
        return Step::Reply(Reply::error(
            &id,
            INTERNAL_ERROR,
            &format!(
                "this server has {MAX_STREAMS} `subscriptions/listen` streams open, the most it \
                 keeps: close one, or try again later"
            ),
        ));
    }
    let registered = match Registered::new(session, &id) {
        Ok(registered) => registered,
        Err(reply) => return Step::Reply(reply),
    };
    let meta = subscription_meta(&id);
    let acknowledged = json!({
        "jsonrpc": "2.0",
        "method": "notifications/subscriptions/acknowledged",
        "params": { "_meta": meta, "notifications": described(&filter) },
    });
    let _ = sink.send(serde_json::to_vec(&acknowledged).expect("a JSON value serialises"));
    let listener = Arc::new(Listener::stream(sink.clone(), filter, id.clone()));
    live.register(&listener);
    let session = Arc::clone(session);
    let live = Arc::clone(live);
    let wire = wire.clone();
    Step::Stream(Box::pin(async move {
        let _told = listener;
        let cancellation = registered.cancellation();
        let cancelled = tokio::select! {
            () = cancellation.cancelled() => true,
            () = session.closed() => false,
            () = live.stopping() => false,
        };
        // A cancelled request is not answered; a stream the server ends is, with its id.
        let answer = Reply::result(&id, &wire.shape(json!({ "_meta": meta })));
        (!cancelled).then(|| Answer::of(registered, answer))
    }))
}

/// The filter a request asks for, from its `notifications`.
fn requested(params: &Value) -> Result<Filter, String> {
    let Some(notifications) = params.get("notifications").and_then(Value::as_object) else {
        return Err(
            "`subscriptions/listen` needs `notifications`, an object saying what to be told: \
             `toolsListChanged`, `promptsListChanged`, `resourcesListChanged`, \
             `resourceSubscriptions`"
                .to_owned(),
        );
    };
    let flag = |key: &str| match notifications.get(key) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(flag)) => Ok(*flag),
        Some(other) => Err(format!(
            "`notifications.{key}` must be a boolean, not {other}"
        )),
    };
    let uris = match notifications.get("resourceSubscriptions") {
        None | Some(Value::Null) => BTreeSet::new(),
        Some(Value::Array(uris)) if uris.len() > MAX_SUBSCRIPTIONS => {
            return Err(format!(
                "`notifications.resourceSubscriptions` lists {} resources; a stream follows \
                 {MAX_SUBSCRIPTIONS} at most",
                uris.len()
            ));
        }
        Some(Value::Array(uris)) => uris
            .iter()
            .map(|uri| {
                uri.as_str().map(str::to_owned).ok_or_else(|| {
                    format!("`notifications.resourceSubscriptions` holds URIs, and {uri} is none")
                })
            })
            .collect::<Result<_, _>>()?,
        Some(other) => {
            return Err(format!(
                "`notifications.resourceSubscriptions` must be a list of URIs, not {other}"
            ));
        }
    };
    Ok(Filter {
        tools: flag("toolsListChanged")?,
        prompts: flag("promptsListChanged")?,
        resources: flag("resourcesListChanged")?,
        uris,
    })
}

/// What of `filter` the server can tell: the lists it has, and the resources that change (a
/// mounted server's, when it tells of changes, which it is asked to).
fn honoured(registry: &Registry, filter: Filter) -> Filter {
    let changes = |uri: &String| match registry.resolve_resource(uri) {
        Some(Resolved::Own(found)) => found.changes(),
        // Its server is asked to tell of changes: at once done when it was asked already.
        #[cfg(feature = "gateway")]
        Some(Resolved::Mounted(mounted, upstream)) if mounted.subscribes => {
            let following = mounted.forward.follow(&upstream);
            let uri = uri.clone();
            tokio::spawn(async move {
                if let Err(refused) = following.await {
                    tracing::warn!(
                        uri,
                        error = refused.message,
                        "a mounted server's resource cannot be followed: its changes are not told"
                    );
                }
            });
            true
        }
        _ => false,
    };
    Filter {
        tools: filter.tools,
        prompts: filter.prompts && registry.has_prompts(),
        resources: filter.resources && registry.has_resources(),
        uris: filter.uris.into_iter().filter(changes).collect(),
    }
}

/// A filter as the acknowledgement states it: only what is on.
fn described(filter: &Filter) -> Value {
    let mut notifications = Map::new();
    for (key, on) in [
        ("toolsListChanged", filter.tools),
        ("promptsListChanged", filter.prompts),
        ("resourcesListChanged", filter.resources),
    ] {
        if on {
            notifications.insert(key.to_owned(), json!(true));
        }
    }
    if !filter.uris.is_empty() {
        notifications.insert("resourceSubscriptions".to_owned(), json!(filter.uris));
    }
    Value::Object(notifications)
}
