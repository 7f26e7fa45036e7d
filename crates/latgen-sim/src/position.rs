//! Where a value was written in a YAML file, for findings that point at it.

use serde_saphyr::Spanned;

/// A position in a YAML file (1-based line and column).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Pos {
    pub line: u32,
    pub column: u32,
}

impl Pos {
    pub fn of<T>(s: &Spanned<T>) -> Pos {
        Pos {
            line: s.referenced.line() as u32,
            column: s.referenced.column() as u32,
        }
    }
}
