//! Trees of output files and their parsed documents: the form every later stage (render's
//! steps between two versions, the change judge, the PR summary, check) reads the output
//! in. A tree is the files by relative path; [`Docs`] are its manifests parsed once.

use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::manifest::layout::{Side, is_kong_file, is_kustomization, side_of};
use latgen_sim::routing::{Doc, Network, Source};

/// A file's text, shared: the trees of a change (the base read from Git, the committed
/// folder, each step, the target) hold the same text for most files, and a large tree's
/// texts are tens of megabytes, so each is held once.
pub(crate) type Text = Arc<str>;

/// Files under the output folder, by relative path.
pub(crate) type Tree = BTreeMap<PathBuf, Text>;

/// A tree of manifests read once into documents, by path under the output folder. An
/// unreadable file adds nothing: its routes are simply absent from a state built with it.
/// Each document is shared: the states of a change (its base, its steps, its target) are
/// made of the same documents but for a few files, and each holds them all.
#[derive(Clone, Debug, Default)]
pub(crate) struct Docs(Vec<(PathBuf, Arc<Doc>)>);

impl Docs {
    pub fn read(files: &Tree) -> Docs {
        use rayon::prelude::*;
        let files: Vec<_> = (files.iter())
            .filter(|(rel, _)| !is_kustomization(rel))
            .collect();
        Docs(
            files
                .into_par_iter()
                .with_max_len(crate::diag::PIECE)
                .filter_map(|(rel, text)| {
                    let doc = Doc::parse(rel, text, is_kong_file(rel)).ok()?;
                    Some((rel.clone(), Arc::new(doc)))
                })
                .collect(),
        )
    }

    /// Like [`Docs::read`], taking each file whose text is the same in `known` from
    /// `known_docs` (its documents) rather than parsing it again: two versions of a large
    /// tree differ in a few files. The documents taken have no line numbers when
    /// `known_docs` has none.
    pub fn read_like(files: &Tree, known: &Tree, known_docs: &Docs) -> Docs {
        Docs::read_like_either(files, (known, known_docs), None)
    }

