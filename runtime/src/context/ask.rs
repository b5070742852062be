//! What a tool asks the client, typed as the protocol has it: a completion of its model
//! ([`CreateMessage`] → [`Sampled`]), input from the user ([`Elicitation`] → [`Elicited`]), and
//! the roots it shares ([`Root`]). In the handshake era each is a request to the client; under
//! protocol 2026-07-28, a question of an input-required result (see [`Keyed`]).

use std::fmt;

use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::input::Answered;
use super::{ClientRequestError, Context, Peer};
use crate::content::{Content, Role};
use crate::tasks::{Job, Phase};

/// A request to the client, and the capability the client must have declared for it.
#[derive(Clone, Copy)]
struct Asked {
    method: &'static str,
    capability: &'static str,
}

const SAMPLING: Asked = Asked {
    method: "sampling/createMessage",
    capability: "sampling",
};

const ELICITATION: Asked = Asked {
    method: "elicitation/create",
    capability: "elicitation",
};

const ROOTS: Asked = Asked {
    method: "roots/list",
    capability: "roots",
};

/// What a tool asks the client's model to continue (`sampling/createMessage`): the conversation
/// so far, the longest answer it takes, and how to answer.
///
/// ```
/// use toolwright::context::CreateMessage;
///
/// let request = CreateMessage::new(200)
///     .system_prompt("You answer in one sentence.")
///     .user("What is the capital of France?")
///     .temperature(0.2);
/// # let _ = request;
/// ```
#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessage {
    messages: Vec<SamplingMessage>,
    max_tokens: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    system_prompt: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    temperature: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    stop_sequences: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    model_preferences: Option<Value>,
}

/// One message of the conversation a [`CreateMessage`] carries.
#[derive(Clone, Debug, Serialize)]
struct SamplingMessage {
    role: Role,
    content: Content,
}

impl CreateMessage {
    /// A request for an answer of at most `max_tokens` tokens, with no message yet.
    pub fn new(max_tokens: u32) -> CreateMessage {
        CreateMessage {
            messages: Vec::new(),
            max_tokens,
            system_prompt: None,
            temperature: None,
            stop_sequences: Vec::new(),
            model_preferences: None,
        }
    }

    /// Adds a message of the user: text, an image or audio.
    #[must_use]
    pub fn user(self, content: impl Into<Content>) -> CreateMessage {
        self.message(Role::User, content)
    }

    /// Adds a message of the model, earlier in the conversation.
    #[must_use]
    pub fn assistant(self, content: impl Into<Content>) -> CreateMessage {
        self.message(Role::Assistant, content)
    }

    /// Adds a message of `role`.
    #[must_use]
    pub fn message(mut self, role: Role, content: impl Into<Content>) -> CreateMessage {
        self.messages.push(SamplingMessage {
            role,
            content: content.into(),
        });
        self
    }

    /// The system prompt the client may use (`systemPrompt`).
    #[must_use]
    pub fn system_prompt(mut self, prompt: impl Into<String>) -> CreateMessage {
        self.system_prompt = Some(prompt.into());
        self
    }

    /// How random the answer may be (`temperature`).
    #[must_use]
    pub fn temperature(mut self, temperature: f64) -> CreateMessage {
        self.temperature = Some(temperature);
        self
    }

    /// A sequence that ends the answer (`stopSequences`); each call adds one.
    #[must_use]
    pub fn stop_sequence(mut self, sequence: impl Into<String>) -> CreateMessage {
        self.stop_sequences.push(sequence.into());
        self
    }

    /// Which model the server would like (`modelPreferences`: `hints` by name, and the
    /// `costPriority`, `speedPriority` and `intelligencePriority` between 0 and 1), as the
    /// protocol has them; the client chooses.
    #[must_use]
    pub fn model_preferences(mut self, preferences: Value) -> CreateMessage {
        self.model_preferences = Some(preferences);
        self
    }
}

/// The client's answer to a [`CreateMessage`]: what its model said, and which model said it.
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Sampled {
    #[serde(default = "assistant")]
    role: Role,
    #[serde(default)]
    content: Value,
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    stop_reason: Option<String>,
}

fn assistant() -> Role {
    Role::Assistant
}

impl Sampled {
    /// Who said it: the model, as a rule.
    pub fn role(&self) -> Role {
        self.role
    }

