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
        self.embedding_cache = Some(cache);
        self
    }

    /// The model search ranks by meaning with, if any, and where its vectors are kept.
    #[cfg(feature = "cli")]
    pub(crate) fn embedder_given(&self) -> Option<(Arc<Embedder>, Option<VectorCache>)> {
        let embedder = self.embedder.clone()?;
        Some((embedder, self.embedding_cache.clone()))
    }
}
