//! [`RateLimit`]: a layer that lets each caller make so many calls in a period, counted with
//! the generic cell rate algorithm (governor's), and refuses the rest with when to try again.

use std::fmt;
use std::num::NonZeroU32;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context as TaskContext, Poll};
use std::time::Duration;

use governor::clock::{Clock, DefaultClock};
use governor::state::keyed::HashMapStateStore;
use governor::{Quota, RateLimiter};
use serde_json::json;

use super::{BoxError, Call, Layer, Outcome, Refusal, Service};
use crate::context::Context;
use crate::handler::BoxFuture;

/// The JSON-RPC error code of a call refused by a rate limit: one of the codes the protocol
/// leaves to servers (-32000 to -32019), the one MCP servers use for it most.
pub const RATE_LIMITED: i64 = -32000;

/// How often to forget the callers that have their whole budget back: once every so many
/// calls, so that the callers a limiter keeps are those of the last period.
const FORGET_EVERY: u64 = 4096;

/// A limit on how often each caller calls: a [`Layer`] for
/// [`Server::layer`](crate::Server::layer), or for some tools with
/// [`Server::layer_for`](crate::Server::layer_for).
///
/// Each caller may make `calls` calls per `period`, all at once if it has not called for a
/// period (the burst, which [`burst`](RateLimit::burst) changes), and then one every
/// `period / calls`. A call past it is refused, without running, with a JSON-RPC error
/// ([`RATE_LIMITED`], -32000) that names the limit and says when to try again, in its message
/// for the model and in `data.retryAfterMs` for the client; other callers are served meanwhile.
///
/// A caller is whom the request's access token names under OAuth
/// ([`Context::principal`](crate::Context::principal)), else the address its connection comes
/// from over HTTP ([`Context::client_address`](crate::Context::client_address); behind a
/// reverse proxy, the proxy's, so that every client shares one budget there), else its session
/// (over HTTP without either), else the one client of a stdio server.
///
/// A limiter counts in the memory of its process: each replica behind a load balancer counts
/// its own calls, so that a caller whose calls are spread over `n` replicas may make up to `n`
/// times as many. Clones of one `RateLimit` share their counts (two servers of one process,
/// say).
///
/// ```no_run
/// use std::time::Duration;
/// use toolwright::pipeline::{RateLimit, Select};
///
/// fn main() -> std::process::ExitCode {
///     toolwright::server!()
///         // 120 calls a minute for each caller, whichever tools they call.
///         .layer(RateLimit::per_caller(120, Duration::from_secs(60)))
///         // And 5 a minute of each billing tool.
///         .layer_for(
///             Select::tagged("billing"),
///             RateLimit::per_caller(5, Duration::from_secs(60)).per_tool(),
///         )
///         .run()
/// }
/// ```
#[derive(Clone)]
pub struct RateLimit {
    shared: Arc<Limiter>,
}

struct Limiter {
    limiter: RateLimiter<String, HashMapStateStore<String>, DefaultClock>,
    clock: DefaultClock,
    calls: u32,
    period: Duration,
    burst: u32,
    per_tool: bool,
    checked: AtomicU64,
}

impl RateLimit {
    /// `calls` calls per `period` for each caller.
    ///
    /// # Panics
    ///
    /// When `calls` is 0 or `period` is zero: a limit that lets no call through is no limit to
    /// set.
    #[track_caller]
    pub fn per_caller(calls: u32, period: Duration) -> RateLimit {
        assert!(calls > 0, "a rate limit lets at least one call through");
        assert!(
            !period.is_zero(),
            "a rate limit's period is longer than zero"
        );
        RateLimit::with(calls, period, calls, false)
    }

    /// The same limit, of which a caller that has not called for a while may spend `calls` at
    /// once (by default as many as the period allows; at least 1).
    #[must_use]
    pub fn burst(self, calls: u32) -> RateLimit {
        let limiter = &self.shared;
        RateLimit::with(
            limiter.calls,
            limiter.period,
            calls.max(1),
            limiter.per_tool,
        )
    }

    /// The same limit, for each tool (or prompt, or resource) a caller calls apart: a caller
    /// that has spent its budget for one tool may still call another.
    #[must_use]
    pub fn per_tool(self) -> RateLimit {
        let limiter = &self.shared;
        RateLimit::with(limiter.calls, limiter.period, limiter.burst, true)
    }

