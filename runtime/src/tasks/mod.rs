//! Tasks: a tool call that outlives its request. The client asks for a task, the server answers
//! at once with the task's id, runs the tool, and the client polls for its status and result.
//!
//! A tool says whether it may run as one with `#[mcp_tool(task = "optional")]` or
//! `task = "required"` ([`TaskSupport`]); the same function runs as a call or as a task.

use std::fmt;

/// Whether a tool runs as a task: what `#[mcp_tool(task = "...")]` says, and what the tool's
/// `execution.taskSupport` tells clients.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum TaskSupport {
    /// Never as a task: a client that asks for one is refused. The default.
    #[default]
    Forbidden,
    /// As a task when the client asks for one, as a plain call otherwise.
    Optional,
    /// Only as a task: a plain call is refused.
    Required,
}

impl TaskSupport {
    /// Its name on the wire: `forbidden`, `optional` or `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskSupport::Forbidden => "forbidden",
            TaskSupport::Optional => "optional",
            TaskSupport::Required => "required",
        }
    }

    /// Whether the tool may run as a task.
    pub fn allows_task(self) -> bool {
        self != TaskSupport::Forbidden
    }
}

impl fmt::Display for TaskSupport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
