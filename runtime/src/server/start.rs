//! Start-up: a [`Server`] becomes what a transport serves ([`Started`]) once its state is built
//! and its tools are gathered and checked; every problem found is reported at once.

use std::sync::Arc;

use tokio::sync::Semaphore;

use super::builder::Server;
use super::dispatch::{Dispatcher, ServerConfig};
use super::error::Error;
use super::limits::Limits;
use super::started::Started;
use crate::catalog;
use crate::context::RequestStateKey;
use crate::live::Disabled;
use crate::protocol::{HANDSHAKE_VERSIONS, STATELESS_VERSIONS};
use crate::registry::{Conflict, NOT_LINKED, Registry, RegistryError};

impl Server {
    /// The tools this server serves: the given registry, the embedded manifest's or every linked
    /// tool, namespaced if asked.
    pub(crate) fn take_registry(&mut self) -> Result<Registry, RegistryError> {
        match (self.registry.take(), self.embedded) {
            (Some(registry), _) => registry.namespaced_if(self.namespaced),
            (None, Some(manifest)) => Registry::embedded(manifest, self.namespaced),
            (None, None) => Registry::collect()?.namespaced_if(self.namespaced),
        }
    }

    /// `registry` with the tools of the servers given to [`mount`](Server::mount), which are
    /// connected now; and their watches, to start once the server serves.
    #[cfg(feature = "gateway")]
    pub(crate) async fn mount_into(
        &mut self,
        registry: Registry,
    ) -> Result<(Registry, Vec<crate::gateway::Watch>), Error> {
        let mounts = std::mem::take(&mut self.mounts);
        if mounts.is_empty() {
            return Ok((registry, Vec::new()));
        }
        let mounted = crate::gateway::mount_all(mounts, self.lock.as_ref())
            .await
            .map_err(|(mount, error)| Error::Mount {
                mount,
                error: Box::new(error),
            })?;
        let registry = registry.with_mounted(mounted.served)?;
        Ok((registry, mounted.watches))
    }

    /// The tools to print or search, as [`take_registry`](Server::take_registry) gives them and
    /// with the mounted servers' tools, for which a runtime of its own connects them.
    #[cfg(feature = "cli")]
    pub(crate) fn registry_to_print(&mut self) -> Result<Registry, Error> {
        let registry = self.take_registry()?;
        #[cfg(feature = "gateway")]
        if !self.mounts.is_empty() {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()?;
            // Printed, not served: the mounted servers are not watched.
            return runtime
                .block_on(self.mount_into(registry))
                .map(|(registry, _)| registry);
        }
        Ok(registry)
    }

