//! Parallel loops, under every layer: each layer that runs a loop over many costly items
//! (parsing a file, rendering an object, following a request) cuts it the same way.

/// The most items one piece of such a loop holds. Rayon cuts a loop into a few large
/// pieces and cuts again only when an idle thread takes one: a piece already running is
/// not cut, so one thread could end the loop alone for a quarter of its time (a render of
/// 10,000 apps spent 0.1 s parsing the last declarations on one of two cores).
pub(crate) const PIECE: usize = 32;