    /// [`Docs::read_like`] with a second tree of known documents, tried where the first
    /// has another text: a step between two trees holds each file as one or the other
    /// has it, and after a change of every app (a switch of dispatch mode) the first
    /// steps are mostly the base, which the target shares few files with.
    pub fn read_like_either<'a>(
        files: &'a Tree,
        first: (&'a Tree, &'a Docs),
        second: Option<(&'a Tree, &'a Docs)>,
    ) -> Docs {
        use rayon::prelude::*;
        // Cut into runs of files, each walked beside the known trees and its texts compared
        // with theirs on a core of its own.
        let runs: Vec<Vec<(PathBuf, Arc<Doc>)>> = (cuts(files).into_par_iter())
            .map(|cut| {
                let in_cut = |(tree, docs): (&'a Tree, &'a Docs)| {
                    known_candidates(run(files, cut), (run(tree, cut), docs.in_cut(cut)))
                };
                let seconds = second.map(|known| in_cut(known).map(|(_, _, k)| k));
                let seconds =
                    (seconds.into_iter().flatten().map(Some)).chain(std::iter::repeat(None));
                (in_cut(first).zip(seconds))
                    .filter_map(|((rel, text, known), other)| {
                        let mut same = [known, other.flatten()].into_iter().flatten();
                        let doc = match same.find(|(t, _)| *t == text) {
                            Some((_, d)) => Arc::clone(d),
                            None => Arc::new(Doc::parse(rel, text, is_kong_file(rel)).ok()?),
                        };
                        Some((rel.clone(), doc))
                    })
                    .collect()
            })
            .collect();
        Docs(runs.into_iter().flatten().collect())
    }

    /// The documents of the files in `cut`.
    fn in_cut(&self, (from, to): Cut<'_>) -> &[(PathBuf, Arc<Doc>)] {
        let below = |p: Option<&PathBuf>| p.map(|p| self.0.partition_point(|(q, _)| q < p));
        &self.0[below(from).unwrap_or(0)..below(to).unwrap_or(self.0.len())]
    }

    /// Documents made elsewhere (the render's, from its typed model), by path in order.
    pub fn from_docs(docs: Vec<(PathBuf, Arc<Doc>)>) -> Docs {
        Docs(docs)
    }

    /// Every document, by path in order.
    pub fn iter(&self) -> impl Iterator<Item = (&Path, &Doc)> {
        self.0.iter().map(|(rel, doc)| (rel.as_path(), &**doc))
    }

    /// The document of one file.
    #[cfg(test)]
    pub fn get(&self, rel: &Path) -> Option<&Doc> {
        self.shared(rel).map(|d| &**d)
    }

    /// The shared document of one file.
    pub fn shared(&self, rel: &Path) -> Option<&Arc<Doc>> {
        let i = self
            .0
            .binary_search_by(|(p, _)| p.as_path().cmp(rel))
            .ok()?;
        Some(&self.0[i].1)
    }

    /// These documents with some files' changed: each to the document given, or gone
    /// (None). The few positions are looked up and the rest copied in runs: a state of a
    /// change is tried once per edit, over thousands of files.
    pub fn with_changes(&self, mut changes: Vec<(PathBuf, Option<Arc<Doc>>)>) -> Docs {
        // Sorted on every core: a switch of dispatch mode tries twenty thousand at once,
        // and paths compare component by component.
        rayon::slice::ParallelSliceMut::par_sort_by(&mut changes[..], |a, b| a.0.cmp(&b.0));
        let mut out = Vec::with_capacity(self.0.len() + changes.len());
        let mut from = 0;
        for (rel, doc) in changes {
            let rest = &self.0[from..];
            // Where every file changes (a change of every app), the next change is the next
            // document: it is looked at before the rest is searched.
            let (at, replaced) = match rest.first().map(|(p, _)| p.cmp(&rel)) {
                None | Some(std::cmp::Ordering::Greater) => (from, false),
                Some(std::cmp::Ordering::Equal) => (from, true),
                Some(std::cmp::Ordering::Less) => {
                    match rest[1..].binary_search_by(|(p, _)| p.cmp(&rel)) {
                        Ok(i) => (from + 1 + i, true),
                        Err(i) => (from + 1 + i, false),
                    }
                }
            };
            out.extend_from_slice(&self.0[from..at]);
            from = at + usize::from(replaced);
            out.extend(doc.map(|d| (rel, d)));
        }
        out.extend_from_slice(&self.0[from..]);
        Docs(out)
    }

    /// The documents of the files in `keep` only.
    pub fn only(&self, keep: &BTreeSet<PathBuf>) -> Docs {
        if most_of(keep.len(), self.0.len()) {
            let all = self.0.iter().map(|(rel, doc)| (rel, doc));
            return Docs(
                (within(all, keep))
                    .map(|(rel, doc)| (rel.clone(), Arc::clone(doc)))
                    .collect(),
            );
        }
        // A few files of a large tree: each is looked up, not every document tried.
        Docs(
            keep.iter()
                .filter_map(|rel| Some((rel.clone(), Arc::clone(self.shared(rel)?))))
                .collect(),
        )
    }

    /// Whether `other` holds the same documents as this on `side`: the same files, each
    /// with the very document (shared, not equal), so that a state made with either half
    /// is the same network.
    pub fn same_half(&self, other: &Docs, side: Side) -> bool {
        fn ptrs(docs: &Docs, side: Side) -> impl Iterator<Item = (&OsStr, *const Doc)> {
            (docs.0.iter())
                .filter(move |(rel, _)| side_of(rel) == side)
                .map(|(rel, doc)| (rel.as_os_str(), Arc::as_ptr(doc)))
        }
        ptrs(self, side).eq(ptrs(other, side))
    }

    fn half(&self, side: Side) -> impl Iterator<Item = (&Path, Source<'_>, bool)> {
        self.0
            .iter()
            .filter(move |(rel, _)| side_of(rel) == side)
            .map(move |(rel, doc)| (rel.as_path(), Source::Read(doc), side == Side::Kong))
    }
}

