//! Sessions in Redis, shared by every replica that names the same server and prefix.

use std::fmt;
use std::time::Duration;

use redis::{AsyncCommands, SetExpiry, SetOptions};

use futures_util::StreamExt;
use tokio::sync::mpsc;

use super::{Messages, SessionStore, StoreError, StoreFuture, StoredEvents};

mod server;

pub(crate) use server::{DEFAULT_PREFIX, RedisServer, alive_key, millis};

/// An entry of a Redis stream: its id, and its fields and values in turn.
type StreamEntry = (String, Vec<Vec<u8>>);

/// How often a reader waiting for a stream's next event asks again.
const POLL: Duration = Duration::from_millis(100);

/// The most events one stream keeps (about: Redis trims whole nodes).
const MAX_EVENTS: usize = 1024;

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
    redis: RedisServer,
    prefix: String,
}

impl RedisStore {
    /// A store on the Redis server at `url` (`redis://[[USER]:PASSWORD@]HOST[:PORT][/DB]`,
    /// or `redis+unix:///PATH[?db=DB]` for a Unix socket), with keys under `toolwright:`.
    /// Nothing is connected until the server starts, which [pings](SessionStore::ping) it.
    ///
    /// # Errors
    ///
    /// When `url` is not a Redis URL: the error says the forms it may take, with any password
    /// in it masked.
    pub fn new(url: &str) -> Result<RedisStore, StoreError> {
        Ok(RedisStore {
            redis: RedisServer::open(url)?,
            prefix: DEFAULT_PREFIX.to_owned(),
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
        self.redis.set_timeout(timeout);
        self
    }

    /// The channel of the process named `to`, or of every process.
    fn channel(&self, to: Option<&str>) -> String {
        match to {
            Some(to) => format!("{}replica:{to}", self.prefix),
            None => format!("{}replicas", self.prefix),
        }
    }

    /// The keys of a stream: its origin, and its events.
    fn stream_keys(&self, session: &str, stream: u64) -> (String, String) {
        (
            format!("{}stream:{session}:{stream}", self.prefix),
            format!("{}events:{session}:{stream}", self.prefix),
        )
    }

    fn key(&self, id: &str) -> String {
        format!("{}session:{id}", self.prefix)
    }
}

impl fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut f = f.debug_struct("RedisStore");
        self.redis.debug_fields(&mut f);
        f.field("prefix", &self.prefix).finish()
    }
}

