//! A gateway's configuration file: the servers it mounts, where each is and how it is reached,
//! which of its tools it serves, in TOML, with `${NAME}` taken from the environment so that no
//! secret is written in it.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use super::{NewTools, Upstream};
use crate::client::{Endpoint, Versions};

/// A gateway's configuration, read from TOML.
///
/// ```
/// use toolwright::gateway::Config;
///
/// let config = Config::from_toml(r#"
///     name = "team-tools"
///
///     [upstreams.time]
///     command = ["uvx", "mcp-server-time", "--local-timezone", "UTC"]
///     timeout = "30s"
///
///     [upstreams.search]
///     url = "https://search.example.com/mcp"
///     headers = { "X-Team" = "tools" }
///     tools = ["search", "fetch"]
/// "#)?;
/// assert_eq!(config.name(), "team-tools");
/// let names: Vec<&str> = config.upstreams().map(|(name, _)| name).collect();
/// assert_eq!(names, ["search", "time"]);
/// # Ok::<(), toolwright::gateway::ConfigError>(())
/// ```
///
/// Each `[upstreams.<name>]` table mounts one server as `<name>`: `command` (the program and its
/// arguments) with `env` and `cwd`, or `url` with `headers` and `bearer`; then `timeout` (a
/// duration such as `"30s"`, or `"none"`; 60 s by default), `versions` (`"auto"`,
/// `"handshake"` or `"stateless"`), which tools to serve: `tools` (only these) or `hide` (all
/// but these), `new_tools` (`"hold"`, the default, or `"admit"`): what becomes of a tool the
/// [`Lock`](super::Lock) does not pin, and `scopes`: the OAuth scopes a caller's access token
/// must grant to call any of its tools. In every string, `${NAME}` is the environment variable
/// `NAME`; one that is not set is an error naming it.
#[derive(Clone, Debug)]
pub struct Config {
    name: String,
    upstreams: Vec<(String, Upstream)>,
}

/// Why a configuration cannot be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// The text is not a configuration: TOML that does not parse, or a key it does not know.
    #[error("{0}")]
    Invalid(String),
    /// An upstream's settings do not fit together, or name what is not there.
    #[error("upstream `{upstream}`: {problem}")]
    Upstream {
        /// The upstream's name.
        upstream: String,
        /// What is wrong.
        problem: String,
    },
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default = "default_name")]
    name: String,
    #[serde(default)]
    upstreams: BTreeMap<String, UpstreamFile>,
}

fn default_name() -> String {
    "toolwright-gateway".to_owned()
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpstreamFile {
    command: Option<Vec<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    cwd: Option<String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    bearer: Option<String>,
    timeout: Option<String>,
    versions: Option<String>,
    tools: Option<Vec<String>>,
    #[serde(default)]
    hide: Vec<String>,
    new_tools: Option<String>,
    #[serde(default)]
    scopes: Vec<String>,
}

impl Config {
    /// Reads the configuration file at `path`.
    pub fn read(path: impl AsRef<Path>) -> Result<Config, ConfigError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.display().to_string(),
            error,
        })?;
        Config::from_toml(&text).map_err(|error| match error {
            ConfigError::Invalid(message) => {
                ConfigError::Invalid(format!("{}: {message}", path.display()))
            }
            other => other,
        })
    }

    /// Reads a configuration from TOML text.
    pub fn from_toml(text: &str) -> Result<Config, ConfigError> {
        let file: File =
            toml::from_str(text).map_err(|error| ConfigError::Invalid(error.to_string()))?;
        let upstreams = file
            .upstreams
            .into_iter()
            .map(|(name, upstream)| {
                let built = upstream.build().map_err(|problem| ConfigError::Upstream {
                    upstream: name.clone(),
                    problem,
                })?;
                Ok((name, built))
            })
            .collect::<Result<_, ConfigError>>()?;
        Ok(Config {
            name: file.name,
            upstreams,
        })
    }

    /// The gateway's name, as its clients see it (`serverInfo`): `toolwright-gateway` unless
    /// the file says otherwise.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The servers to mount, by name, in name order.
    pub fn upstreams(&self) -> impl Iterator<Item = (&str, &Upstream)> {
        self.upstreams
            .iter()
            .map(|(name, upstream)| (name.as_str(), upstream))
    }

    /// The servers to mount, by name, owned.
    pub fn into_upstreams(self) -> Vec<(String, Upstream)> {
        self.upstreams
    }
}