/// Each file of `files` (kustomizations aside), with the document `known_docs` has of it when
/// its text is the same in `known` (the tree those documents were made of). The trees are
/// sorted alike, so they are walked side by side rather than looked up file by file.
pub(crate) fn with_known_docs<'a>(
    files: &'a Tree,
    known: (&'a Tree, &'a Docs),
) -> impl Iterator<Item = (&'a PathBuf, &'a Text, Option<&'a Doc>)> {
    let (known, docs) = known;
    known_candidates(files.iter(), (known.iter(), &docs.0)).map(|(rel, text, known)| {
        let doc = known.filter(|(t, _)| *t == text).map(|(_, d)| &**d);
        (rel, text, doc)
    })
}

/// Like [`with_known_docs`], with the known text beside each document instead of compared
/// with the file's: the caller compares them (in parallel, for a large tree).
#[allow(clippy::type_complexity)]
fn known_candidates<'a>(
    files: impl Iterator<Item = (&'a PathBuf, &'a Text)>,
    (known, known_docs): (
        impl Iterator<Item = (&'a PathBuf, &'a Text)>,
        &'a [(PathBuf, Arc<Doc>)],
    ),
) -> impl Iterator<Item = (&'a PathBuf, &'a Text, Option<(&'a Text, &'a Arc<Doc>)>)> {
    let files = files.filter(|(rel, _)| !is_kustomization(rel));
    let with_text = beside(files, known).map(|(rel, text, k)| (rel, (text, k)));
    let docs = known_docs.iter().map(|(rel, doc)| (rel, doc));
    beside(with_text, docs).map(|(rel, (text, known), doc)| (rel, text, known.zip(doc)))
}

