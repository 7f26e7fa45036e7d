//! Layer 4, manifest: what latgen's output files are, for every stage that makes or reads
//! them: the output layout (the two sides, the header, file names) and trees of files with
//! their parsed documents. What the documents mean to the platform (routing, auth, the
//! stored form) is the `latgen_sim` crate's.

pub(crate) mod layout;
pub(crate) mod tree;

/// The manifest files of a folder and its subfolders, in name order: YAML and JSON (what
/// `kong.pluginFiles` names, and what `latgen import` reads).
pub(crate) fn manifest_files(dir: &std::path::Path) -> Vec<std::path::PathBuf> {
    let is_manifest = |p: &std::path::Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| ["yaml", "yml", "json"].contains(&e))
    };
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file() && is_manifest(e.path()))
        .map(walkdir::DirEntry::into_path)
        .collect()
}
