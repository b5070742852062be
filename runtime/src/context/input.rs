//! Input-required results (SEP-2322), protocol 2026-07-28's way for a server to ask the client
//! for something while it answers a request: instead of sending the client a request, it
//! answers with the questions (`inputRequests`, each under a key) and a `requestState`, and the
//! client asks again with the answers (`inputResponses`, by key) and that state.
//!
//! A tool (or a prompt) is run again from the start for each round, with every answer given so
//! far: those of earlier rounds travel in the state, sealed with the server's key and bound to
//! the tool and its arguments, for an hour, so that a client cannot change them; those of this
//! round are the client's word, as any input is. A question the run asks that has an answer is
//! answered at once; one that has none is noted, and as soon as the run waits with a question
//! unanswered, it is stopped and the client is asked every question it noted. The state is
//! signed, not encrypted: the client can read the answers it gave.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Mutex, OnceLock};
use std::task::{Poll, Waker};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD as BASE64;
use hmac::{Hmac, Mac};
use serde_json::{Map, Value, json};
use sha2::Sha256;
use tokio_util::sync::CancellationToken;

/// How long the state of a round holds: a client answers within it.
const STATE_LIFETIME: Duration = Duration::from_secs(60 * 60);

/// The key that seals the states a server hands out: random for each process.
#[derive(Clone)]
pub(crate) struct RequestStateKey([u8; 32]);

impl RequestStateKey {
    /// A key from a secret the replicas of a server share, so that any of them opens the
    /// state another sealed.
    pub(crate) fn from_secret(secret: &[u8]) -> RequestStateKey {
        use sha2::Digest as _;
        RequestStateKey(Sha256::digest(secret).into())
    }

    /// A key from the system's randomness.
    pub(crate) fn random() -> RequestStateKey {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).expect("the system gives randomness");
        RequestStateKey(key)
    }

    fn mac(&self, payload: &[u8]) -> Hmac<Sha256> {
        let mut mac = Hmac::<Sha256>::new_from_slice(&self.0).expect("HMAC takes any key");
        mac.update(payload);
        mac
    }

    /// The state that carries `answers` to the next round of `target` (`tools/call:<name>`,
    /// `prompts/get:<name>`) with these arguments.
    pub(crate) fn seal(
        &self,
        target: &str,
        arguments: &Value,
        answers: &Map<String, Value>,
    ) -> String {
        let payload = json!({
            "target": target,
            "arguments": arguments_digest(arguments),
            "issued": now_secs(),
            "answers": answers,
        });
        let payload = serde_json::to_vec(&payload).expect("a JSON value serialises");
        let tag = self.mac(&payload).finalize().into_bytes();
        format!("{}.{}", BASE64.encode(&payload), BASE64.encode(tag))
    }

    /// The answers a state carries, when this server sealed it for this target and these
    /// arguments, and it has not expired; `Err` says why it is refused.
    pub(crate) fn open(
        &self,
        state: &str,
        target: &str,
        arguments: &Value,
    ) -> Result<Map<String, Value>, String> {
        let tampered = || {
            "`requestState` failed its integrity check: it is not one this server \
                           handed out, or it was changed"
                .to_owned()
        };
        let (payload, tag) = state.split_once('.').ok_or_else(tampered)?;
        let payload = BASE64.decode(payload).map_err(|_| tampered())?;
        let tag = BASE64.decode(tag).map_err(|_| tampered())?;
        self.mac(&payload)
            .verify_slice(&tag)
            .map_err(|_| tampered())?;
        let payload: Value = serde_json::from_slice(&payload).map_err(|_| tampered())?;
        if payload["target"] != target || payload["arguments"] != arguments_digest(arguments) {
            return Err(format!(
                "`requestState` was handed out for another request than this `{target}` with \
                 these arguments"
            ));
        }
        let issued = payload["issued"].as_u64().unwrap_or(0);
        if now_secs().saturating_sub(issued) > STATE_LIFETIME.as_secs() {
            return Err(format!(
                "`requestState` has expired: it holds for {} minutes; send the request again \
                 without it",
                STATE_LIFETIME.as_secs() / 60
            ));
        }
        match payload.get("answers") {
            Some(Value::Object(answers)) => Ok(answers.clone()),
            _ => Err(tampered()),
        }
    }
}

impl std::fmt::Debug for RequestStateKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RequestStateKey(..)")
    }
}

fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// The SHA-256 of the arguments' JSON, which binds a state to them.
fn arguments_digest(arguments: &Value) -> String {
    crate::manifest::sha256_hex(&serde_json::to_vec(arguments).expect("a JSON value serialises"))
}