    fn with(calls: u32, period: Duration, burst: u32, per_tool: bool) -> RateLimit {
        let interval = period / calls;
        let burst = NonZeroU32::new(burst).expect("the burst is at least 1");
        let quota = Quota::with_period(interval.max(Duration::from_nanos(1)))
            .expect("the interval is longer than zero")
            .allow_burst(burst);
        let clock = DefaultClock::default();
        RateLimit {
            shared: Arc::new(Limiter {
                limiter: RateLimiter::new(quota, HashMapStateStore::default(), clock.clone()),
                clock,
                calls,
                period,
                burst: burst.get(),
                per_tool,
                checked: AtomicU64::new(0),
            }),
        }
    }
}

impl Limiter {
    /// Counts `call`: `Err` with the refusal its client reads when it is one too many.
    fn check(&self, call: &Call) -> Result<(), Refusal> {
        let mut key = caller(call.context());
        if self.per_tool {
            key.push('\0');
            key.push_str(call.target());
        }
        if self.checked.fetch_add(1, Ordering::Relaxed) % FORGET_EVERY == FORGET_EVERY - 1 {
            self.limiter.retain_recent();
        }
        let Err(not_until) = self.limiter.check_key(&key) else {
            return Ok(());
        };
        #[cfg(feature = "otel")]
        crate::telemetry::refused("rate_limit", call.operation().method(), call.target());
        let wait = not_until.wait_time_from(self.clock.now());
        // Whole milliseconds, rounded up: a client that waits that long is let through.
        let wait_ms = u64::try_from(wait.as_nanos().div_ceil(1_000_000)).unwrap_or(u64::MAX);
        // Past a second, whole seconds, rounded up, for the model to read.
        let retry = match wait_ms {
            0..1000 => Duration::from_millis(wait_ms),
            _ => Duration::from_secs(wait_ms.div_ceil(1000)),
        };
        let retry = humantime::format_duration(retry);
        let each = if self.per_tool {
            format!("each caller of `{}`", call.target())
        } else {
            "each caller".to_owned()
        };
        let calls = match self.calls {
            1 => "1 call".to_owned(),
            calls => format!("{calls} calls"),
        };
        let message = format!(
            "rate limit reached: at most {calls} every {} for {each}; try again in {retry}",
            humantime::format_duration(self.period),
        );
        Err(Refusal::new(RATE_LIMITED, message).with_data(json!({
            "retryAfterMs": wait_ms,
            "limit": {
                "calls": self.calls,
                "periodMs": u64::try_from(self.period.as_millis()).unwrap_or(u64::MAX),
                "burst": self.burst,
                "perTool": self.per_tool,
            },
        })))
    }
}

/// Who a call counts against: its principal, else its address, else its session, else the
/// one client of the process.
fn caller(ctx: &Context) -> String {
    if let Some(principal) = ctx.principal() {
        return format!("principal\0{}", principal.owner_key());
    }
    if let Some(address) = ctx.client_address() {
        return format!("address\0{address}");
    }
    match ctx.session_id() {
        Some(session) => format!("session\0{session}"),
        None => "local".to_owned(),
    }
}

impl fmt::Debug for RateLimit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let limiter = &self.shared;
        f.debug_struct("RateLimit")
            .field("calls", &limiter.calls)
            .field("period", &limiter.period)
            .field("burst", &limiter.burst)
            .field("per_tool", &limiter.per_tool)
            .finish_non_exhaustive()
    }
}

impl<S> Layer<S> for RateLimit {
    type Service = RateLimited<S>;

    fn layer(&self, next: S) -> RateLimited<S> {
        RateLimited {
            next,
            limit: self.clone(),
        }
    }
}

/// The rest of the pipeline behind a [`RateLimit`].
#[derive(Clone, Debug)]
pub struct RateLimited<S> {
    next: S,
    limit: RateLimit,
}

impl<S> Service<Call> for RateLimited<S>
where
    S: Service<Call, Response = Outcome, Error = BoxError>,
    S::Future: Send + 'static,
{
    type Response = Outcome;
    type Error = BoxError;
    type Future = BoxFuture<Result<Outcome, BoxError>>;

    fn poll_ready(&mut self, cx: &mut TaskContext<'_>) -> Poll<Result<(), BoxError>> {
        self.next.poll_ready(cx)
    }

    fn call(&mut self, call: Call) -> Self::Future {
        match self.limit.shared.check(&call) {
            Ok(()) => Box::pin(self.next.call(call)),
            Err(refused) => Box::pin(async move { Err(refused.into()) }),
        }
    }
}
