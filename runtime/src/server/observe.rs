//! A request observed (feature `otel`): its span opened as it is read, attached while it is
//! handled and while its call runs, and ended with its answer, with what its session says.

use std::sync::Arc;

use opentelemetry::ContextGuard;
use opentelemetry::context::FutureExt as _;
use serde_json::Value;

use super::session::Session;
use super::step::Step;
use crate::context::Who;
use crate::handler::BoxFuture;
use crate::protocol::jsonrpc::{Id, ReplyKind};
use crate::sink::Answer;
use crate::telemetry::Observed;

/// A request of a session, observed.
pub(super) struct Request {
    observed: Observed,
    session: Arc<Session>,
}

impl Request {
    /// Opens the span of the request `id` of `session` calling `method` with `params`, from
    /// `who`.
    pub(super) fn start(
        session: &Arc<Session>,
        id: &Id,
        method: &str,
        params: &Value,
        who: &Who,
    ) -> Request {
        Request {
            observed: Observed::start(method, params, id, session.transport(), who.address),
            session: Arc::clone(session),
        }
    }

    /// Makes the span current while the request is handled: the spans made meanwhile are its
    /// children.
    pub(super) fn attach(&self) -> ContextGuard {
        self.observed.context().clone().attach()
    }

    /// What the handling said to do, ending the span with its answer: now for a reply, once it
    /// is made for a call, which runs within the span.
    pub(super) fn step(self, step: Step) -> Step {
        match step {
            Step::Reply(reply) => {
                self.finish(Some(reply.kind()));
                Step::Reply(reply)
            }
            Step::Nothing => {
                self.finish(Some(ReplyKind::Result));
                Step::Nothing
            }
            Step::Call(call) => Step::Call(self.around(call)),
            Step::Stream(call) => Step::Stream(self.around(call)),
        }
    }

    fn around(self, call: BoxFuture<Option<Answer>>) -> BoxFuture<Option<Answer>> {
        let cx = self.observed.context().clone();
        Box::pin(
            async move {
                let answer = call.await;
                self.finish(answer.as_ref().map(Answer::kind));
                answer
            }
            .with_context(cx),
        )
    }

    fn finish(self, answered: Option<ReplyKind>) {
        self.observed.finish(
            answered,
            self.session.negotiated_version(),
            self.session.id(),
        );
    }
}
