//! Memory for one template render is capped, as its steps are (the fuel) and its recursion:
//! a custom template is untrusted, and a few steps can build strings of gigabytes
//! (`"a" * 100000000` joined ten times, or a string doubled in a loop of thirty), which
//! would end the process with an allocation failure and no word of which template did it.
//!
//! The program's allocator (the CLI's, `src/main.rs`) asks [`charge`] before each
//! allocation and tells [`credit`] of each release. While a thread renders a template,
//! [`within`] counts the bytes it holds; past [`TEMPLATE_MEMORY`], [`exceeded`] reports the
//! template and ends the process with the exit code of an input error, before anything is
//! written (rendering comes before the output stage). The library alone, without that
//! allocator (its tests), does not cap.

use std::cell::Cell;

/// What a custom template may render for one object: the API server stores an object of
/// at most about 1.5 MiB (etcd's default request limit), so a longer one could never apply.
pub const OBJECT_OUTPUT: usize = 3 * 1024 * 1024 / 2;

/// What the custom templates may render in one run, all objects together: the built-in
/// ones render about 230 MiB for 100,000 apps.
pub const CUSTOM_OUTPUT: usize = 1024 * 1024 * 1024;

/// What one render of one template may hold at once. A built-in template's object is a
/// few kilobytes (a group route of 100 rules, an auth policy of 10,000 bytes).
pub const TEMPLATE_MEMORY: usize = 256 * 1024 * 1024;

thread_local! {
    /// The template this thread renders, and the bytes it holds (net of releases).
    static RENDERING: Cell<Option<(&'static str, isize)>> = const { Cell::new(None) };
}

/// Runs `render` as the render of template `name`, its memory counted.
pub fn within<T>(name: &'static str, render: impl FnOnce() -> T) -> T {
    let outer = RENDERING.with(|r| r.replace(Some((name, 0))));
    let out = render();
    RENDERING.with(|r| r.set(outer));
    out
}

/// Counts an allocation of `bytes`; false when it takes the template this thread renders
/// past [`TEMPLATE_MEMORY`]. Outside a template render it always allows.
#[inline]
pub fn charge(bytes: usize) -> bool {
    RENDERING
        .try_with(|r| match r.get() {
            None => true,
            Some((name, held)) => {
                let held = held.saturating_add(bytes as isize);
                r.set(Some((name, held)));
                held <= TEMPLATE_MEMORY as isize
            }
        })
        .unwrap_or(true)
}

/// Counts a release of `bytes`.
#[inline]
pub fn credit(bytes: usize) {
    let _ = RENDERING.try_with(|r| {
        if let Some((name, held)) = r.get() {
            r.set(Some((name, held.saturating_sub(bytes as isize))));
        }
    });
}

/// Reports the template that passed its memory and ends the process (exit 2), from inside
/// the allocator: the report allocates nothing, and this thread's count is off first, so
/// what the exit does allocates freely.
pub fn exceeded() -> ! {
    let name = RENDERING
        .try_with(|r| r.replace(None).map(|(n, _)| n))
        .ok()
        .flatten()
        .unwrap_or("?");
    use std::io::Write as _;
    let mut err = std::io::stderr().lock();
    let _ = err.write_all(b"error[template-error]: template ");
    let _ = err.write_all(name.as_bytes());
    let _ = err.write_all(
        b" used more than 256 MiB of memory rendering one object; latgen stopped before writing anything\n   = help: a template builds one manifest: look for a string repeated or joined with itself (`*`, `~` in a loop, `join`)\n",
    );
    let _ = err.flush();
    drop(err);
    std::process::exit(2)
}
