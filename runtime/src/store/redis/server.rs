//! The Redis server a store talks to: its URL read, one connection made on first use and made
//! again after a failure, each command bounded by a timeout, and where it is, said without its
//! password. The session store ([`RedisStore`](super::RedisStore)) and the task store
//! ([`RedisTaskStore`](crate::tasks::RedisTaskStore)) each have one.

use std::fmt;
use std::sync::Mutex;
use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use crate::store::StoreError;

/// How long a command may take, connecting included, before the request that needed it fails.
/// The prefix of every key a store writes, unless told another.
pub(crate) const DEFAULT_PREFIX: &str = "toolwright:";

pub(crate) const DEFAULT_TIMEOUT: Duration = Duration::from_secs(2);

/// A Redis server, as a store talks to it.
pub(crate) struct RedisServer {
    client: redis::Client,
    timeout: Duration,
    connection: Mutex<Option<ConnectionManager>>,
}

impl RedisServer {
    /// The server at `url` (`redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`, or
    /// `redis+unix:///PATH[?db=DB]`); nothing is connected until the first command.
    ///
    /// # Errors
    ///
    /// When `url` is not a Redis URL: the error says the forms it may take, with any password
    /// in it masked.
    pub(crate) fn open(url: &str) -> Result<RedisServer, StoreError> {
        let client = redis::Client::open(url).map_err(|err| url_refusal(url, &err))?;
        Ok(RedisServer {
            client,
            timeout: DEFAULT_TIMEOUT,
            connection: Mutex::new(None),
        })
    }

    /// How long a command may take, connecting included.
    pub(crate) fn set_timeout(&mut self, timeout: Duration) {
        self.timeout = timeout;
    }

    pub(crate) fn timeout(&self) -> Duration {
        self.timeout
    }

    pub(crate) fn client(&self) -> &redis::Client {
        &self.client
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
    pub(crate) async fn run<T>(
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

    /// Where the server is, as a server says it at start (`Redis at
    /// redis://10.0.0.5:6379/0`): a password is masked.
    pub(crate) fn describe(&self) -> String {
        let info = self.client.get_connection_info();
        let settings = info.redis_settings();
        let db = settings.db();
        let user = match (settings.username(), settings.password()) {
            (Some(user), Some(_)) => format!("{user}:***@"),
            (None, Some(_)) => ":***@".to_owned(),
            (Some(user), None) => format!("{user}@"),
            (None, None) => String::new(),
        };
        let host = |host: &str| {
            if host.contains(':') {
                format!("[{host}]")
            } else {
                host.to_owned()
            }
        };
        match info.addr() {
            redis::ConnectionAddr::Tcp(name, port) => {
                format!("Redis at redis://{user}{}:{port}/{db}", host(name))
            }
            redis::ConnectionAddr::TcpTls {
                host: name, port, ..
            } => {
                format!("Redis at rediss://{user}{}:{port}/{db}", host(name))
            }
            redis::ConnectionAddr::Unix(path) => {
                format!("Redis at redis+unix://{}?db={db}", path.display())
            }
            other => format!("Redis at {other}, database {db}"),
        }
    }

    /// Its address and database, for a store's `Debug`: the URL may hold a password, so only
    /// where it leads is shown.
    pub(crate) fn debug_fields(&self, f: &mut fmt::DebugStruct<'_, '_>) {
        let info = self.client.get_connection_info();
        f.field("addr", &info.addr().to_string())
            .field("db", &info.redis_settings().db())
            .field("timeout", &self.timeout);
    }
}

/// The key that says the process named `replica` is alive, under `prefix`: both stores write
/// their process's heartbeat there.
pub(crate) fn alive_key(prefix: &str, replica: &str) -> String {
    format!("{prefix}alive:{replica}")
}

/// Milliseconds for an expiry: at least one.
pub(crate) fn millis(lifetime: Duration) -> u64 {
    u64::try_from(lifetime.as_millis())
        .unwrap_or(u64::MAX)
        .max(1)
}

/// The forms of URL a store reads. The `redis` crate is built without TLS here, so
/// `rediss://` is not one of them.
const URL_FORMS: &str = "redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], or \
                         redis+unix:///PATH[?db=DB] for a Unix socket";

/// Why `url` cannot be read, naming it with its password masked, and the forms it may take.
fn url_refusal(url: &str, err: &redis::RedisError) -> StoreError {
    let shown = masked(url);
    let detail = err
        .detail()
        .map(|detail| format!(" ({detail})"))
        .unwrap_or_default();
    StoreError::new(
        if url.starts_with("rediss:") || url.starts_with("valkeys:") {
            format!(
                "`{shown}` asks for Redis over TLS, which this server was built without; expected \
             {URL_FORMS}"
            )
        } else {
            format!("`{shown}` is not a Redis URL{detail}: expected {URL_FORMS}")
        },
    )
}

/// `url` with the password of its user information, if any, replaced by `***`.
fn masked(url: &str) -> String {
    let Some(start) = url.find("://").map(|at| at + 3) else {
        return url.to_owned();
    };
    let end = url[start..]
        .find(['/', '?'])
        .map_or(url.len(), |at| start + at);
    let Some(at) = url[start..end].rfind('@').map(|at| start + at) else {
        return url.to_owned();
    };
    let user = match url[start..at].split_once(':') {
        Some((user, _)) => format!("{user}:***"),
        // `redis://SECRET@host` is read as a password by some clients: mask it too.
        None => "***".to_owned(),
    };
    format!("{}{user}{}", &url[..start], &url[at..])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_is_described_without_its_password() {
        let place = |url: &str| RedisServer::open(url).unwrap().describe();
        assert_eq!(
            place("redis://127.0.0.1:6379/"),
            "Redis at redis://127.0.0.1:6379/0"
        );
        assert_eq!(
            place("redis://:hunter2@10.0.0.5/2"),
            "Redis at redis://:***@10.0.0.5:6379/2"
        );
        assert_eq!(
            place("redis://ops:hunter2@[::1]:7000"),
            "Redis at redis://ops:***@[::1]:7000/0"
        );
        assert_eq!(
            place("redis+unix:///run/redis.sock?db=4"),
            "Redis at redis+unix:///run/redis.sock?db=4"
        );
        assert_eq!(masked("redis://hunter2@host/1"), "redis://***@host/1");
        assert_eq!(
            masked("redis://host:6379/1?x=a@b"),
            "redis://host:6379/1?x=a@b"
        );
    }

    #[test]
    fn a_url_that_is_not_one_says_the_forms_it_may_take_without_its_password() {
        let refused = |url: &str| RedisServer::open(url).err().unwrap().to_string();
        assert_eq!(
            refused("http://ops:hunter2@host/"),
            "`http://ops:***@host/` is not a Redis URL: expected \
             redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], or redis+unix:///PATH[?db=DB] for a \
             Unix socket"
        );
        assert_eq!(
            refused("rediss://:hunter2@host/"),
            "`rediss://:***@host/` asks for Redis over TLS, which this server was built without; \
             expected redis://[[USER]:PASSWORD@]HOST[:PORT][/DB], or redis+unix:///PATH[?db=DB] \
             for a Unix socket"
        );
    }
}