/// One request's questions and answers, under protocol 2026-07-28.
#[derive(Debug, Default)]
pub(crate) struct Inputs {
    /// The answers given so far: by the client in this request, and in earlier rounds.
    answers: Map<String, Value>,
    /// The questions this run asked that have no answer (sent by key, in the keys' order).
    asked: Mutex<Vec<(String, Value)>>,
    /// The questions this run asked that have one: what the next round's state carries.
    used: Mutex<BTreeSet<String>>,
    /// Numbers the questions asked without a key of their own.
    next: AtomicU32,
    /// An answer that is not what its question returns: the request's error.
    malformed: OnceLock<String>,
    /// Wakes the run's task when a question is asked from another (a blocking tool's thread).
    waker: Mutex<Option<Waker>>,
    /// Cancelled once the run is stopped for its questions: one still waiting for an answer
    /// (on another thread) gives up then.
    settled: CancellationToken,
}

/// What a question gets: its answer, or none yet (the run is stopped and the client asked).
pub(crate) enum Answered {
    Answer(Value),
    Asked,
    /// The client's answer is not what the method returns; the request fails with this.
    Malformed(String),
}

impl Inputs {
    /// A request's inputs: the answers of its state and of its `inputResponses`.
    pub(crate) fn new(answers: Map<String, Value>) -> Inputs {
        Inputs {
            answers,
            ..Inputs::default()
        }
    }

    /// The key of the next question asked without one: its method's short name and its place.
    pub(crate) fn next_key(&self, method: &str) -> String {
        let n = self.next.fetch_add(1, Ordering::Relaxed) + 1;
        let short = match method {
            "elicitation/create" => "elicit",
            "sampling/createMessage" => "sample",
            "roots/list" => "roots",
            other => other,
        };
        format!("{short}-{n}")
    }

    /// The answer to the question `key` (`method` with `params`), or the question noted for
    /// the client.
    pub(crate) fn ask(&self, key: &str, method: &str, params: Value) -> Answered {
        match self.answers.get(key) {
            Some(answer) => match well_formed(method, answer, &params) {
                Ok(()) => {
                    let mut used = self.used.lock().unwrap_or_else(|e| e.into_inner());
                    used.insert(key.to_owned());
                    Answered::Answer(answer.clone())
                }
                Err(problem) => {
                    let message =
                        format!("input response `{key}` does not answer `{method}`: {problem}");
                    let _ = self.malformed.set(message.clone());
                    Answered::Malformed(message)
                }
            },
            None => {
                let mut request = json!({ "method": method });
                if method != "roots/list" || params.as_object().is_some_and(|p| !p.is_empty()) {
                    request["params"] = params;
                }
                let mut asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
                if !asked.iter().any(|(k, _)| k == key) {
                    asked.push((key.to_owned(), request));
                }
                drop(asked);
                if let Some(waker) = &*self.waker.lock().unwrap_or_else(|e| e.into_inner()) {
                    waker.wake_by_ref();
                }
                Answered::Asked
            }
        }
    }

    /// Completes once the run is stopped for its questions.
    pub(crate) async fn settled(&self) {
        self.settled.cancelled().await;
    }

    /// Whether the run asked a question that has no answer.
    pub(crate) fn waiting(&self) -> bool {
        !self
            .asked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .is_empty()
    }

    /// A malformed answer the run was given, if any.
    pub(crate) fn malformed(&self) -> Option<&str> {
        self.malformed.get().map(String::as_str)
    }

    /// The `InputRequiredResult` members: the questions, and the state that carries every
    /// answer given so far to the next round.
    pub(crate) fn required(
        &self,
        key: &RequestStateKey,
        target: &str,
        arguments: &Value,
    ) -> Map<String, Value> {
        let asked = self.asked.lock().unwrap_or_else(|e| e.into_inner());
        let requests: Map<String, Value> = asked.iter().cloned().collect();
        let used = self.used.lock().unwrap_or_else(|e| e.into_inner());
        // Only the answers the run took: what the client sent beside them is dropped.
        let answers: Map<String, Value> = self
            .answers
            .iter()
            .filter(|(question, _)| used.contains(*question))
            .map(|(question, answer)| (question.clone(), answer.clone()))
            .collect();
        let mut result = Map::new();
        result.insert("resultType".to_owned(), json!("input_required"));
        result.insert("inputRequests".to_owned(), Value::Object(requests));
        result.insert(
            "requestState".to_owned(),
            json!(key.seal(target, arguments, &answers)),
        );
        result
    }
}

/// Runs `future` to its end, or, with `inputs`, until it waits with a question unanswered
/// (`None`): the run is then stopped, and the client asked.
pub(crate) async fn until_asked<F: Future>(
    future: F,
    inputs: Option<&Inputs>,
) -> Option<F::Output> {
    let Some(inputs) = inputs else {
        return Some(future.await);
    };
    let mut future = std::pin::pin!(future);
    std::future::poll_fn(|cx| {
        *inputs.waker.lock().unwrap_or_else(|e| e.into_inner()) = Some(cx.waker().clone());
        match future.as_mut().poll(cx) {
            Poll::Ready(output) => Poll::Ready(Some(output)),
            Poll::Pending if inputs.waiting() => {
                inputs.settled.cancel();
                Poll::Ready(None)
            }
            Poll::Pending => Poll::Pending,
        }
    })
    .await
}

