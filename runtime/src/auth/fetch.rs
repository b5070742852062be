//! The server's requests to the authorization server: its metadata, its keys, introspection.
//! Each has a deadline, follows no redirect and reads at most 1 MiB, so a slow or hostile
//! authorization server cannot hold or fill the server.

use std::time::Duration;

use futures_util::StreamExt;
use serde_json::Value;

/// How long one request to the authorization server may take.
const TIMEOUT: Duration = Duration::from_secs(10);

/// The largest answer read: key sets and metadata are a few KiB.
const MAX_BODY: usize = 1 << 20;

/// An HTTP client for the authorization server.
#[derive(Clone)]
pub(crate) struct Fetcher {
    client: reqwest::Client,
}

impl Fetcher {
    pub(crate) fn new() -> Result<Fetcher, String> {
        let client = reqwest::Client::builder()
            .timeout(TIMEOUT)
            .connect_timeout(TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("toolwright/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|err| format!("cannot make an HTTP client: {err}"))?;
        Ok(Fetcher { client })
    }

    /// GETs `url` and reads its answer as a JSON object; `Err` says why not, naming the URL.
    pub(crate) async fn get_json(&self, url: &str) -> Result<Value, String> {
        let request = self
            .client
            .get(url)
            .header(reqwest::header::ACCEPT, "application/json");
        read_json(url, request).await
    }

    /// POSTs a form to `url`, authenticated as `client_id` with HTTP Basic (RFC 6749 section
    /// 2.3.1: each part form-encoded first), and reads its answer as a JSON object.
    pub(crate) async fn post_form(
        &self,
        url: &str,
        (client_id, client_secret): (&str, &str),
        form: &[(&str, &str)],
    ) -> Result<Value, String> {
        let encode =
            |part: &str| url::form_urlencoded::byte_serialize(part.as_bytes()).collect::<String>();
        let request = self
            .client
            .post(url)
            .header(reqwest::header::ACCEPT, "application/json")
            .basic_auth(encode(client_id), Some(encode(client_secret)))
            .form(form);
        read_json(url, request).await
    }
}

async fn read_json(url: &str, request: reqwest::RequestBuilder) -> Result<Value, String> {
    let response = request
        .send()
        .await
        .map_err(|err| format!("{url} did not answer: {}", without_url(&err)))?;
    let status = response.status();
    if !status.is_success() {
        return Err(format!("{url} answered {status}"));
    }
    let mut body = Vec::new();
    let mut chunks = response.bytes_stream();
    while let Some(chunk) = chunks.next().await {
        let chunk = chunk.map_err(|err| format!("{url} broke off: {}", without_url(&err)))?;
        if body.len() + chunk.len() > MAX_BODY {
            return Err(format!("{url} answered more than {MAX_BODY} bytes"));
        }
        body.extend_from_slice(&chunk);
    }
    match serde_json::from_slice::<Value>(&body) {
        Ok(value @ Value::Object(_)) => Ok(value),
        Ok(_) => Err(format!("{url} answered JSON that is not an object")),
        Err(err) => Err(format!("{url} answered something other than JSON: {err}")),
    }
}

/// reqwest's error and its causes, without the URL it names too (the message names it once
/// already): "error sending request: tcp connect error: Connection refused".
fn without_url(err: &reqwest::Error) -> String {
    let mut text = err.to_string();
    if let Some(at) = text.find(" for url (") {
        text.truncate(at);
    }
    let mut source = std::error::Error::source(err);
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text = format!("{text}: {cause_text}");
        }
        source = cause.source();
    }
    text
}
