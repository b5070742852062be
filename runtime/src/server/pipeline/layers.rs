//! The layers a server's author gives ([`Server::layer`](crate::Server::layer), and
//! [`Server::layer_for`](crate::Server::layer_for) for some tools), and the pipeline they make
//! around [`Run`].

use std::fmt;
use std::sync::Arc;

use tower::ServiceExt as _;

use super::select::Steer;
use super::{BoxError, Call, Layer, Next, Outcome, Run, Select, Service};
use crate::registry::Registry;

/// Wraps the rest of the pipeline in one layer.
type Wrap = Arc<dyn Fn(Next) -> Next + Send + Sync>;

/// The layers of a server, outermost first, each with the tools it is for when not every call.
#[derive(Clone, Default)]
pub(crate) struct Layers(Vec<(Wrap, Option<Select>)>);

impl Layers {
    /// Adds a layer inside those given before, for the calls of the tools `only` selects, or
    /// every call.
    pub(crate) fn push<L>(&mut self, layer: L, only: Option<Select>)
    where
        L: Layer<Next> + Send + Sync + 'static,
        L::Service:
            Service<Call, Response = Outcome, Error = BoxError> + Clone + Send + Sync + 'static,
        <L::Service as Service<Call>>::Future: Send + 'static,
    {
        self.0.push((wrap(layer), only));
    }

    /// Adds a layer for every call outside those given before.
    #[cfg(all(feature = "cli", feature = "rate-limit"))]
    pub(crate) fn push_outermost<L>(&mut self, layer: L)
    where
        L: Layer<Next> + Send + Sync + 'static,
        L::Service:
            Service<Call, Response = Outcome, Error = BoxError> + Clone + Send + Sync + 'static,
        <L::Service as Service<Call>>::Future: Send + 'static,
    {
        self.0.insert(0, (wrap(layer), None));
    }

    /// The names of tools layers are given for that are none of `registry`'s.
    pub(crate) fn unknown_tools(&self, registry: &Registry) -> Vec<String> {
        self.0
            .iter()
            .filter_map(|(_, only)| only.as_ref())
            .flat_map(|select| select.unknown(registry))
            .map(str::to_owned)
            .collect()
    }

    /// The pipeline: `run` inside every layer, those for some tools stepped past by the calls
    /// of others. Without layers, calls go to `run` directly.
    pub(crate) fn around(&self, run: Run, registry: &Registry) -> Pipeline {
        if self.0.is_empty() {
            return Pipeline::Bare(run);
        }
        let next = self
            .0
            .iter()
            .rev()
            .fold(Next::new(run), |next, (wrap, only)| match only {
                None => wrap(next),
                Some(select) => Next::new(Steer::new(
                    select.resolve(registry),
                    wrap(next.clone()),
                    next,
                )),
            });
        Pipeline::Layered(next)
    }
}

/// What puts `layer` around the rest of the pipeline.
fn wrap<L>(layer: L) -> Wrap
where
    L: Layer<Next> + Send + Sync + 'static,
    L::Service: Service<Call, Response = Outcome, Error = BoxError> + Clone + Send + Sync + 'static,
    <L::Service as Service<Call>>::Future: Send + 'static,
{
    Arc::new(move |next| Next::new(layer.layer(next)))
}

impl fmt::Debug for Layers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Layers({})", self.0.len())
    }
}

/// What every call of a server runs through.
#[derive(Clone)]
pub(crate) enum Pipeline {
    /// No layer: the call runs.
    Bare(Run),
    /// The outermost layer, and those inside it.
    Layered(Next),
}

impl Pipeline {
    /// Runs `call` through every layer, waiting for each to be ready.
    pub(crate) async fn call(&self, call: Call) -> Result<Outcome, BoxError> {
        match self {
            Pipeline::Bare(run) => run.run(call).await,
            Pipeline::Layered(next) => next.clone().oneshot(call).await,
        }
    }
}