/// Milliseconds for `PEXPIRE`.
fn expiry(lifetime: Duration) -> i64 {
    i64::try_from(millis(lifetime)).unwrap_or(i64::MAX)
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
        Box::pin(self.redis.run(async move |mut redis| {
            let options = SetOptions::default().with_expiration(SetExpiry::EX(seconds(lifetime)));
            redis.set_options(self.key(id), record, options).await
        }))
    }

    fn load<'a>(&'a self, id: &'a str, lifetime: Duration) -> StoreFuture<'a, Option<Vec<u8>>> {
        Box::pin(self.redis.run(async move |mut redis| {
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
        Box::pin(self.redis.run(async move |mut redis| {
            // Only if it still exists (`XX`): a session removed meanwhile stays removed.
            let options = SetOptions::default()
                .conditional_set(redis::ExistenceCheck::XX)
                .with_expiration(SetExpiry::EX(seconds(lifetime)));
            let written: Option<String> = redis.set_options(self.key(id), record, options).await?;
            Ok(written.is_some())
        }))
    }

    fn open_stream<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        origin: &'a [u8],
        lifetime: Duration,
    ) -> StoreFuture<'a, ()> {
        let (meta, events) = self.stream_keys(session, stream);
        Box::pin(self.redis.run(async move |mut redis| {
            redis::pipe()
                .del(&events)
                .ignore()
                .hset(&meta, "origin", origin)
                .ignore()
                .pexpire(&meta, expiry(lifetime))
                .ignore()
                .query_async::<()>(&mut redis)
                .await
        }))
    }

    fn append_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        first: u64,
        events: &'a [Vec<u8>],
        ended: bool,
        lifetime: Duration,
    ) -> StoreFuture<'a, ()> {
        let (meta, key) = self.stream_keys(session, stream);
        Box::pin(self.redis.run(async move |mut redis| {
            let mut pipe = redis::pipe();
            // Event n is entry `n+1-0`: Redis refuses the id 0-0. The end takes the id the
            // next event would have had.
            let entries = events
                .iter()
                .map(|event| ("e", event.as_slice()))
                .chain(ended.then_some(("end", &b"1"[..])));
            for (n, (field, value)) in (first..).zip(entries) {
                pipe.cmd("XADD")
                    .arg(&key)
                    .arg("MAXLEN")
                    .arg("~")
                    .arg(MAX_EVENTS)
                    .arg(format!("{}-0", n + 1))
                    .arg(field)
                    .arg(value)
                    .ignore();
            }
            pipe.pexpire(&key, expiry(lifetime))
                .ignore()
                .pexpire(&meta, expiry(lifetime))
                .ignore()
                .query_async::<()>(&mut redis)
                .await
        }))
    }

    fn read_events<'a>(
        &'a self,
        session: &'a str,
        stream: u64,
        from: u64,
        wait: Duration,
    ) -> StoreFuture<'a, Option<StoredEvents>> {
        let (meta, key) = self.stream_keys(session, stream);
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + wait;
            loop {
                let (origin, entries): (Option<Vec<u8>>, Vec<StreamEntry>) = self
                    .redis
                    .run(async |mut redis| {
                        redis::pipe()
                            .hget(&meta, "origin")
                            .cmd("XRANGE")
                            .arg(&key)
                            .arg(format!("{}-0", from + 1))
                            .arg("+")
                            .arg("COUNT")
                            .arg(512)
                            .query_async(&mut redis)
                            .await
                    })
                    .await?;
                let Some(origin) = origin else {
                    return Ok(None);
                };
                let mut events = Vec::new();
                let mut ended = false;
                for (id, fields) in entries {
                    let n = id
                        .split_once('-')
                        .and_then(|(n, _)| n.parse::<u64>().ok())
                        .and_then(|n| n.checked_sub(1))
                        .ok_or_else(|| StoreError::new(format!("an event id not ours: {id}")))?;
                    match fields.as_slice() {
                        [field, value] if field == b"e" => events.push((n, value.clone())),
                        [field, _] if field == b"end" => ended = true,
                        _ => return Err(StoreError::new("an event entry not ours")),
                    }
                }
                if !events.is_empty() || ended || tokio::time::Instant::now() >= deadline {
                    return Ok(Some(StoredEvents::new(origin, events, ended)));
                }
                tokio::time::sleep(POLL).await;
            }
        })
    }

    fn forget_stream<'a>(&'a self, session: &'a str, stream: u64) -> StoreFuture<'a, ()> {
        let (meta, events) = self.stream_keys(session, stream);
        Box::pin(
            self.redis
                .run(async move |mut redis| redis.del(&[meta, events]).await),
        )
    }

    fn heartbeat<'a>(&'a self, me: &'a str, ttl: Duration) -> StoreFuture<'a, ()> {
        let key = alive_key(&self.prefix, me);
        Box::pin(self.redis.run(async move |mut redis| {
            let options = SetOptions::default().with_expiration(SetExpiry::PX(millis(ttl)));
            redis.set_options(&key, 1, options).await
        }))
    }

    fn alive<'a>(&'a self, replica: &'a str) -> StoreFuture<'a, bool> {
        let key = alive_key(&self.prefix, replica);
        Box::pin(
            self.redis
                .run(async move |mut redis| redis.exists(&key).await),
        )
    }

    fn publish<'a>(&'a self, to: Option<&'a str>, message: &'a [u8]) -> StoreFuture<'a, ()> {
        Box::pin(self.redis.run(async move |mut redis| {
            let _listeners: u64 = redis.publish(self.channel(to), message).await?;
            Ok(())
        }))
    }

    fn messages(&self, me: &str) -> Messages {
        let (sender, mut receiver) = mpsc::unbounded_channel();
        let client = self.redis.client().clone();
        let channels = [self.channel(Some(me)), self.channel(None)];
        let timeout = self.redis.timeout();
        let place = self.describe();
        tokio::spawn(async move {
            // Listens until the stream is dropped, again after each failure. An outage is said
            // once as it begins and once as it ends; the attempts between wait longer and
            // longer, up to `RETRY_AT_MOST`.
            let mut outage = Outage::default();
            while !sender.is_closed() {
                let listening = async {
                    let mut pubsub = client.get_async_pubsub().await?;
                    for channel in &channels {
                        pubsub.subscribe(channel).await?;
                    }
                    Ok::<_, redis::RedisError>(pubsub)
                };
                let why = match tokio::time::timeout(timeout, listening).await {
                    Ok(Ok(pubsub)) => {
                        outage.over(&place);
                        let mut messages = pubsub.into_on_message();
                        loop {
                            tokio::select! {
                                message = messages.next() => match message {
                                    Some(message) => {
                                        let _ = sender.send(message.get_payload_bytes().to_vec());
                                    }
                                    None => break,
                                },
                                () = sender.closed() => return,
                            }
                        }
                        "the connection closed".to_owned()
                    }
                    Ok(Err(err)) => err.to_string(),
                    Err(_) => format!("no answer within {timeout:?}"),
                };
                tokio::time::sleep(outage.failed(&place, &why)).await;
            }
        });
        Box::pin(futures_util::stream::poll_fn(move |cx| {
            receiver.poll_recv(cx)
        }))
    }

    fn remove<'a>(&'a self, id: &'a str) -> StoreFuture<'a, bool> {
        Box::pin(self.redis.run(async move |mut redis| {
            let removed: u64 = redis.del(self.key(id)).await?;
            Ok(removed > 0)
        }))
    }

    fn describe(&self) -> String {
        self.redis.describe()
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(
            self.redis
                .run(async |mut redis| redis::cmd("PING").query_async::<()>(&mut redis).await),
        )
    }
}

