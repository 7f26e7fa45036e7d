//! A state of a change as its base and edits to some of its files: a step is tried one
//! unit of edits at a time, and trying one copies no tree.

use std::path::{Path, PathBuf};

use crate::manifest::layout::is_kustomization;
use crate::manifest::tree::{Text, Tree, TwoTrees, Which};

/// One way to change one file: to this text, or away (None).
pub(super) type Edit = (PathBuf, Option<Text>);

/// Edits that go together: a Kong route and its bridge switch as one, or the request
/// would reach one Lattice service with the Host of another.
pub(super) type Unit = Vec<Edit>;

/// `base` with `edits` made, its kustomizations left out. The texts kept are the base's
/// own, shared rather than copied.
pub(super) fn overlaid(base: &Tree, mut edits: Edits) -> Tree {
    // Built at once from the base's files in order, then the added ones sorted (the
    // collect's stable sort merges the two runs): a switch's step edits twenty thousand
    // files, and inserting each into the ordered tree compared paths component by component.
    let mut files: Vec<(PathBuf, Text)> = Vec::with_capacity(base.len() + edits.len());
    for (rel, text) in base.iter().filter(|(rel, _)| !is_kustomization(rel)) {
        match edits.remove(rel) {
            Some(edit) => files.extend(edit.map(|t| (rel.clone(), t))),
            None => files.push((rel.clone(), Text::clone(text))),
        }
    }
    // The files the base does not hold, or holds only as a kustomization (left out above).
    let mut added: Vec<(PathBuf, Text)> = (edits.into_iter())
        .filter_map(|(rel, text)| Some((rel, text?)))
        .collect();
    added.sort_by(|a, b| a.0.cmp(&b.0));
    files.extend(added);
    files.into_iter().collect()
}

/// Edits to some files of a tree (None: the file is gone), by path. Only ever looked up
/// or gathered into ordered sets: hashed, since the tries of a switch's step add thousands
/// of them, and an ordered map compares paths component by component (at 10,000 apps a
/// twentieth of the step).
pub(super) type Edits =
    std::collections::HashMap<PathBuf, Option<Text>, latgen_sim::routing::Hasher>;

/// A tree as a base and edits to some of its files.
pub(super) struct Overlay<'a> {
    pub base: &'a Tree,
    /// The judge's texts of the files in scope, the base's among them: a file of the
    /// change is looked up there rather than in the ordered tree (see [`TwoTrees`]).
    pub known: &'a TwoTrees,
    pub edits: Edits,
}

impl Overlay<'_> {
    /// Whether the base holds file `rel`: asked of the judge's index first, as in
    /// [`Overlay::get`] (a switch's state has twenty thousand edits to ask about).
    pub fn base_holds(&self, rel: &Path) -> bool {
        match self.known.side(rel, Which::Base) {
            Ok(known) => known.is_some(),
            Err(()) => self.base.contains_key(rel),
        }
    }

    pub fn get(&self, rel: &Path) -> Option<&Text> {
        match self.edits.get(rel) {
            Some(edit) => edit.as_ref(),
            None => match self.known.side(rel, Which::Base) {
                Ok(known) => known.map(|(text, _)| text),
                Err(()) => self.base.get(rel),
            },
        }
    }
}