    /// What was said: one content block, or since protocol 2025-11-25 a list of them, as the
    /// client sent them.
    pub fn content(&self) -> &Value {
        &self.content
    }

    /// The text of its text blocks, joined; `None` when it has none.
    pub fn text(&self) -> Option<String> {
        let blocks = match &self.content {
            Value::Array(blocks) => blocks.iter().collect(),
            Value::Null => Vec::new(),
            block => vec![block],
        };
        let texts: Vec<&str> = blocks
            .into_iter()
            .filter(|block| block["type"] == "text")
            .filter_map(|block| block["text"].as_str())
            .collect();
        (!texts.is_empty()).then(|| texts.concat())
    }

    /// The model that answered, as the client names it.
    pub fn model(&self) -> Option<&str> {
        self.model.as_deref()
    }

    /// Why the model stopped (`endTurn`, `stopSequence`, `maxTokens`, ...).
    pub fn stop_reason(&self) -> Option<&str> {
        self.stop_reason.as_deref()
    }
}

/// What a tool asks the user through the client (`elicitation/create`): a message, and a form of
/// primitive fields to fill in (`requestedSchema`, a flat object schema: strings, numbers,
/// integers, booleans and enums).
///
/// ```
/// use schemars::JsonSchema;
/// use serde::Deserialize;
/// use toolwright::context::Elicitation;
///
/// #[derive(Deserialize, JsonSchema)]
/// struct Contact {
///     /// Your name.
///     name: String,
///     /// Whether we may write to you.
///     newsletter: bool,
/// }
///
/// let request = Elicitation::of::<Contact>("Who are you?");
/// # let _ = request;
/// ```
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Elicitation {
    message: String,
    requested_schema: Value,
}

impl Elicitation {
    /// Asks `message` with a form of the fields of `T`, whose schema the server derives as it
    /// derives a tool's (inlined, without a `$schema`); read the answer with
    /// [`Elicited::content_as`].
    pub fn of<T: JsonSchema>(message: impl Into<String>) -> Elicitation {
        Elicitation::with_schema(message, crate::schema::form::<T>())
    }

    /// Asks `message` with this form, a flat object schema written by hand, sent as written.
    pub fn with_schema(message: impl Into<String>, requested_schema: Value) -> Elicitation {
        Elicitation {
            message: message.into(),
            requested_schema,
        }
    }
}

/// The user's answer to an [`Elicitation`]: what they did, and what they filled in.
#[derive(Clone, Debug, PartialEq, Deserialize)]
pub struct Elicited {
    action: ElicitAction,
    #[serde(default)]
    content: Option<Map<String, Value>>,
}

/// What the user did with an [`Elicitation`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum ElicitAction {
    /// They filled in the form and sent it.
    Accept,
    /// They said no.
    Decline,
    /// They closed it without choosing.
    Cancel,
}

impl ElicitAction {
    /// Its name on the wire: `accept`, `decline` or `cancel`.
    pub fn as_str(self) -> &'static str {
        match self {
            ElicitAction::Accept => "accept",
            ElicitAction::Decline => "decline",
            ElicitAction::Cancel => "cancel",
        }
    }
}

impl fmt::Display for ElicitAction {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Elicited {
    /// What the user did.
    pub fn action(&self) -> ElicitAction {
        self.action
    }

    /// What they filled in, when they accepted.
    pub fn content(&self) -> Option<&Map<String, Value>> {
        self.content.as_ref()
    }