/// The longest wait between two attempts to listen for the store's messages.
const RETRY_AT_MOST: Duration = Duration::from_secs(10);

/// The first wait after a failure to listen.
const RETRY_FIRST: Duration = Duration::from_millis(500);

/// Whether listening for the store's messages fails, and how long to wait before trying again.
#[derive(Default)]
struct Outage {
    /// The wait before the next attempt, while listening fails.
    wait: Option<Duration>,
}

impl Outage {
    /// Listening failed: the first failure of an outage is said, with what it means; the wait
    /// before the next attempt doubles each time, up to [`RETRY_AT_MOST`].
    fn failed(&mut self, place: &str, why: &str) -> Duration {
        let wait = match self.wait {
            None => {
                tracing::warn!(
                    "cannot listen for the store's messages from {place}: {why}; until it can, \
                     a client's answer to a call on this replica that reaches another one, and \
                     a cancellation, are lost. Trying again every {}s at most, saying so once \
                     it listens",
                    RETRY_AT_MOST.as_secs()
                );
                RETRY_FIRST
            }
            Some(wait) => {
                tracing::debug!("still cannot listen for the store's messages: {why}");
                (wait * 2).min(RETRY_AT_MOST)
            }
        };
        self.wait = Some(wait);
        wait
    }

    /// Listening again: said if it had failed.
    fn over(&mut self, place: &str) {
        if self.wait.take().is_some() {
            tracing::info!("listening for the store's messages from {place} again");
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use super::*;

    /// What the warnings and notes of `f` say, one line each, without times.
    fn said(f: impl FnOnce()) -> Vec<String> {
        #[derive(Clone, Default)]
        struct Lines(Arc<Mutex<Vec<u8>>>);
        impl std::io::Write for Lines {
            fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
                self.0.lock().unwrap().extend_from_slice(bytes);
                Ok(bytes.len())
            }
            fn flush(&mut self) -> std::io::Result<()> {
                Ok(())
            }
        }
        let lines = Lines::default();
        let writer = lines.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_max_level(tracing::Level::INFO)
            .without_time()
            .with_target(false)
            .with_ansi(false)
            .with_writer(move || writer.clone())
            .finish();
        tracing::subscriber::with_default(subscriber, f);
        let text = String::from_utf8(lines.0.lock().unwrap().clone()).unwrap();
        text.lines().map(|line| line.trim().to_owned()).collect()
    }

    #[test]
    fn an_outage_is_said_once_as_it_begins_and_once_as_it_ends() {
        let place = "Redis at redis://127.0.0.1:6379/0";
        let mut waits = Vec::new();
        let lines = said(|| {
            let mut outage = Outage::default();
            for _ in 0..8 {
                waits.push(outage.failed(place, "Connection refused (os error 111)"));
            }
            outage.over(place);
            outage.over(place);
            waits.push(outage.failed(place, "the connection closed"));
        });
        let ms = |ms: u64| Duration::from_millis(ms);
        assert_eq!(
            waits,
            [
                ms(500),
                ms(1000),
                ms(2000),
                ms(4000),
                ms(8000),
                ms(10_000),
                ms(10_000),
                ms(10_000),
                ms(500),
            ]
        );
        assert_eq!(
            lines,
            [
                format!(
                    "WARN cannot listen for the store's messages from {place}: Connection \
                     refused (os error 111); until it can, a client's answer to a call on this \
                     replica that reaches another one, and a cancellation, are lost. Trying \
                     again every 10s at most, saying so once it listens"
                ),
                format!("INFO listening for the store's messages from {place} again"),
                format!(
                    "WARN cannot listen for the store's messages from {place}: the connection \
                     closed; until it can, a client's answer to a call on this replica that \
                     reaches another one, and a cancellation, are lost. Trying again every 10s \
                     at most, saying so once it listens"
                ),
            ]
        );
    }
}
