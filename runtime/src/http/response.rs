//! What the endpoint answers with: a JSON body, or a [`Rejection`] of a request the transport
//! answers itself.

use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::{Body, Bytes};
use axum::http::header::{CACHE_CONTROL, CONTENT_TYPE};
use axum::http::{HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

use crate::protocol::jsonrpc::{INVALID_REQUEST, Id, Reply};

/// A JSON body with this status.
pub(super) fn json(status: StatusCode, body: Vec<u8>) -> Response {
    (
        status,
        [(CONTENT_TYPE, HeaderValue::from_static("application/json"))],
        body,
    )
        .into_response()
}

/// A stream of events as the answer: its content type, and no caching or buffering on the way.
pub(super) fn event_stream(body: Body) -> Response {
    (
        [
            (CONTENT_TYPE, HeaderValue::from_static("text/event-stream")),
            (CACHE_CONTROL, HeaderValue::from_static("no-cache")),
            // Reverse proxies would otherwise hold events back.
            (
                axum::http::HeaderName::from_static("x-accel-buffering"),
                HeaderValue::from_static("no"),
            ),
        ],
        body,
    )
        .into_response()
}

/// The response, its body holding `guard` until the body is sent whole or dropped: what the
/// answer occupies (its connection, one of its client's streams) is given back then.
pub(super) fn holding<G: Send + Unpin + 'static>(response: Response, guard: G) -> Response {
    response.map(|body| Body::new(Holding { body, guard }))
}

struct Holding<G> {
    body: Body,
    #[allow(dead_code, reason = "held for its Drop")]
    guard: G,
}

impl<G: Unpin> http_body::Body for Holding<G> {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Bytes>, axum::Error>>> {
        Pin::new(&mut self.get_mut().body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

/// A request the transport answers itself, with an HTTP error status and a JSON-RPC error body.
#[derive(Debug)]
pub(super) struct Rejection {
    pub(super) status: StatusCode,
    pub(super) message: String,
    id: Id,
    /// A header the status calls for (`WWW-Authenticate`, `Allow`): its name and value.
    header: Option<(&'static str, HeaderValue)>,
}

impl Rejection {
    pub(super) fn new(status: StatusCode, message: impl Into<String>) -> Rejection {
        Rejection {
            status,
            message: message.into(),
            id: Id::Null,
            header: None,
        }
    }

    /// Answers under the request's id, when it could be read.
    pub(super) fn with_id(mut self, id: Option<&Id>) -> Rejection {
        if let Some(id) = id {
            self.id = id.clone();
        }
        self
    }

    /// With this header; a value no header can hold (a control character) is left out.
    pub(super) fn with_header(mut self, name: &'static str, value: &str) -> Rejection {
        self.header = HeaderValue::from_str(value).ok().map(|value| (name, value));
        self
    }
}

impl IntoResponse for Rejection {
    fn into_response(self) -> Response {
        if self.status == StatusCode::FORBIDDEN {
            tracing::warn!(
                status = self.status.as_u16(),
                "request refused: {}",
                self.message
            );
        } else {
            tracing::debug!(
                status = self.status.as_u16(),
                "request refused: {}",
                self.message
            );
        }
        let body = Reply::error(&self.id, INVALID_REQUEST, &self.message);
        let mut response = json(self.status, body.into_bytes());
        if let Some((name, value)) = self.header {
            response.headers_mut().insert(name, value);
        }
        response
    }
}
