//! What a 2026-07-28 request says about itself in `params._meta`.

use serde_json::{Value, json};

use super::jsonrpc::{INVALID_PARAMS, Id, Reply, UNSUPPORTED_PROTOCOL_VERSION};
use super::{
    CLIENT_CAPABILITIES_KEY, Client, LOG_LEVEL_KEY, LogLevel, PROTOCOL_VERSION_KEY,
    STATELESS_VERSIONS,
};

/// A stateless-era request's envelope, read and checked.
#[derive(Debug)]
pub(crate) struct Envelope {
    /// The least severe log message the request wants; `None`: none at all.
    pub(crate) log_level: Option<LogLevel>,
    /// The client's capabilities and who it is, as the request declares them.
    pub(crate) client: Client,
    /// The protocol version it names, one this server speaks.
    pub(crate) version: &'static str,
}

impl Envelope {
    /// Reads the envelope of `params`, whose client's capabilities and information reading the
    /// message took out as `client`; or the error to answer: a missing or malformed member is
    /// -32602, a version this server does not speak -32022 with the versions it does.
    pub(crate) fn read(id: &Id, params: &Value, client: Client) -> Result<Envelope, Reply> {
        let invalid = |message: &str| Reply::error(id, INVALID_PARAMS, message);
        let Some(meta) = params.get("_meta").and_then(Value::as_object) else {
            return Err(invalid(
                "`params._meta` must be an object with `io.modelcontextprotocol/protocolVersion` \
                 and `io.modelcontextprotocol/clientCapabilities`: protocol 2026-07-28 requires \
                 them on every request",
            ));
        };
        let missing: Vec<String> = [
            (
                PROTOCOL_VERSION_KEY,
                meta.contains_key(PROTOCOL_VERSION_KEY),
            ),
            (CLIENT_CAPABILITIES_KEY, client.capabilities.is_some()),
        ]
        .into_iter()
        .filter(|(_, present)| !present)
        .map(|(key, _)| format!("`{key}`"))
        .collect();
        if !missing.is_empty() {
            return Err(invalid(&format!(
                "`params._meta` lacks {}: protocol 2026-07-28 requires {} on every request",
                missing.join(" and "),
                if missing.len() == 1 { "it" } else { "them" },
            )));
        }
        let Some(requested) = meta[PROTOCOL_VERSION_KEY].as_str() else {
            return Err(invalid(
                "`io.modelcontextprotocol/protocolVersion` in `params._meta` must be a string",
            ));
        };
        let Some(version) = STATELESS_VERSIONS.into_iter().find(|v| *v == requested) else {
            return Err(Reply::error_with_data(
                id,
                UNSUPPORTED_PROTOCOL_VERSION,
                &format!(
                    "unsupported protocol version `{requested}`: this connection speaks {}",
                    STATELESS_VERSIONS.join(", ")
                ),
                &json!({ "supported": STATELESS_VERSIONS, "requested": requested }),
            ));
        };
        if !client.capabilities.as_deref().is_some_and(Value::is_object) {
            return Err(invalid(
                "`io.modelcontextprotocol/clientCapabilities` in `params._meta` must be an object",
            ));
        }
        let log_level = match meta.get(LOG_LEVEL_KEY) {
            None | Some(Value::Null) => None,
            Some(level) => match level.as_str().and_then(LogLevel::from_name) {
                Some(level) => Some(level),
                None => {
                    return Err(invalid(&format!(
                        "`io.modelcontextprotocol/logLevel` in `params._meta` must be one of {}",
                        LogLevel::names()
                    )));
                }
            },
        };
        Ok(Envelope {
            log_level,
            client,
            version,
        })
    }
}