    /// What they filled in, read as `T` (the type the form was made of, with
    /// [`Elicitation::of`]); `None` when they did not accept.
    pub fn content_as<T: DeserializeOwned>(&self) -> Result<Option<T>, ClientRequestError> {
        match (&self.action, &self.content) {
            (ElicitAction::Accept, Some(content)) => {
                serde_json::from_value(Value::Object(content.clone()))
                    .map(Some)
                    .map_err(|err| ClientRequestError::InvalidResult {
                        method: ELICITATION.method,
                        problem: format!("its content does not fit the form: {err}"),
                    })
            }
            _ => Ok(None),
        }
    }
}

/// A root the client shares: a folder or file the user works in.
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Root {
    /// Its URI, `file://` as a rule.
    pub uri: String,
    /// A name to show for it.
    #[serde(default)]
    pub name: Option<String>,
}

/// The result of `roots/list`.
#[derive(Deserialize)]
struct Roots {
    roots: Vec<Root>,
}

impl Context {
    /// Asks the client's model to continue a conversation (`sampling/createMessage`) and returns
    /// what it said.
    ///
    /// The client must have declared the `sampling` capability. In the handshake era the call
    /// waits for the answer until the client request timeout (`Server::client_request_timeout`,
    /// 60 seconds by default) or until the call is cancelled. Under protocol 2026-07-28, which
    /// has no requests to the client, the call is answered with an input-required result that
    /// asks this, and run again with the answer when the client calls again (see [`Keyed`]).
    ///
    /// A client that did not declare the capability gets
    /// [`ClientRequestError::MissingCapability`]. A tool may do without the answer and succeed;
    /// if it fails instead, under protocol 2026-07-28 the call is answered with the protocol's
    /// "missing required client capability" error (-32021, naming the capability in
    /// `data.requiredCapabilities`) rather than a tool error, as that protocol requires. The
    /// same holds for [`elicit`](Context::elicit).
    pub async fn create_message(
        &self,
        request: CreateMessage,
    ) -> Result<Sampled, ClientRequestError> {
        self.ask(SAMPLING, None, &request).await
    }

    /// Asks the client's model to answer one user message, and returns its text:
    /// [`create_message`](Context::create_message) of one message.
    ///
    /// ```
    /// use toolwright::context::ClientRequestError;
    /// use toolwright::{Context, mcp_tool};
    ///
    /// /// Summarise a text with the client's model.
    /// #[mcp_tool]
    /// async fn summarise(
    ///     ctx: &Context,
    ///     /// The text.
    ///     text: String,
    /// ) -> Result<String, ClientRequestError> {
    ///     ctx.sample_text(&format!("Summarise in one sentence:\n{text}"), 200).await
    /// }
    /// ```
    pub async fn sample_text(
        &self,
        prompt: &str,
        max_tokens: u32,
    ) -> Result<String, ClientRequestError> {
        self.sample_text_as(None, prompt, max_tokens).await
    }

    async fn sample_text_as(
        &self,
        key: Option<&str>,
        prompt: &str,
        max_tokens: u32,
    ) -> Result<String, ClientRequestError> {
        let request = CreateMessage::new(max_tokens).user(prompt);
        let sampled: Sampled = self.ask(SAMPLING, key, &request).await?;
        sampled
            .text()
            .ok_or_else(|| ClientRequestError::InvalidResult {
                method: SAMPLING.method,
                problem: format!("it has no text content: {}", sampled.content),
            })
    }

    /// Asks the user for input through the client (`elicitation/create`), and returns what they
    /// did and filled in. The client must have declared the `elicitation` capability. The call
    /// waits as [`create_message`](Context::create_message) does.
    ///
    /// ```
    /// use schemars::JsonSchema;
    /// use serde::Deserialize;
    /// use toolwright::context::{ClientRequestError, Elicitation};
    /// use toolwright::{Context, mcp_tool};
    ///
    /// #[derive(Deserialize, JsonSchema)]
    /// struct Name {
    ///     /// What to call you.
    ///     name: String,
    /// }
    ///
    /// /// Greet the user by the name they give.
    /// #[mcp_tool]
    /// async fn greet(ctx: Context) -> Result<String, ClientRequestError> {
    ///     let answer = ctx.elicit(Elicitation::of::<Name>("What is your name?")).await?;
    ///     Ok(match answer.content_as::<Name>()? {
    ///         Some(Name { name }) => format!("Hello, {name}!"),
    ///         None => "Hello!".to_owned(),
    ///     })
    /// }
    /// ```
    pub async fn elicit(&self, request: Elicitation) -> Result<Elicited, ClientRequestError> {
        self.ask(ELICITATION, None, &request).await
    }

    /// Asks the client for the roots it shares (`roots/list`: the folders or files the user
    /// works in). The client must have declared the `roots` capability. The call waits as
    /// [`create_message`](Context::create_message) does.
    pub async fn list_roots(&self) -> Result<Vec<Root>, ClientRequestError> {
        let roots: Roots = self.ask(ROOTS, None, &Map::new()).await?;
        Ok(roots.roots)
    }

