//! What a store keeps of one task: its status, its owner, its times, and once it ends its
//! result or error.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// Where a task is: running, waiting for the client, or ended (the last three, never left).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// The tool runs.
    Working,
    /// The tool waits for the client's answer to a question (sampling, elicitation).
    InputRequired,
    /// The tool returned: its result, which may be a tool error (`isError`), is kept.
    Completed,
    /// The task could not run to a result (its replica died, the server failed): its error is
    /// kept.
    Failed,
    /// The client cancelled it.
    Cancelled,
}

impl TaskStatus {
    /// Its name on the wire: `working`, `input_required`, `completed`, `failed`, `cancelled`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskStatus::Working => "working",
            TaskStatus::InputRequired => "input_required",
            TaskStatus::Completed => "completed",
            TaskStatus::Failed => "failed",
            TaskStatus::Cancelled => "cancelled",
        }
    }

    /// Whether the task has ended: completed, failed or cancelled. An ended task's status never
    /// changes again.
    pub fn is_final(self) -> bool {
        matches!(
            self,
            TaskStatus::Completed | TaskStatus::Failed | TaskStatus::Cancelled
        )
    }
}

/// One task as a [`TaskStore`](super::TaskStore) keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// Its id: 32 hex digits, random.
    pub id: String,
    /// Who created it, as a digest: only requests of the same owner see it.
    pub owner: String,
    /// The tool it runs.
    pub tool: String,
    /// Where it is.
    pub status: TaskStatus,
    /// What the tool last said of its progress, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When it was last written, likewise. Every write moves it on, by a millisecond at least
    /// when the clock has not, so that it tells one write from the next
    /// ([`TaskStore::replace`](super::TaskStore::replace)).
    pub updated_ms: u64,
    /// How long it is kept after its creation, in milliseconds; then it is forgotten.
    pub ttl_ms: u64,
    /// How often the client should ask for its status, in milliseconds.
    pub poll_interval_ms: u64,
    /// The tool's result (a `CallToolResult`), once completed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error (`{code, message, data?}`), once failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<Value>,
    /// The questions waiting for the client's answer, by key, while `input_required`
    /// (protocol 2026-07-28).
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub input_requests: Map<String, Value>,
    /// Answers a client gave through a replica other than the one running the task, for that
    /// one to take.
    #[serde(default, skip_serializing_if = "Map::is_empty")]
    pub input_responses: Map<String, Value>,
    /// The replica that runs it, when replicas share the store: a task whose replica stopped
    /// saying it is alive turns `failed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub replica: Option<String>,
}

impl TaskRecord {
    /// A new `working` task of `owner` running `tool`, created now.
    pub fn new(
        id: String,
        owner: String,
        tool: String,
        ttl: Duration,
        poll_interval: Duration,
    ) -> TaskRecord {
        let now = now_ms();
        TaskRecord {
            id,
            owner,
            tool,
            status: TaskStatus::Working,
            status_message: None,
            created_ms: now,
            updated_ms: now,
            ttl_ms: millis(ttl),
            poll_interval_ms: millis(poll_interval),
            result: None,
            error: None,
            input_requests: Map::new(),
            input_responses: Map::new(),
            replica: None,
        }
    }

    /// When it is forgotten, in milliseconds since the Unix epoch.
    pub fn expires_ms(&self) -> u64 {
        self.created_ms.saturating_add(self.ttl_ms)
    }

    /// Whether it is forgotten at `now_ms`.
    pub fn expired_at(&self, now_ms: u64) -> bool {
        self.expires_ms() <= now_ms
    }

    /// The task at `status`, changed now; `message` replaces the status message when given.
    pub(crate) fn moved(&mut self, status: TaskStatus, message: Option<String>) {
        self.status = status;
        if message.is_some() {
            self.status_message = message;
        }
        self.touched();
    }

    /// The task, written now: `updated_ms` moves on.
    pub(crate) fn touched(&mut self) {
        self.updated_ms = now_ms().max(self.updated_ms.saturating_add(1));
    }
}

/// Now, in milliseconds since the Unix epoch.
pub(crate) fn now_ms() -> u64 {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    millis(since)
}

fn millis(duration: Duration) -> u64 {
    u64::try_from(duration.as_millis()).unwrap_or(u64::MAX)
}

/// A time in milliseconds since the Unix epoch as the protocol writes it: ISO 8601 in UTC, to
/// the millisecond (`2026-12-05T10:00:00.123Z`).
pub(crate) fn iso8601(ms: u64) -> String {
    let time = UNIX_EPOCH + Duration::from_millis(ms);
    humantime::format_rfc3339_millis(time).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_are_written_as_the_protocol_reads_them() {
        assert_eq!(iso8601(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso8601(1_796_464_800_123), "2026-12-05T10:00:00.123Z");
    }

    #[test]
    fn a_record_reads_back_as_written() {
        let mut record = TaskRecord::new(
            "ab".repeat(16),
            "owner".into(),
            "export_notes".into(),
            Duration::from_secs(60),
            Duration::from_secs(1),
        );
        record.moved(TaskStatus::InputRequired, Some("asking".into()));
        let bytes = serde_json::to_vec(&record).unwrap();
        let read: TaskRecord = serde_json::from_slice(&bytes).unwrap();
        assert_eq!(read, record);
        assert_eq!(read.expires_ms(), read.created_ms + 60_000);
        assert!(
            String::from_utf8(bytes)
                .unwrap()
                .contains(r#""status":"input_required""#)
        );
    }
}
