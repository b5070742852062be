//! The model a server's progressive catalog ranks by meaning with (the `semantic` feature).

use std::sync::Arc;

use super::builder::Server;
use crate::search::{Embedder, VectorCache};

impl Server {
    /// Ranks the progressive catalog's tools by meaning too (`search_tools`, and `--search`):
    /// the model embeds every tool on a thread of its own when the server starts (the ranking
    /// is by words until it is done), then each query, and its similarity is fused with the
    /// lexical score (see [`SearchIndex::with_embedder`](crate::search::SearchIndex::with_embedder)).
    /// A full catalog, which has no search, does not use it. `--embedding-model DIR` on the
    /// command line.
    #[must_use]
    pub fn embedder(mut self, embedder: Embedder) -> Server {
        self.embedder = Some(Arc::new(embedder));
        self
    }

    /// Keeps the tools' vectors in `cache` between starts: a tool whose text the model
    /// embedded before (this server's, or another's sharing the folder) is not embedded again.
    /// `--embedding-cache DIR` on the command line.
    #[must_use]
    pub fn embedding_cache(mut self, cache: VectorCache) -> Server {
        self.kept.cache = Some(cache);
        self
    }

    /// Starts with the tools' vectors its build script made
    /// ([`embedded_vectors!`](crate::build::embedded_vectors), with
    /// [`Guard::embedding_model`](crate::build::Guard::embedding_model)): a tool whose vector
    /// was built is not embedded at start, and when every tool's was, the first search is
    /// ranked by meaning. Vectors of another model than the [`embedder`](Server::embedder)'s
    /// are not used (the log says so), and a tool changed since the build is embedded as
    /// without them.
    ///
    /// ```ignore
    /// toolwright::server!(notes_tools)
    ///     .embedded_manifest(toolwright::build::embedded_manifest!())
    ///     .embedder(Embedder::from_dir("models/all-MiniLM-L6-v2")?)
    ///     .embedded_vectors(toolwright::build::embedded_vectors!())
    ///     .run()
    /// ```
    #[must_use]
    pub fn embedded_vectors(mut self, vectors: &'static [u8]) -> Server {
        self.kept.built = Some(vectors);
        self
    }

    /// The model search ranks by meaning with, if any, and the vectors it starts with.
    #[cfg(feature = "cli")]
    pub(crate) fn embedder_given(&self) -> Option<(Arc<Embedder>, crate::search::Kept)> {
        let embedder = self.embedder.clone()?;
        Some((embedder, self.kept.clone()))
    }
}