/// The inputs of a request under protocol 2026-07-28 to `target`: the answers its
/// `requestState` carries, checked, and those of its `inputResponses`. `Err` is the request's
/// error (-32602).
pub(crate) fn read(
    key: &RequestStateKey,
    params: &Value,
    target: &str,
    arguments: &Value,
) -> Result<Inputs, String> {
    let mut answers = match params.get("requestState") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::String(state)) => key.open(state, target, arguments)?,
        Some(other) => return Err(format!("`requestState` must be a string, not {other}")),
    };
    // The sealed answers of earlier rounds stand: a client cannot answer those again otherwise.
    for (question, answer) in responses(params)? {
        answers.entry(question).or_insert(answer);
    }
    Ok(Inputs::new(answers))
}

/// Whether `answer` is what `method` returns: an elicitation's `action` (and, accepted, a
/// `content` object of the requested properties), a completion's `role` and `content`, the
/// roots' list.
fn well_formed(method: &str, answer: &Value, params: &Value) -> Result<(), String> {
    let Some(answer) = answer.as_object() else {
        return Err(format!("it is {answer}, not an object"));
    };
    match method {
        "elicitation/create" => match answer.get("action").and_then(Value::as_str) {
            Some("accept") => match answer.get("content") {
                Some(Value::Object(content)) => {
                    let required = params.pointer("/requestedSchema/required");
                    let missing = required
                        .and_then(Value::as_array)
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str)
                        .find(|name| !content.contains_key(*name));
                    match missing {
                        Some(name) => Err(format!("its `content` lacks the required `{name}`")),
                        None => Ok(()),
                    }
                }
                _ => Err("an accepted elicitation needs a `content` object".to_owned()),
            },
            Some("decline" | "cancel") => Ok(()),
            _ => Err("its `action` must be `accept`, `decline` or `cancel`".to_owned()),
        },
        "sampling/createMessage" => {
            if answer.get("role").and_then(Value::as_str).is_none() {
                return Err("a completion needs a `role`".to_owned());
            }
            match answer.get("content") {
                Some(Value::Object(_) | Value::Array(_)) => Ok(()),
                _ => Err("a completion needs a `content`".to_owned()),
            }
        }
        "roots/list" => match answer.get("roots") {
            Some(Value::Array(roots))
                if roots
                    .iter()
                    .all(|r| r.get("uri").is_some_and(Value::is_string)) =>
            {
                Ok(())
            }
            _ => Err("it needs `roots`, a list of objects with a `uri`".to_owned()),
        },
        _ => Ok(()),
    }
}

/// The answers a request brings, from its `inputResponses`: `None` or `null` is none, anything
/// but an object of answers is refused.
fn responses(params: &Value) -> Result<Map<String, Value>, String> {
    match params.get("inputResponses") {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(answers)) => Ok(answers.clone()),
        Some(other) => Err(format!(
            "`inputResponses` must be an object of answers by key, not {other}"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_opens_only_for_its_request_unchanged() {
        let key = RequestStateKey::random();
        let arguments = json!({"n": 1});
        let mut answers = Map::new();
        answers.insert(
            "name".into(),
            json!({"action": "accept", "content": {"name": "Ada"}}),
        );
        let state = key.seal("tools/call:greet", &arguments, &answers);
        assert_eq!(
            key.open(&state, "tools/call:greet", &arguments).unwrap(),
            answers
        );
        let tampered = format!("{state}-TAMPERED");
        assert!(
            key.open(&tampered, "tools/call:greet", &arguments)
                .unwrap_err()
                .contains("integrity")
        );
        assert!(
            RequestStateKey::random()
                .open(&state, "tools/call:greet", &arguments)
                .is_err()
        );
        assert!(
            key.open(&state, "tools/call:other", &arguments)
                .unwrap_err()
                .contains("another request")
        );
        assert!(
            key.open(&state, "tools/call:greet", &json!({"n": 2}))
                .is_err()
        );
    }

    #[test]
    fn answers_are_checked_against_their_question() {
        let schema = json!({"requestedSchema": {"type": "object", "required": ["name"]}});
        let elicit = |answer: Value| well_formed("elicitation/create", &answer, &schema);
        assert!(elicit(json!({"action": "accept", "content": {"name": "Ada"}})).is_ok());
        assert!(elicit(json!({"action": "decline"})).is_ok());
        assert_eq!(
            elicit(json!(12345)).unwrap_err(),
            "it is 12345, not an object"
        );
        assert_eq!(
            elicit(json!({"action": "accept", "content": {}})).unwrap_err(),
            "its `content` lacks the required `name`"
        );
        assert!(
            well_formed(
                "roots/list",
                &json!({"roots": [{"uri": "file:///"}]}),
                &json!({})
            )
            .is_ok()
        );
        assert!(
            well_formed(
                "sampling/createMessage",
                &json!({"content": {}}),
                &json!({})
            )
            .is_err()
        );
    }
}
