//! Which protocol era a connection speaks, settled as it opens: 2026-07-28's `server/discover`
//! first, unless the client was told otherwise, and the handshake of 2025-11-25 (negotiating
//! down to 2024-11-05) when the server does not answer it with that version.

use std::sync::Arc;
use std::time::Duration;

use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::error::Error;
use super::peer::{Options, Peer};
use crate::protocol::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, HANDSHAKE_VERSIONS, PROTOCOL_VERSION_KEY,
    SERVER_INFO_KEY, STATELESS_VERSIONS,
};

/// Which protocol era to speak, or how to choose one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub enum Versions {
    /// Ask with `server/discover` (2026-07-28) first; on any error, or no answer within the
    /// discovery's time limit, open with `initialize`. What the Python SDK's clients do.
    #[default]
    Auto,
    /// The handshake era only (`initialize`, 2025-11-25 down to 2024-11-05).
    Handshake,
    /// 2026-07-28 only: a server that does not speak it is an error.
    Stateless,
}

/// The era a connection settled on.
#[derive(Clone, Debug)]
pub(crate) enum Era {
    /// `initialize` was answered with this version.
    Handshake { version: &'static str },
    /// 2026-07-28: every request carries this envelope in its `_meta`.
    Stateless {
        version: &'static str,
        envelope: EnvelopeMembers,
    },
}

/// The members 2026-07-28 puts in every request's `_meta` (the version, the client's
/// capabilities and its name), each serialised once, as the connection opens: a request writes
/// them as they are rather than copying them into its own `params`.
pub(crate) type EnvelopeMembers = Arc<[(&'static str, Box<RawValue>)]>;

impl Era {
    pub(crate) fn version(&self) -> &'static str {
        match self {
            Era::Handshake { version } | Era::Stateless { version, .. } => version,
        }
    }

    /// What every request of the era carries in its `_meta`: nothing in the handshake era.
    pub(crate) fn envelope(&self) -> &[(&'static str, Box<RawValue>)] {
        match self {
            Era::Handshake { .. } => &[],
            Era::Stateless { envelope, .. } => envelope,
        }
    }
}

/// What the server said of itself as the connection opened.
#[derive(Clone, Debug)]
pub(crate) struct Opened {
    pub(crate) era: Era,
    pub(crate) server_info: Value,
    pub(crate) capabilities: Value,
    pub(crate) instructions: Option<String>,
}

/// The client as it introduces itself.
pub(crate) struct Introduction {
    pub(crate) versions: Versions,
    pub(crate) discovery_limit: Duration,
    pub(crate) request_limit: Option<Duration>,
    pub(crate) capabilities: Value,
    pub(crate) info: Value,
}

/// Opens the connection: settles the era, as `introduction` asks.
pub(crate) async fn open(peer: &Arc<Peer>, introduction: &Introduction) -> Result<Opened, Error> {
    if introduction.versions != Versions::Handshake {
        match discover(peer, introduction).await {
            Ok(opened) => return Ok(opened),
            Err(error) if introduction.versions == Versions::Stateless => return Err(error),
            Err(error) => tracing::debug!(
                target: "toolwright::client",
                server = %peer.name,
                "no 2026-07-28 ({error}); opening with `initialize`"
            ),
        }
    }
    initialize(peer, introduction).await
}

async fn discover(peer: &Arc<Peer>, introduction: &Introduction) -> Result<Opened, Error> {
    let version = STATELESS_VERSIONS[0];
    let raw = |value: &Value| serde_json::value::to_raw_value(value).expect("JSON serialises");
    let envelope: EnvelopeMembers = Arc::new([
        (PROTOCOL_VERSION_KEY, raw(&json!(version))),
        (CLIENT_CAPABILITIES_KEY, raw(&introduction.capabilities)),
        (CLIENT_INFO_KEY, raw(&introduction.info)),
    ]);
    peer.link().settled(version, true);
    let options = Options::limited(Some(introduction.discovery_limit));
    let result = peer
        .request("server/discover", &json!({}), &envelope, options)
        .await?;
    let era = Era::Stateless { version, envelope };
    let supported = result
        .get("supportedVersions")
        .and_then(Value::as_array)
        .is_some_and(|versions| versions.iter().any(|v| v == version));
    if !supported {
        return Err(Error::Protocol {
            server: peer.name.clone(),
            method: "server/discover".to_owned(),
            reason: format!(
                "it does not list {version} among its versions ({})",
                result.get("supportedVersions").unwrap_or(&Value::Null)
            ),
        });
    }
    let server_info = result
        .pointer(&format!("/_meta/{}", SERVER_INFO_KEY.replace('/', "~1")))
        .cloned()
        .unwrap_or(Value::Null);
    Ok(Opened {
        era,
        server_info,
        capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
        instructions: instructions(&result),
    })
}

async fn initialize(peer: &Arc<Peer>, introduction: &Introduction) -> Result<Opened, Error> {
    let asked = HANDSHAKE_VERSIONS[0];
    peer.link().settled(asked, false);
    let params = json!({
        "protocolVersion": asked,
        "capabilities": introduction.capabilities,
        "clientInfo": introduction.info,
    });
    let options = Options::limited(introduction.request_limit);
    let result = peer.request("initialize", &params, &[], options).await?;
    let answered = result.get("protocolVersion").and_then(Value::as_str);
    let Some(version) = HANDSHAKE_VERSIONS
        .iter()
        .copied()
        .find(|v| Some(*v) == answered)
    else {
        return Err(Error::Protocol {
            server: peer.name.clone(),
            method: "initialize".to_owned(),
            reason: format!(
                "it answered with protocol version {}, which this client does not speak (it \
                 speaks {})",
                answered.unwrap_or("(none)"),
                HANDSHAKE_VERSIONS.join(", ")
            ),
        });
    };
    peer.link().settled(version, false);
    peer.notify("notifications/initialized", json!({}))
        .await
        .map_err(|reason| Error::Closed {
            server: peer.name.clone(),
            method: "notifications/initialized".to_owned(),
            reason,
        })?;
    Ok(Opened {
        era: Era::Handshake { version },
        server_info: result.get("serverInfo").cloned().unwrap_or(Value::Null),
        capabilities: result.get("capabilities").cloned().unwrap_or(json!({})),
        instructions: instructions(&result),
    })
}

fn instructions(result: &Value) -> Option<String> {
    result
        .get("instructions")
        .and_then(Value::as_str)
        .map(str::to_owned)
}
