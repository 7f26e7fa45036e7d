//! Previews past the day their file says they end (`preview-expired`): a preview left
//! behind holds a rule of a preview group, a target group and a public host.

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::plan::prepared::Prepared;

/// Today in UTC, the day `expires:` is compared with.
fn today() -> jiff::civil::Date {
    jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .date()
}

/// A warning per preview whose `expires` day has passed.
pub(crate) fn preview_findings(prepared: &Prepared) -> Diagnostics {
    let mut diags = Diagnostics::new();
    if prepared.plan.previews.list.is_empty() {
        return diags;
    }
    let today = today();
    for p in prepared
        .plan
        .previews
        .list
        .iter()
        .filter(|p| p.expires < today)
    {
        diags.push(
            Diagnostic::warning(
                Code::PreviewExpired,
                format!(
                    "preview `{}` of app `{}` expired on {} and still routes {}",
                    p.name, p.app_name, p.expires, p.host
                ),
            )
            .at(Span::new(&p.file, p.name_pos.line, p.name_pos.column))
            .help(format!(
                "delete {} and run `latgen render` (or move `expires:` on if it is still wanted)",
                p.file.display()
            )),
        );
    }
    diags
}