/// Each item of `items` with the item of `other` at the same path, if it has one. Both come
/// in path order (each path once), so they are walked side by side rather than each path
/// looked up: a look-up in a tree of tens of thousands of files compares paths at each of
/// about 15 levels.
pub(crate) fn beside<'a, A, B>(
    items: impl Iterator<Item = (&'a PathBuf, A)>,
    other: impl Iterator<Item = (&'a PathBuf, B)>,
) -> impl Iterator<Item = (&'a PathBuf, A, Option<B>)> {
    let mut other = other.peekable();
    items.map(move |(rel, a)| {
        while other.next_if(|(p, _)| *p < rel).is_some() {}
        let b = other.next_if(|(p, _)| *p == rel).map(|(_, b)| b);
        (rel, a, b)
    })
}

/// The texts and documents of a change's two trees (its base's and its target's), by path.
/// A judge looks a file up here for every edit it tries: a switch of dispatch mode tries
/// twenty thousand at once, and an ordered tree compares paths component by component at
/// each of its levels.
#[derive(Default)]
pub(crate) struct TwoTrees(
    std::collections::HashMap<PathBuf, [Option<Held>; 2], latgen_sim::routing::Hasher>,
);

/// A file's text in one tree, and its document when it is a manifest read.
type Held = (Text, Option<Arc<Doc>>);

/// One of [`TwoTrees`].
#[derive(Clone, Copy, Debug)]
pub(crate) enum Which {
    Base = 0,
    Target = 1,
}

impl TwoTrees {
    /// The base's tree and the target's, each with its documents (a file without one is
    /// not a manifest read).
    pub fn of(base: (&Tree, &Docs), target: (&Tree, &Docs)) -> TwoTrees {
        let mut known = std::collections::HashMap::with_capacity_and_hasher(
            base.0.len(),
            latgen_sim::routing::Hasher::default(),
        );
        for (which, (tree, docs)) in [(Which::Base, base), (Which::Target, target)] {
            let docs = docs.0.iter().map(|(rel, doc)| (rel, doc));
            for (rel, text, doc) in beside(tree.iter(), docs) {
                let both: &mut [Option<_>; 2] = known.entry(rel.clone()).or_default();
                both[which as usize] = Some((Text::clone(text), doc.cloned()));
            }
        }
        TwoTrees(known)
    }

    /// The files either tree holds, in no order.
    #[cfg(test)]
    pub fn paths(&self) -> impl Iterator<Item = &Path> {
        self.0.keys().map(PathBuf::as_path)
    }

    /// Whether either tree holds file `rel`.
    pub fn holds(&self, rel: &Path) -> bool {
        self.0.contains_key(rel)
    }

    /// The text of file `rel` in one of the trees, and its document; None when that tree
    /// does not hold it, `Err` when neither does.
    pub fn side(&self, rel: &Path, which: Which) -> Result<Option<&Held>, ()> {
        self.0
            .get(rel)
            .map(|both| both[which as usize].as_ref())
            .ok_or(())
    }

    /// The document of file `rel` in one of the trees.
    pub fn doc_in(&self, rel: &Path, which: Which) -> Option<&Doc> {
        self.side(rel, which).ok()??.1.as_deref()
    }

    /// The document of file `rel` when `text` is its text in either tree (the base's,
    /// where both hold it): None when neither does, or that tree has no document of it.
    pub fn doc(&self, rel: &Path, text: &Text) -> Option<&Arc<Doc>> {
        (self.0.get(rel)?.iter().flatten())
            .find(|(known, _)| known == text)
            .and_then(|(_, doc)| doc.as_ref())
    }
}

/// The files of `tree` that are in `keep`: a few files of a large tree, each looked up.
pub(crate) fn subtree(tree: &Tree, keep: &BTreeSet<PathBuf>) -> Tree {
    if most_of(keep.len(), tree.len()) {
        return (within(tree.iter(), keep))
            .map(|(rel, text)| (rel.clone(), Text::clone(text)))
            .collect();
    }
    (keep.iter())
        .filter_map(|rel| Some((rel.clone(), tree.get(rel)?.clone())))
        .collect()
}

/// Whether `few` paths are enough of `all` that walking all of them beside the few costs
/// less than looking each of the few up (a look-up costs a path comparison per level).
fn most_of(few: usize, all: usize) -> bool {
    few.saturating_mul(16) >= all
}

/// The items (in path order) whose path `keep` holds, found by walking both side by side.
fn within<'a, T>(
    items: impl Iterator<Item = (&'a PathBuf, T)>,
    keep: &'a BTreeSet<PathBuf>,
) -> impl Iterator<Item = (&'a PathBuf, T)> {
    let kept = keep.iter().map(|rel| (rel, ()));
    beside(items, kept).filter_map(|(rel, item, kept)| kept.map(|()| (rel, item)))
}

/// `tree`'s texts that `like` holds too, at the same path, made `like`'s own: the two
/// trees then hold one copy of each, and every later comparison of them is by address.
/// (Two trees read apart, such as the committed folder and the render, hold equal texts in
/// different places.)
pub(crate) fn share_texts(tree: &mut Tree, like: &Tree) {
    use rayon::prelude::*;
    let pairs: Vec<(&mut Text, &Text)> = beside(tree.iter_mut(), like.iter())
        .filter_map(|(_, text, known)| Some((text, known?)))
        .collect();
    pairs.into_par_iter().for_each(|(text, known)| {
        if *text == *known {
            *text = Arc::clone(known);
        }
    });
}

/// The files whose text differs between two trees (kustomizations aside). Both are
/// sorted alike, so they are walked side by side.
pub(crate) fn changed_files(a: &Tree, b: &Tree) -> BTreeSet<PathBuf> {
    changes(a, b).0
}

/// [`changed_files`], and whether they are every file of the two trees (kustomizations
/// aside): a change of every app, such as a switch of dispatch mode, changes them all, and
/// what a change cannot touch need not be looked for then.
pub(crate) fn changes(a: &Tree, b: &Tree) -> (BTreeSet<PathBuf>, bool) {
    let (differ, files) = differing(a, b);
    let every = differ.len() == files;
    (
        differ.into_iter().map(|(rel, _, _)| rel.clone()).collect(),
        every,
    )
}

/// A file of two trees and its text in each (None where a tree has no such file).
pub(crate) type Pair<'a> = (&'a PathBuf, Option<&'a Text>, Option<&'a Text>);

