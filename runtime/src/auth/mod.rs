//! Who calls: the [`Principal`] an access token names and, with the `oauth` feature, the server
//! as an OAuth 2.1 resource server (`OAuth`), as the MCP authorization specification has a
//! server reached over HTTP be.
//!
//! A server has three ways to let callers in over HTTP, from the simplest:
//!
//! - none, on `127.0.0.1`: only this machine reaches it (the `Host` and `Origin` checks keep
//!   web pages out);
//! - one shared secret, `http::Http::bearer_token` (`--token`): every
//!   client that holds it may call every tool. Simple and adequate for a server a few trusted
//!   programs reach; it names nobody, so tools see no principal and scopes are not checked;
//! - `OAuth` (`--oauth-issuer`, or `http::Http::oauth`): tokens an authorization server issues to each client for
//!   this server, checked on every request; each names its [`Principal`], and carries the scopes
//!   that `#[mcp_tool(scopes = [...])]` and `OAuth::require_scope` ask for.
//!
//! `tools/list` shows every tool to every caller, with the scopes each needs in its
//! `securitySchemes`: a client learns what a token with more scopes would let it do, and a call
//! without them is answered `403` naming them, from which a client asks its user for them (MCP's
//! step-up authorization). Listing per caller would hide that, and would make the list, which is
//! serialised once, differ by token.

mod principal;

#[cfg(feature = "http")]
pub(crate) use principal::Owner;
pub use principal::Principal;

#[cfg(feature = "oauth")]
mod discovery;
#[cfg(feature = "oauth")]
mod fetch;
#[cfg(feature = "oauth")]
mod introspection;
#[cfg(feature = "oauth")]
mod jwt;
#[cfg(feature = "oauth")]
mod oauth;
#[cfg(feature = "oauth")]
mod verifier;

#[cfg(feature = "oauth")]
pub use oauth::OAuth;
#[cfg(feature = "oauth")]
pub(crate) use verifier::Verifier;

/// Why a token was not taken.
#[cfg(feature = "oauth")]
#[derive(Debug, thiserror::Error)]
pub(crate) enum TokenError {
    /// The token is not one this server takes: `401` with `error="invalid_token"`.
    #[error("{0}")]
    Invalid(String),
    /// The authorization server could not be asked: `503`, the client may try again.
    #[error("{0}")]
    Unavailable(String),
}
