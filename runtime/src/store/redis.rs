//! Sessions in Redis, shared by every replica that names the same server and prefix.

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, SetExpiry, SetOptions};

use super::{SessionStore, StoreError, StoreFuture};

/// How long a command may take, connecting included, before the request that needed it is
/// answered `503`.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// Sessions kept in Redis, so that replicas behind a load balancer share them: any replica
/// serves any request of a session. Each session is one string key, `<prefix>session:<id>`,
/// with the session's lifetime as its expiry, renewed on each use (`GETEX`).
///
/// One multiplexed connection serves every request of the process, opened on first use and
/// opened again by itself after Redis restarts or the network fails; meanwhile the requests
/// that need a session are answered `503 Service Unavailable` with `Retry-After`. A command
/// that takes longer than the [timeout](RedisStore::timeout) (2 seconds by default) fails the
/// same way.
///
/// Redis must keep what it is told across its own restarts for sessions to survive them:
/// `appendonly yes` (as `deploy/` starts it), or snapshots on shutdown.
pub struct RedisStore {
    client: redis::Client,
    prefix: String,
    timeout: Duration,
    connection: Mutex<Option<ConnectionManager>>,
}

impl RedisStore {
    /// A store on the Redis server at `url` (`redis://HOST:PORT/DB`, `rediss://` for TLS where
    /// the `redis` crate was built with it, `redis+unix:///path`), with keys under
    /// `toolwright:`. Nothing is connected until the first session needs it.
    ///
    /// # Errors
    ///
    /// When `url` is not a Redis URL.
    pub fn new(url: &str) -> Result<RedisStore, StoreError> {
        let client = redis::Client::open(url).map_err(StoreError::new)?;
        Ok(RedisStore {
            client,
            prefix: "toolwright:".to_owned(),
            timeout: DEFAULT_TIMEOUT,
            connection: Mutex::new(None),
        })
    }

    /// Keys under this prefix instead of `toolwright:`: servers that should not share
    /// sessions (two applications on one Redis) each take their own.
    #[must_use]
    pub fn prefix(mut self, prefix: impl Into<String>) -> RedisStore {
        self.prefix = prefix.into();
        self
    }

    /// How long a command may take, connecting included (2 seconds by default).
    #[must_use]
    pub fn timeout(mut self, timeout: Duration) -> RedisStore {
        self.timeout = timeout;
        self
    }

    fn key(&self, id: &str) -> String {
        format!("{}session:{id}", self.prefix)
    }

    /// The connection, made on first use (inside the server's runtime, which the connection
    /// manager needs). Opening it again after a failure is the connection manager's business:
    /// commands fail meanwhile.
    fn connection(&self) -> Result<ConnectionManager, StoreError> {
        let mut connection = self.connection.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(connection) = &*connection {
            return Ok(connection.clone());
        }
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(self.timeout))
            .set_response_timeout(Some(self.timeout))
            .set_number_of_retries(2)
            .set_max_delay(Duration::from_millis(500));
        let made = ConnectionManager::new_lazy_with_config(self.client.clone(), config)
            .map_err(StoreError::new)?;
        *connection = Some(made.clone());
        Ok(made)
    }

    /// Runs one command within the timeout.
    async fn run<T>(
        &self,
        command: impl AsyncFnOnce(ConnectionManager) -> redis::RedisResult<T>,
    ) -> Result<T, StoreError> {
        let connection = self.connection()?;
        match tokio::time::timeout(self.timeout, command(connection)).await {
            Ok(outcome) => outcome.map_err(StoreError::new),
            Err(_) => Err(StoreError::new(format!(
                "Redis did not answer within {:?}",
                self.timeout
            ))),
        }
    }
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The URL may hold a password: only where it leads is shown.
        let info = self.client.get_connection_info();
        f.debug_struct("RedisStore")
            .field("addr", &info.addr().to_string())
            .field("db", &info.redis_settings().db())
            .field("prefix", &self.prefix)
            .field("timeout", &self.timeout)
            .finish()
    }
}

/// Seconds for an expiry: at least one, as Redis counts whole seconds.
fn seconds(lifetime: Duration) -> u64 {
    lifetime.as_secs().max(1)
}

impl SessionStore for RedisStore {
    fn create<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        lifetime: Duration,
    ) -> StoreFuture<'a, ()> {
        Box::pin(self.run(async move |mut redis| {
            let options = SetOptions::default().with_expiration(SetExpiry::EX(seconds(lifetime)));
            redis.set_options(self.key(id), record, options).await
        }))
    }

    fn load<'a>(&'a self, id: &'a str, lifetime: Duration) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(self.run(async move |mut redis| {
            redis
                .get_ex(self.key(id), redis::Expiry::EX(seconds(lifetime)))
                .await
        }))
    }

    fn update<'a>(
        &'a self,
        id: &'a str,
        record: &'a [u8],
        lifetime: Duration,
    ) -> StoreFuture<'a, bool> {
        Box::pin(self.run(async move |mut redis| {
            // Only if it still exists (`XX`): a session removed meanwhile stays removed.
            let options = SetOptions::default()
                .conditional_set(redis::ExistenceCheck::XX)
                .with_expiration(SetExpiry::EX(seconds(lifetime)));
            let written: Option<String> = redis.set_options(self.key(id), record, options).await?;
            Ok(written.is_some())
        }))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(self.run(async move |mut redis| {
            let removed: u64 = redis.del(self.key(id)).await?;
            Ok(removed > 0)
        }))
    }
}