/// The files whose text differs between two trees, with their texts, in path order
/// (kustomizations aside), and how many files the two hold together.
pub(crate) fn differing<'a>(a: &'a Tree, b: &'a Tree) -> (Vec<Pair<'a>>, usize) {
    use rayon::prelude::*;
    // Both trees cut at the same paths (the larger's runs), each run walked side by side and
    // its texts compared on a core of its own.
    let larger = if a.len() >= b.len() { a } else { b };
    let runs: Vec<(Vec<Pair<'a>>, usize)> = (cuts(larger).into_par_iter())
        .map(|cut| {
            let mut files = 0;
            let differ = (merged(run(a, cut), run(b, cut)))
                .filter(|(rel, _, _)| !is_kustomization(rel))
                .inspect(|_| files += 1)
                .filter(|(_, s, t)| s != t)
                .collect();
            (differ, files)
        })
        .collect();
    let files = runs.iter().map(|(_, files)| files).sum();
    (runs.into_iter().flat_map(|(d, _)| d).collect(), files)
}

/// Two runs of files side by side in path order, each file once with its text in each.
fn merged<'a>(
    a: impl Iterator<Item = (&'a PathBuf, &'a Text)>,
    b: impl Iterator<Item = (&'a PathBuf, &'a Text)>,
) -> impl Iterator<Item = Pair<'a>> {
    use std::cmp::Ordering;
    let (mut x, mut y) = (a.peekable(), b.peekable());
    std::iter::from_fn(move || {
        let order = match (x.peek(), y.peek()) {
            (None, None) => return None,
            (Some(_), None) => Ordering::Less,
            (None, Some(_)) => Ordering::Greater,
            (Some((p, _)), Some((q, _))) => p.cmp(q),
        };
        match order {
            Ordering::Less => x.next().map(|(p, s)| (p, Some(s), None)),
            Ordering::Greater => y.next().map(|(q, t)| (q, None, Some(t))),
            Ordering::Equal => {
                (x.next().zip(y.next())).map(|((p, s), (_, t))| (p, Some(s), Some(t)))
            }
        }
    })
}

/// The paths from one (or the first) up to another, that one not included (or to the
/// last): a rollout walks its trees of tens of thousands of files beside each other many
/// times, pair by pair of paths compared component by component, and the cuts of a tree
/// are walked on every core.
type Cut<'a> = (Option<&'a PathBuf>, Option<&'a PathBuf>);

/// `tree` cut into runs of a few hundred files, in order, that together hold every path
/// (of `tree`, and of any other tree walked beside it).
fn cuts(tree: &Tree) -> Vec<Cut<'_>> {
    const FILES: usize = 512;
    let mut out = Vec::with_capacity(tree.len() / FILES + 1);
    let mut from = None;
    for at in tree.keys().step_by(FILES).skip(1) {
        out.push((from, Some(at)));
        from = Some(at);
    }
    out.push((from, None));
    out
}

/// The files of `tree` in `cut`.
fn run<'a>(
    tree: &'a Tree,
    (from, to): Cut<'_>,
) -> std::collections::btree_map::Range<'a, PathBuf, Text> {
    let from = from.map_or(Bound::Unbounded, Bound::Included);
    let to = to.map_or(Bound::Unbounded, Bound::Excluded);
    tree.range::<PathBuf, _>((from, to))
}

/// The routing state with the Lattice side of one tree and the Kong side of another.
pub(crate) fn state(lattice: &Docs, kong: &Docs) -> Network {
    let list: Vec<_> = kong
        .half(Side::Kong)
        .chain(lattice.half(Side::Lattice))
        .collect();
    Network::from_sources(&list).0
}

/// Which rules a Lattice route between two versions keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Keep {
    /// The rules of both: old rules stay while Kong still sends requests to them.
    Both,
    /// Only the rules both have: old rules go (Kong has left them) before new ones come,
    /// when both together would be over the quota.
    Common,
}

/// How a step's files are made that are neither the base's nor the target's.
pub(crate) trait Versions: Sync {
    /// A Lattice route between `base` and `target` (same path), or None when it cannot be
    /// made.
    fn between(&self, rel: &Path, base: &str, target: &str, keep: Keep) -> Option<String>;
    /// The kustomization of a side that holds `files` (names under the side's folder).
    fn kustomization(&self, side: Side, files: &[&Path]) -> Option<Text>;
    /// The PrometheusRule of Lattice route `route` while the Kong side sends it the apps
    /// `apps` (by name), or None when it cannot be made (an app no longer declared).
    fn monitoring(&self, route: &str, apps: &[&str]) -> Option<String>;
}

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

