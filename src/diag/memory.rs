//! Memory at the end of a run.

/// Frees `value` on a thread of its own. A run's trees are hundreds of thousands of small
/// allocations (freeing them took a fifth of a second at 10,000 apps) and the process is
/// about to end, or goes on with other work: its result need not wait for that. It lives
/// here, under every layer, because each layer that holds a run's large values to its end
/// (the gate, the operations) frees them this way, as a rollout frees each of its few
/// rounds' judges (at most 17).
pub(crate) fn free_later<T: Send + 'static>(value: T) {
    // When no thread can be made, the value is dropped with the thread's closure here.
    let _ = std::thread::Builder::new().spawn(move || drop(value));
}