    /// The same requests to the client, asked under `key`: the name of the question in a
    /// protocol 2026-07-28 input-required result, which some clients show or match on (see
    /// [`Keyed`]). Without a key, each question is named after its method and its place
    /// among the call's questions: `elicit-1`, `sample-2`, `roots-3`; a tool whose questions
    /// come in an order that varies between runs (`tokio::select!`) names each with a key of its
    /// own, so that each answer finds its question.
    pub fn keyed<'a>(&'a self, key: &'a str) -> Keyed<'a> {
        Keyed { ctx: self, key }
    }

    /// Asks the client `method` (`sampling/createMessage`, `elicitation/create`, `roots/list`)
    /// with `params` as they are, as [`create_message`](Context::create_message) asks: what a
    /// gateway passes on of a mounted server's request made for the call it forwards. `None`
    /// for another method.
    #[cfg(feature = "gateway")]
    pub(crate) async fn pass_on(
        &self,
        method: &str,
        params: Value,
    ) -> Option<Result<Value, ClientRequestError>> {
        let asked = [SAMPLING, ELICITATION, ROOTS]
            .into_iter()
            .find(|asked| asked.method == method)?;
        Some(self.request(asked, None, params).await)
    }

    /// Asks the client `params`, under `key` in 2026-07-28, and reads its answer as `R`.
    async fn ask<R: DeserializeOwned>(
        &self,
        asked: Asked,
        key: Option<&str>,
        params: &impl Serialize,
    ) -> Result<R, ClientRequestError> {
        let params = serde_json::to_value(params).expect("a request to the client serialises");
        let answer = self.request(asked, key, params).await?;
        serde_json::from_value(answer).map_err(|err| ClientRequestError::InvalidResult {
            method: asked.method,
            problem: err.to_string(),
        })
    }

