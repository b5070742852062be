//! The rounds of a request of protocol 2026-07-28 that asks the client questions: the answers
//! a round was given, read from the request and opened with the server's key, and what it is
//! answered with when the run stops for a question (an input-required result whose state is
//! sealed for the next round).

use std::future::Future;
use std::sync::Arc;

use serde_json::Value;

use crate::context::{Inputs, RequestStateKey, read_inputs, until_asked};
use crate::protocol::Wire;
use crate::protocol::jsonrpc::{INVALID_PARAMS, Id, Reply};

/// One round of a request of protocol 2026-07-28 that may ask the client questions
/// (input-required results): the answers it was given, and what the next round's state is sealed
/// for.
pub(super) struct Round {
    inputs: Arc<Inputs>,
    /// `<method>:<name>`: the tool or prompt asked for.
    target: String,
    arguments: Value,
}

impl Round {
    /// The round of a request to `method` for `name` with these arguments: none in the
    /// handshake era. `Err` refuses the request (-32602): a state this server did not seal, or
    /// answers that are not an object.
    pub(super) fn read(
        key: &RequestStateKey,
        wire: &Wire,
        params: &Value,
        method: &str,
        name: &str,
        arguments: &Value,
    ) -> Result<Option<Round>, String> {
        if !wire.is_stateless() {
            return Ok(None);
        }
        let target = format!("{method}:{name}");
        let inputs = read_inputs(key, params, &target, arguments)?;
        Ok(Some(Round {
            inputs: Arc::new(inputs),
            target,
            arguments: arguments.clone(),
        }))
    }

    /// The answers and questions, for the run's context.
    pub(super) fn inputs(&self) -> Arc<Inputs> {
        Arc::clone(&self.inputs)
    }

    /// Runs `run`, in `round` when the request has one, and answers with `reply` of what it
    /// made, or with the round's answer: the questions when the run stopped for them, the error
    /// of an answer that does not answer its question.
    pub(super) async fn answer<T>(
        round: Option<Round>,
        run: impl Future<Output = T>,
        key: &RequestStateKey,
        id: &Id,
        wire: &Wire,
        reply: impl FnOnce(T) -> Reply,
    ) -> Reply {
        let inputs = round.as_ref().map(Round::inputs);
        let made = until_asked(run, inputs.as_deref()).await;
        Round::conclude(round, made, key, id, wire, reply)
    }

    /// The answer to a run that `made` its output (`None`: it stopped for questions), in
    /// `round` when the request has one: `reply` of the output, or the round's answer.
    pub(super) fn conclude<T>(
        round: Option<Round>,
        made: Option<T>,
        key: &RequestStateKey,
        id: &Id,
        wire: &Wire,
        reply: impl FnOnce(T) -> Reply,
    ) -> Reply {
        if let Some(settled) = round.and_then(|r| r.settle(made.is_some(), key, id, wire)) {
            return settled;
        }
        reply(made.expect("a run is stopped only for questions, which it answers with"))
    }

    /// What the round is answered with instead of the run's result: the questions, when the
    /// run stopped for them (it did not `finish`), or the error of an answer it was given that
    /// does not answer its question. `None`: the run's result stands.
    fn settle(self, finished: bool, key: &RequestStateKey, id: &Id, wire: &Wire) -> Option<Reply> {
        if !finished {
            let members = self.inputs.required(key, &self.target, &self.arguments);
            return Some(Reply::result(id, &wire.input_required(members)));
        }
        let problem = self.inputs.malformed()?;
        Some(Reply::error(id, INVALID_PARAMS, problem))
    }
}
