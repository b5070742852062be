//! Log message severities, as the protocol (and syslog) names them.

use std::fmt;

use serde::{Deserialize, Serialize};

/// A log message's severity, as the protocol (and syslog) names them.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
#[allow(missing_docs)]
pub enum LogLevel {
    Debug,
    Info,
    Notice,
    Warning,
    Error,
    Critical,
    Alert,
    Emergency,
}

impl LogLevel {
    const ALL: [LogLevel; 8] = [
        LogLevel::Debug,
        LogLevel::Info,
        LogLevel::Notice,
        LogLevel::Warning,
        LogLevel::Error,
        LogLevel::Critical,
        LogLevel::Alert,
        LogLevel::Emergency,
    ];

    /// The protocol's name for the level.
    pub fn as_str(self) -> &'static str {
        match self {
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Notice => "notice",
            LogLevel::Warning => "warning",
            LogLevel::Error => "error",
            LogLevel::Critical => "critical",
            LogLevel::Alert => "alert",
            LogLevel::Emergency => "emergency",
        }
    }

    /// The level with this protocol name.
    pub fn from_name(name: &str) -> Option<LogLevel> {
        LogLevel::ALL.into_iter().find(|l| l.as_str() == name)
    }

    /// The level stored as `level as u8`; `None` for a number above them (no messages).
    #[cfg(feature = "gateway")]
    pub(crate) fn stored(level: u8) -> Option<LogLevel> {
        LogLevel::ALL.get(usize::from(level)).copied()
    }

    /// The level stored as `level as u8`; the most severe for a number above them.
    #[cfg(feature = "http")]
    pub(crate) fn from_u8(level: u8) -> LogLevel {
        LogLevel::ALL
            .get(usize::from(level))
            .copied()
            .unwrap_or(LogLevel::Emergency)
    }

    /// A threshold above every level: no log message is sent. Protocol 2026-07-28 sends log
    /// messages for a request only when its `_meta` names a level.
    pub(crate) const OFF: u8 = LogLevel::ALL.len() as u8;

    /// Every level's name, least severe first, for the message about a name that is none.
    pub(crate) fn names() -> String {
        let names: Vec<String> = LogLevel::ALL
            .iter()
            .map(|level| format!("`{level}`"))
            .collect();
        names.join(", ")
    }
}

impl fmt::Display for LogLevel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}
