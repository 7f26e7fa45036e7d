//! Layer 10, report: machine formats for findings: JSON lines (one object per finding),
//! GitHub Actions workflow commands, and SARIF 2.1.0 for code scanning. Human output is in
//! `diag`.

mod formats;
pub(crate) mod markdown;
mod sections;

pub(crate) use formats::*;
