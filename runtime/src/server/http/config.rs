//! The HTTP settings of a [`Server`](crate::Server), which its HTTP methods set.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::store::SessionStore;

/// The HTTP settings of a [`Server`]; they apply to the HTTP transport only.
#[derive(Clone, Default)]
pub(crate) struct HttpConfig {
    pub(crate) token: Option<String>,
    pub(crate) origins: Vec<String>,
    pub(crate) hosts: Vec<String>,
    /// The ceiling on connections; derived from the process's file limit when `None`.
    pub(crate) max_connections: Option<usize>,
    /// The deadlines for a request's headers and its body; the defaults when `None`.
    pub(crate) header_timeout: Option<Duration>,
    pub(crate) body_timeout: Option<Duration>,
    /// What one client may hold; the defaults when `None`.
    pub(crate) max_sessions_per_client: Option<usize>,
    pub(crate) max_streams_per_client: Option<usize>,
    /// Where sessions are kept: a store of the server's own when `None`.
    pub(crate) store: Option<Arc<dyn SessionStore>>,
    /// How long a session lives unused; the default when `None`.
    pub(crate) session_lifetime: Option<Duration>,
    /// How access tokens are checked, when they are.
    #[cfg(feature = "oauth")]
    pub(crate) oauth: Option<crate::auth::OAuth>,
}

impl fmt::Debug for HttpConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("HttpConfig");
        f.field("token", &self.token.as_ref().map(|_| "<redacted>"))
            .field("origins", &self.origins)
            .field("hosts", &self.hosts)
            .field("max_connections", &self.max_connections)
            .field("header_timeout", &self.header_timeout)
            .field("body_timeout", &self.body_timeout)
            .field("max_sessions_per_client", &self.max_sessions_per_client)
            .field("max_streams_per_client", &self.max_streams_per_client)
            .field("store", &self.store.as_ref().map_or("memory", |_| "given"))
            .field("session_lifetime", &self.session_lifetime);
        #[cfg(feature = "oauth")]
        f.field("oauth", &self.oauth);
        f.finish()
    }
}
