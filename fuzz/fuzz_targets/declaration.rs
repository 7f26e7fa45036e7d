//! One app declaration, as any bytes: loading and validating it must never panic or hang,
//! and whatever is refused must come with a place in the file.
#![no_main]

use std::path::Path;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let mut diags = latgen::diag::Diagnostics::new();
    let file = Path::new("apps/fuzz.yaml").to_path_buf();
    let loaded = latgen::input::from_texts(None, None, &[(file, text.to_string())], &mut diags);
    let _ = latgen::validate::validate(&loaded, Path::new("latgen.yaml"), &mut diags);
    for d in diags.iter() {
        assert!(d.span.is_some(), "a finding without a place: {d:?}");
    }
});
