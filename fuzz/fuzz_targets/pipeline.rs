//! A whole project from any bytes: up to a few declarations, settings and a lock, through
//! load → validate → plan → render. Nothing may panic, and a project that plans must render
//! with the built-in templates' output equal to its typed model (no `rendered-invalid`),
//! which is what lets a run skip reading it back.
#![no_main]

use libfuzzer_sys::fuzz_target;

#[path = "../common/pipeline.rs"]
mod pipeline;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    // Sections split by a line `%%`: settings, lock, then declarations.
    pipeline::assert_no_rendered_invalid(&pipeline::Project::from_sections(text));
});
