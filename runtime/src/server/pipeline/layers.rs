//! The layers a server's author gives ([`Server::layer`](crate::Server::layer)), and the
//! pipeline they make around [`Run`].

use std::fmt;
use std::sync::Arc;

use tower::ServiceExt as _;

use super::{BoxError, Call, Layer, Next, Outcome, Run, Service};

/// Wraps the rest of the pipeline in one layer.
type Wrap = Arc<dyn Fn(Next) -> Next + Send + Sync>;

/// The layers of a server, outermost first.
#[derive(Clone, Default)]
pub(crate) struct Layers(Vec<Wrap>);

impl Layers {
    /// Adds a layer inside those given before.
    pub(crate) fn push<L>(&mut self, layer: L)
    where
        L: Layer<Next> + Send + Sync + 'static,
        L::Service:
            Service<Call, Response = Outcome, Error = BoxError> + Clone + Send + Sync + 'static,
        <L::Service as Service<Call>>::Future: Send + 'static,
    {
        self.0
            .push(Arc::new(move |next| Next::new(layer.layer(next))));
    }

    /// The pipeline: `run` inside every layer. Without layers, calls go to `run` directly.
    pub(crate) fn around(&self, run: Run) -> Pipeline {
        if self.0.is_empty() {
            return Pipeline::Bare(run);
        }
        let next = self
            .0
            .iter()
            .rev()
            .fold(Next::new(run), |next, wrap| wrap(next));
        Pipeline::Layered(next)
    }
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