    /// Starts the server, as a transport serves it: its state built (see
    /// [`state_from`](Server::state_from)), its tools gathered and checked, its answers that do
    /// not change serialised. Fails, serving nothing, when a state cannot be built or the tools
    /// conflict: a missing state, a name taken twice, an embedded manifest that does not match.
    ///
    /// ```no_run
    /// # async fn run() -> Result<(), toolwright::Error> {
    /// let started = toolwright::server!().start().await?;
    /// toolwright::stdio::Stdio::new().serve(started).await
    /// # }
    /// ```
    pub async fn start(mut self) -> Result<Started, Error> {
        for pending in std::mem::take(&mut self.pending) {
            let value = pending.build.await.map_err(|error| Error::State {
                state: pending.name,
                error,
            })?;
            self.states.insert_any(pending.id, pending.name, value);
        }
        let registry = self.take_registry()?;
        #[cfg(feature = "gateway")]
        let (registry, watches) = self.mount_into(registry).await?;
        let mut conflicts: Vec<Conflict> = self.catalog.conflicts(&registry);
        for tool in registry.tools() {
            for state in tool.states() {
                if !self.states.contains(state) {
                    conflicts.push(Conflict::MissingState {
                        tool: tool.wire_name().to_owned(),
                        state: (state.name)(),
                        location: tool.origin(),
                    });
                }
            }
        }
        for prompt in registry.prompts() {
            for state in prompt.states {
                if !self.states.contains(state) {
                    conflicts.push(Conflict::MissingPromptState {
                        prompt: prompt.name.to_owned(),
                        state: (state.name)(),
                        location: prompt.location,
                    });
                }
            }
        }
        for (kind, name) in self.handle.live().attach(served(&registry)) {
            conflicts.push(Conflict::UnknownDisabled { kind, name });
        }
        for name in self.layers.unknown_tools(&registry) {
            conflicts.push(Conflict::UnknownLayerTool { name });
        }
        for resource in registry.resources().functions() {
            for state in resource.states {
                if !self.states.contains(state) {
                    conflicts.push(Conflict::MissingResourceState {
                        resource: resource.uri.to_owned(),
                        state: (state.name)(),
                        location: resource.location,
                    });
                }
            }
        }
        if !conflicts.is_empty() {
            return Err(RegistryError::new(conflicts).into());
        }
        if registry.is_empty() {
            tracing::warn!("{NOT_LINKED}");
        }
        for note in registry.manifest().notes() {
            tracing::info!("{note}");
        }
        tracing::info!(
            server = %self.name,
            version = %self.version,
            tools = registry.len(),
            prompts = registry.prompt_names().len(),
            resources = registry.resources().fixed().len(),
            templates = registry.resources().templates().len(),
            catalog = %self.catalog,
            "serving MCP (protocol {}, and {} down to {} with `initialize`)",
            STATELESS_VERSIONS[0],
            HANDSHAKE_VERSIONS[0],
            HANDSHAKE_VERSIONS[HANDSHAKE_VERSIONS.len() - 1],
        );
        // Where tasks are kept matters to a server that runs any.
        if registry
            .tools()
            .iter()
            .any(|tool| tool.task_support().allows_task())
        {
            let store = &self.tasks.store;
            match store.replica() {
                Some(replica) => {
                    tracing::info!("tasks: in {} (replica {replica})", store.describe())
                }
                None => tracing::info!("tasks: in {}", store.describe()),
            }
        }
        // The mounted servers are watched from now on: connected again when they end, their
        // tools held back when they change.
        #[cfg(feature = "gateway")]
        for watch in watches {
            tokio::spawn(watch.run(Arc::clone(self.handle.live())));
        }
        let config = ServerConfig {
            name: self.name,
            version: self.version,
            instructions: catalog::instructions(self.instructions, self.catalog),
            page_size: self.page_size,
            cache_ttl: self.cache_ttl,
            client_request_timeout: self.client_request_timeout,
            call_timeout: self.call_timeout,
            catalog: self.catalog,
            states: Arc::new(self.states),
            server: self.handle,
            state_key: self
                .state_secret
                .as_deref()
                .map_or_else(RequestStateKey::random, RequestStateKey::from_secret),
            #[cfg(feature = "semantic")]
            embedder: self.embedder,
            #[cfg(feature = "semantic")]
            kept: self.kept,
            layers: self.layers,
            tasks: self.tasks,
        };
        let limits = Limits {
            max_message_size: self.max_message_size,
            calls: Arc::new(Semaphore::new(self.max_concurrent_calls)),
            shutdown_grace: self.shutdown_grace,
        };
        Ok(Started::new(Dispatcher::new(registry, config), limits))
    }
}

/// The names of what `registry` serves, which its handle may disable.
fn served(registry: &Registry) -> Disabled {
    let resources = registry.resources();
    Disabled {
        tools: registry
            .tools()
            .iter()
            .map(|t| t.wire_name().to_owned())
            .collect(),
        prompts: registry.prompt_names().into_iter().collect(),
        resources: resources
            .fixed()
            .iter()
            .map(|r| r.uri().to_owned())
            .chain(
                resources
                    .templates()
                    .iter()
                    .map(|t| t.registration.uri.to_owned()),
            )
            .collect(),
        held: std::collections::BTreeMap::new(),
    }
}