    async fn request(
        &self,
        asked: Asked,
        key: Option<&str>,
        params: Value,
    ) -> Result<Value, ClientRequestError> {
        let Asked { method, capability } = asked;
        let Some(peer) = &self.inner.peer else {
            return Err(ClientRequestError::NotConnected { method });
        };
        let declared = peer
            .client_capabilities
            .as_ref()
            .and_then(|capabilities| capabilities.get(capability))
            .is_some_and(|c| !c.is_null());
        if !declared {
            let _ = peer.refused_capability.set(capability);
            return Err(ClientRequestError::MissingCapability { capability, method });
        }
        if let Some(job) = &peer.task {
            if job.asks_by_request() {
                return self.request_in_task(peer, job, method, params).await;
            }
            if job.phase() == Phase::Task {
                let key = match (key, &peer.inputs) {
                    (Some(key), _) => key.to_owned(),
                    (None, Some(inputs)) => inputs.next_key(method),
                    (None, None) => format!("{method}-{}", crate::tasks::now_ms()),
                };
                let request = json!({ "method": method, "params": params });
                return match job.ask(key, request).await {
                    Ok(Some(answer)) => Ok(answer),
                    Ok(None) => Err(ClientRequestError::Cancelled),
                    Err(error) => Err(ClientRequestError::InvalidResult {
                        method,
                        problem: format!("the task's store failed: {error}"),
                    }),
                };
            }
        }
        if let Some(inputs) = &peer.inputs {
            let key = key.map_or_else(|| inputs.next_key(method), str::to_owned);
            return match inputs.ask(&key, method, params) {
                Answered::Answer(answer) => Ok(answer),
                Answered::Malformed(problem) => {
                    Err(ClientRequestError::InvalidResult { method, problem })
                }
                // The call stops here: the client is asked, and runs it again with the answer.
                // A question asked from another thread gives up once the call has stopped.
                Answered::Asked => {
                    inputs.settled().await;
                    Err(ClientRequestError::Asked { method })
                }
            };
        }
        peer.requests
            .send(
                &peer.outgoing,
                method,
                params,
                peer.request_timeout,
                &self.inner.cancellation,
            )
            .await
    }
}

impl Context {
    /// A request to the client from a task of the handshake era: it names the task
    /// (`_meta["io.modelcontextprotocol/related-task"]`), and the task is `input_required`
    /// until the client answers.
    async fn request_in_task(
        &self,
        peer: &Peer,
        job: &Job,
        method: &'static str,
        mut params: Value,
    ) -> Result<Value, ClientRequestError> {
        if let Value::Object(members) = &mut params {
            let meta = members.entry("_meta").or_insert_with(|| json!({}));
            if let Value::Object(meta) = meta {
                meta.insert(
                    crate::tasks::RELATED_TASK_KEY.to_owned(),
                    json!({ "taskId": job.id() }),
                );
            }
        }
        let note =
            |error| tracing::warn!(task = job.id(), %error, "the task's status was not stored");
        if let Err(error) = job.waiting(true).await {
            note(error);
        }
        // The stream of the call that created the task may be closed (over HTTP it ends with
        // the task's creation): the request then waits for the client's `tasks/result`, on
        // whose stream it goes, as 2025-11-25 has it.
        let deadline = tokio::time::Instant::now() + peer.request_timeout;
        let answer = loop {
            let sink = job.outgoing().unwrap_or_else(|| peer.outgoing.clone());
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let sent = peer
                .requests
                .send(
                    &sink,
                    method,
                    params.clone(),
                    left,
                    &self.inner.cancellation,
                )
                .await;
            if !matches!(sent, Err(ClientRequestError::Disconnected)) {
                break sent;
            }
            tokio::select! {
                () = job.outgoing_changed() => {}
                () = tokio::time::sleep_until(deadline) => {
                    break Err(ClientRequestError::Timeout(peer.request_timeout));
                }
                () = self.inner.cancellation.cancelled() => break Err(ClientRequestError::Cancelled),
            }
        };
        if let Err(error) = job.waiting(false).await {
            note(error);
        }
        answer
    }
}

/// The requests of a [`Context`] to the client, asked under a key of the tool's choosing: from
/// [`Context::keyed`].
///
/// Under protocol 2026-07-28 a server asks the client by answering with the questions, each under
/// a key, and the client calls again with the answers by key; the call is run again from the
/// start, and each question the tool asks again is answered at once. Questions the tool asks
/// side by side (`tokio::join!`) go to the client together. A tool that asks must ask the same
/// questions, under the same keys, when it is run again with the same arguments, and do what
/// must happen once (writing, sending) after its last question. In the handshake era the key
/// is not sent: each question is a request to the client, as the protocol has them.
///
/// ```
/// use serde_json::json;
/// use toolwright::context::{ClientRequestError, Elicitation};
/// use toolwright::{Context, mcp_tool};
///
/// /// Greet the user by the name they give.
/// #[mcp_tool]
/// async fn greet(ctx: Context) -> Result<String, ClientRequestError> {
///     let form = json!({
///         "type": "object",
///         "properties": {"name": {"type": "string"}},
///         "required": ["name"]
///     });
///     let answer = ctx
///         .keyed("user_name")
///         .elicit(Elicitation::with_schema("What is your name?", form))
///         .await?;
///     let name = answer.content().and_then(|content| content["name"].as_str());
///     Ok(format!("Hello, {}!", name.unwrap_or("you")))
/// }
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Keyed<'a> {
    ctx: &'a Context,
    key: &'a str,
}

impl Keyed<'_> {
    /// [`Context::create_message`], under this key.
    pub async fn create_message(
        self,
        request: CreateMessage,
    ) -> Result<Sampled, ClientRequestError> {
        self.ctx.ask(SAMPLING, Some(self.key), &request).await
    }

    /// [`Context::sample_text`], under this key.
    pub async fn sample_text(
        self,
        prompt: &str,
        max_tokens: u32,
    ) -> Result<String, ClientRequestError> {
        self.ctx
            .sample_text_as(Some(self.key), prompt, max_tokens)
            .await
    }

    /// [`Context::elicit`], under this key.
    pub async fn elicit(self, request: Elicitation) -> Result<Elicited, ClientRequestError> {
        self.ctx.ask(ELICITATION, Some(self.key), &request).await
    }

    /// [`Context::list_roots`], under this key.
    pub async fn list_roots(self) -> Result<Vec<Root>, ClientRequestError> {
        let roots: Roots = self.ctx.ask(ROOTS, Some(self.key), &Map::new()).await?;
        Ok(roots.roots)
    }
}