impl UpstreamFile {
    fn build(self) -> Result<Upstream, String> {
        let endpoint = match (self.command, self.url) {
            (Some(command), None) => {
                let mut command = command.iter().map(|part| expand(part));
                let program = command
                    .next()
                    .ok_or("`command` is empty: it names the program first")??;
                let args = command.collect::<Result<Vec<_>, _>>()?;
                if !self.headers.is_empty() || self.bearer.is_some() {
                    return Err("`headers` and `bearer` are for a `url`, not a `command`".into());
                }
                let mut endpoint = Endpoint::command(program, args);
                for (key, value) in &self.env {
                    endpoint = endpoint.env(key, expand(value)?);
                }
                if let Some(cwd) = &self.cwd {
                    endpoint = endpoint.current_dir(expand(cwd)?);
                }
                endpoint
            }
            (None, Some(url)) => {
                if !self.env.is_empty() || self.cwd.is_some() {
                    return Err("`env` and `cwd` are for a `command`, not a `url`".into());
                }
                let mut endpoint = Endpoint::url(expand(&url)?);
                for (key, value) in &self.headers {
                    endpoint = endpoint.header(key, expand(value)?);
                }
                if let Some(bearer) = &self.bearer {
                    endpoint = endpoint.bearer(expand(bearer)?);
                }
                endpoint
            }
            (Some(_), Some(_)) => return Err("give a `command` or a `url`, not both".into()),
            (None, None) => return Err("give a `command` to start or a `url` to reach".into()),
        };
        let mut upstream = Upstream::new(endpoint);
        if let Some(timeout) = &self.timeout {
            upstream = upstream.timeout(match timeout.as_str() {
                "none" => None,
                text => Some(humantime::parse_duration(text).map_err(|error| {
                    format!("`timeout = {text:?}` is not a duration such as \"30s\": {error}")
                })?),
            });
        }
        if let Some(versions) = &self.versions {
            upstream = upstream.versions(match versions.as_str() {
                "auto" => Versions::Auto,
                "handshake" => Versions::Handshake,
                "stateless" => Versions::Stateless,
                other => {
                    return Err(format!(
                        "`versions = {other:?}`: expected \"auto\", \"handshake\" or \"stateless\""
                    ));
                }
            });
        }
        if let Some(new_tools) = &self.new_tools {
            upstream = upstream.new_tools(match new_tools.as_str() {
                "hold" => NewTools::Hold,
                "admit" => NewTools::Admit,
                other => {
                    return Err(format!(
                        "`new_tools = {other:?}`: expected \"hold\" or \"admit\""
                    ));
                }
            });
        }
        if let Some(tools) = self.tools {
            if !self.hide.is_empty() {
                return Err("give `tools` (only these) or `hide` (all but these), not both".into());
            }
            upstream = upstream.only(tools);
        }
        let scopes = self
            .scopes
            .iter()
            .map(|scope| expand(scope))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(upstream.hide(self.hide).scopes(scopes))
    }
}

/// `text` with every `${NAME}` replaced by the environment variable `NAME`.
fn expand(text: &str) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let end = after
            .find('}')
            .ok_or_else(|| format!("`{text}`: a `${{` without its `}}`"))?;
        let name = &after[..end];
        let value = std::env::var(name).map_err(|_| {
            format!("`{text}` names the environment variable `{name}`, which is not set")
        })?;
        out.push_str(&value);
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> String {
        Config::from_toml(text).unwrap_err().to_string()
    }

    #[test]
    fn each_upstream_is_a_command_or_a_url() {
        assert_eq!(
            refusal("[upstreams.a]\ncommand = [\"x\"]\nurl = \"http://h/mcp\""),
            "upstream `a`: give a `command` or a `url`, not both"
        );
        assert_eq!(
            refusal("[upstreams.a]\ntimeout = \"1s\""),
            "upstream `a`: give a `command` to start or a `url` to reach"
        );
        assert_eq!(
            refusal("[upstreams.a]\ncommand = []"),
            "upstream `a`: `command` is empty: it names the program first"
        );
        assert_eq!(
            refusal("[upstreams.a]\nurl = \"http://h/mcp\"\nenv = { A = \"b\" }"),
            "upstream `a`: `env` and `cwd` are for a `command`, not a `url`"
        );
    }

    #[test]
    fn a_key_it_does_not_know_is_refused() {
        let refused = refusal("[upstreams.a]\ncommand = [\"x\"]\ntimout = \"1s\"");
        assert!(refused.contains("unknown field `timout`"), "{refused}");
    }

    #[test]
    fn settings_are_read_as_they_are_written() {
        assert_eq!(
            refusal("[upstreams.a]\ncommand = [\"x\"]\ntimeout = \"soon\""),
            "upstream `a`: `timeout = \"soon\"` is not a duration such as \"30s\": expected \
             number at 0"
        );
        assert_eq!(
            refusal("[upstreams.a]\ncommand = [\"x\"]\nversions = \"2025\""),
            "upstream `a`: `versions = \"2025\"`: expected \"auto\", \"handshake\" or \"stateless\""
        );
        assert_eq!(
            refusal("[upstreams.a]\ncommand = [\"x\"]\ntools = [\"t\"]\nhide = [\"u\"]"),
            "upstream `a`: give `tools` (only these) or `hide` (all but these), not both"
        );
        let config = Config::from_toml(
            "[upstreams.a]\ncommand = [\"x\"]\ntimeout = \"none\"\nhide = [\"drop\"]\n\
             scopes = [\"files:read\"]",
        )
        .unwrap();
        let (_, upstream) = config.upstreams().next().unwrap();
        assert_eq!(upstream.timeout, None);
        assert!(upstream.serves("keep") && !upstream.serves("drop"));
        assert_eq!(upstream.scopes, ["files:read"]);
    }

    #[test]
    fn a_variable_that_is_not_set_is_named() {
        assert_eq!(
            refusal("[upstreams.a]\nurl = \"http://h/mcp\"\nbearer = \"${TOOLWRIGHT_NOT_SET_42}\""),
            "upstream `a`: `${TOOLWRIGHT_NOT_SET_42}` names the environment variable \
             `TOOLWRIGHT_NOT_SET_42`, which is not set"
        );
        assert_eq!(expand("a${").unwrap_err(), "`a${`: a `${` without its `}`");
        assert_eq!(expand("plain").unwrap(), "plain");
    }
}
