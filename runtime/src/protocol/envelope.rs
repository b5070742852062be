//! What a 2026-07-28 request says about itself in `params._meta`.

use std::sync::Arc;

use serde_json::{Value, json};

use super::jsonrpc::{INVALID_PARAMS, Id, Reply, UNSUPPORTED_PROTOCOL_VERSION};
use super::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, Client, LOG_LEVEL_KEY, LogLevel,
    PROTOCOL_VERSION_KEY, STATELESS_VERSIONS,
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
    /// Reads the envelope, or the error to answer: a missing or malformed member is -32602, a
    /// version this server does not speak -32022 with the versions it does. The client's
    /// capabilities and name are taken out of `params._meta` (left null there), not copied.
    pub(crate) fn read(id: &Id, params: &mut Value) -> Result<Envelope, Reply> {
        let invalid = |message: &str| Reply::error(id, INVALID_PARAMS, message);
        let Some(meta) = params.get_mut("_meta").and_then(Value::as_object_mut) else {
            return Err(invalid(
                "`params._meta` must be an object with `io.modelcontextprotocol/protocolVersion` \
                 and `io.modelcontextprotocol/clientCapabilities`: protocol 2026-07-28 requires \
                 them on every request",
            ));
        };
        let missing: Vec<String> = [PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY]
            .into_iter()
            .filter(|key| !meta.contains_key(*key))
            .map(|key| format!("`{key}`"))
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
        if !meta[CLIENT_CAPABILITIES_KEY].is_object() {
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
        let client = Client {
            capabilities: meta
                .get_mut(CLIENT_CAPABILITIES_KEY)
                .map(|capabilities| Arc::new(capabilities.take())),
            info: meta
                .get_mut(CLIENT_INFO_KEY)
                .map(|info| Arc::new(info.take())),
        };
        Ok(Envelope {
            log_level,
            client,
            version,
        })
    }
}
