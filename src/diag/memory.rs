//! Memory at the end of a run.

/// Frees `value` on a thread of its own. A run's trees are hundreds of thousands of small
/// allocations (freeing them took a fifth of a second at 10,000 apps) and the process is
/// about to end: its result need not wait for that. It lives here, under every layer,
/// because each layer that holds a run's large values to its end (the gate, the
/// operations) frees them this way.
pub(crate) fn free_later<T: Send + 'static>(value: T) {
    // When no thread can be made, the value comes back in the error and is freed here.
    let _ = std::thread::Builder::new().spawn(move || drop(value));
}
