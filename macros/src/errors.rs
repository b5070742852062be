//! The accumulator every stage pushes its mistakes into, so that one build shows them all.

/// Mistakes found so far, combined into one error so that all of them are reported.
#[derive(Default)]
pub(crate) struct Errors(Option<syn::Error>);

impl Errors {
    pub(crate) fn push(&mut self, error: syn::Error) {
        match &mut self.0 {
            Some(first) => first.combine(error),
            None => self.0 = Some(error),
        }
    }

    pub(crate) fn take(self) -> Option<syn::Error> {
        self.0
    }
}