#[cfg(test)]
mod tests {
    use super::*;

    /// `n` bridge Services (each a routing document) and a kustomization, their texts
    /// naming `to`.
    fn bridges(n: usize, to: &str) -> Tree {
        let mut tree: Tree = (0..n)
            .map(|i| {
                let text = format!(
                    "apiVersion: v1\nkind: Service\nmetadata:\n  name: s{i}\n  namespace: k\n\
                     spec:\n  type: ExternalName\n  externalName: {to}\n"
                );
                (
                    PathBuf::from(format!("kong/service-s{i:04}.yaml")),
                    text.into(),
                )
            })
            .collect();
        tree.insert("kong/kustomization.yaml".into(), "resources: []\n".into());
        tree
    }

    /// Trees of several runs each, of other sizes and other files: `differing` finds what
    /// comparing file by file finds, in path order, and counts the files of both.
    #[test]
    fn trees_cut_into_runs_differ_where_their_files_do() {
        let a = bridges(1500, "a");
        let mut b: Tree = bridges(1300, "a");
        for i in (0..1300).step_by(7) {
            b.insert(
                format!("kong/service-s{i:04}.yaml").into(),
                "changed\n".into(),
            );
        }
        b.insert("lattice/extra.yaml".into(), "x\n".into());
        let paths: BTreeSet<&PathBuf> = (a.keys().chain(b.keys()))
            .filter(|rel| !is_kustomization(rel))
            .collect();
        let want: Vec<&PathBuf> = (paths.iter().copied())
            .filter(|rel| a.get(*rel) != b.get(*rel))
            .collect();
        for (x, y) in [(&a, &b), (&b, &a)] {
            let (differ, files) = differing(x, y);
            let got: Vec<&PathBuf> = differ.iter().map(|(rel, _, _)| *rel).collect();
            assert_eq!(got, want);
            assert_eq!(files, paths.len());
        }
    }

    /// A step's documents, read in runs, are the known ones where the text is the same
    /// (the very documents), and parsed where it is not, for every file once, in order.
    #[test]
    fn documents_read_in_runs_are_the_known_ones_where_the_text_is() {
        let known = bridges(1200, "old");
        let known_docs = Docs::read(&known);
        assert_eq!(
            known_docs.0.len(),
            1200,
            "each bridge is a routing document"
        );
        let mut step = bridges(1100, "old");
        step.insert(
            "kong/service-s0700.yaml".into(),
            known["kong/service-s0701.yaml".as_ref() as &Path].clone(),
        );
        step.extend(
            bridges(1300, "new")
                .into_iter()
                .filter(|(rel, _)| rel.ends_with("s1250.yaml")),
        );
        let docs = Docs::read_like(&step, &known, &known_docs);
        let want: Vec<&PathBuf> = step.keys().filter(|rel| !is_kustomization(rel)).collect();
        let got: Vec<&PathBuf> = docs.0.iter().map(|(rel, _)| rel).collect();
        assert_eq!(got, want);
        for (rel, doc) in &docs.0 {
            let same = known.get(rel) == step.get(rel);
            let shared = known_docs.shared(rel).is_some_and(|k| Arc::ptr_eq(k, doc));
            assert_eq!(shared, same, "{}", rel.display());
        }
    }

    #[test]
    fn the_documents_in_a_cut_are_those_of_its_files() {
        let tree = bridges(1100, "a");
        let docs = Docs::read(&tree);
        for cut in cuts(&tree) {
            let files: Vec<&PathBuf> = run(&tree, cut).map(|(rel, _)| rel).collect();
            let files: Vec<&PathBuf> = files.into_iter().filter(|r| !is_kustomization(r)).collect();
            let in_cut: Vec<&PathBuf> = docs.in_cut(cut).iter().map(|(rel, _)| rel).collect();
            assert_eq!(in_cut, files);
        }
        assert_eq!(cuts(&tree).len(), 3, "1,101 files in runs of 512");
    }
}
