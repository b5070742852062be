//! The requests a client sends, by method, and in which era each is served.

/// A request method this server serves in some era.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Method {
    Initialize,
    Ping,
    /// `server/discover`: 2026-07-28's way in.
    Discover,
    ListTools,
    CallTool,
    ListResources,
    ListResourceTemplates,
    ReadResource,
    Subscribe,
    Unsubscribe,
    ListPrompts,
    GetPrompt,
    Complete,
    SetLogLevel,
    /// `subscriptions/listen`: 2026-07-28's stream of changes.
    Listen,
    /// `tasks/get`: a task's status (and in 2026-07-28 its result).
    TasksGet,
    /// `tasks/result`: a task's result, once it has ended (2025-11-25).
    TasksResult,
    /// `tasks/list`: the caller's tasks (2025-11-25).
    TasksList,
    /// `tasks/cancel`.
    TasksCancel,
    /// `tasks/update`: answers to a task's questions (2026-07-28).
    TasksUpdate,
}

impl Method {
    /// Every method, in the order of [`Method::name`]'s table.
    const ALL: [Method; 20] = [
        Method::Initialize,
        Method::Ping,
        Method::Discover,
        Method::ListTools,
        Method::CallTool,
        Method::ListResources,
        Method::ListResourceTemplates,
        Method::ReadResource,
        Method::Subscribe,
        Method::Unsubscribe,
        Method::ListPrompts,
        Method::GetPrompt,
        Method::Complete,
        Method::SetLogLevel,
        Method::Listen,
        Method::TasksGet,
        Method::TasksResult,
        Method::TasksList,
        Method::TasksCancel,
        Method::TasksUpdate,
    ];

    /// The method a request names, if this server serves it in some era.
    pub(crate) fn from_name(name: &str) -> Option<Method> {
        Method::ALL.into_iter().find(|method| method.name() == name)
    }

    /// Its name on the wire.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Method::Initialize => "initialize",
            Method::Ping => "ping",
            Method::Discover => "server/discover",
            Method::ListTools => "tools/list",
            Method::CallTool => "tools/call",
            Method::ListResources => "resources/list",
            Method::ListResourceTemplates => "resources/templates/list",
            Method::ReadResource => "resources/read",
            Method::Subscribe => "resources/subscribe",
            Method::Unsubscribe => "resources/unsubscribe",
            Method::ListPrompts => "prompts/list",
            Method::GetPrompt => "prompts/get",
            Method::Complete => "completion/complete",
            Method::SetLogLevel => "logging/setLevel",
            Method::Listen => "subscriptions/listen",
            Method::TasksGet => "tasks/get",
            Method::TasksResult => "tasks/result",
            Method::TasksList => "tasks/list",
            Method::TasksCancel => "tasks/cancel",
            Method::TasksUpdate => "tasks/update",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_method_reads_back_from_its_name() {
        for method in Method::ALL {
            assert_eq!(Method::from_name(method.name()), Some(method));
        }
        assert_eq!(Method::from_name("tools/cal"), None);
    }
}
