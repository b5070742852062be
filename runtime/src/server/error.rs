//! Why a server stopped or could not start.

use crate::registry::RegistryError;

/// Why a server stopped or could not start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The tools conflict: duplicate names, invalid schemas.
    #[error(transparent)]
    Registry(#[from] RegistryError),
    /// The transport failed.
    #[error("the transport failed: {0}")]
    Io(#[from] std::io::Error),
    /// A state given to [`Server::state_from`](crate::Server::state_from) could not be built.
    #[error("cannot build the server's state `{state}`: {error}")]
    State {
        /// The state's type.
        state: &'static str,
        /// Why, as its builder said.
        error: String,
    },
    /// A server given to [`Server::mount`](crate::Server::mount) could not be mounted: it
    /// could not be reached, or did not list its tools.
    #[cfg(feature = "gateway")]
    #[error("cannot mount `{mount}`: {error}")]
    Mount {
        /// The mount's name.
        mount: String,
        /// What the client met.
        error: Box<crate::client::Error>,
    },
    /// The OAuth settings (`http::Http::oauth`) cannot be served: an issuer or resource that is
    /// not an `https` URL, a resource missing where it cannot be derived, a malformed scope.
    #[cfg(feature = "oauth")]
    #[error("the OAuth settings cannot be served: {0}")]
    OAuth(String),
    /// The session store (`http::Http::session_store`) did not answer as the server started.
    #[cfg(feature = "http")]
    #[error(
        "the session store, {store}, does not answer: {error}; check that it runs there and \
         that this machine reaches it"
    )]
    SessionStore {
        /// Where the sessions were to be kept, as the store describes itself.
        store: String,
        /// Why it did not answer.
        error: crate::store::StoreError,
    },
}
