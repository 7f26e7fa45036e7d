//! A declaration's routing values: its host, its paths (or `/` for a host-routed app that
//! lists none), its group pin and its health check.

use std::path::Path;

use serde_saphyr::Spanned;

use crate::diag::codes::Code;
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::{HealthCheck, MatchKind, PathDecl, PathMatch, Pos};
use crate::input::config::Config;
use crate::input::quotas::Quotas;
use latgen_sim::platform;

pub(super) fn validate_host(
    file: &Path,
    host: Option<&Spanned<String>>,
    config: &Config,
    diags: &mut Diagnostics,
) -> Option<String> {
    host.map(|h| {
        // The groups' own names live under this domain: a declared host there would collide
        // with a group's custom domain name once the group exists.
        let own = &config.lattice.domain;
        let under_own = h.value == *own || h.value.ends_with(&format!(".{own}"));
        if under_own {
            diags.push(
                Diagnostic::error(
                    Code::InvalidHost,
                    format!(
                        "host `{}` is under `{own}`, the domain latgen names its groups in (`lattice.domain` in latgen.yaml)",
                        h.value
                    ),
                )
                .at(span(file, Pos::of(h)))
                .help("give the app a host of its own outside that domain, e.g. shop.example.com"),
            );
        }
        if let Some(p) = platform::hostname_problem(&h.value) {
            let help = match platform::bare_host(&h.value) {
                Some(bare) if platform::hostname_problem(bare).is_none() => {
                    format!("write `host: {bare}`")
                }
                _ => "give the lowercase DNS name the app answers on, e.g. shop.example.com"
                    .to_string(),
            };
            diags.push(
                Diagnostic::error(Code::InvalidHost, format!("host `{}` {p}", h.value))
                    .at(span(file, Pos::of(h)))
                    .help(help),
            );
        }
        h.value.clone()
    })
}

/// The app's matches: the listed paths, or `/` for a host-routed app that lists none.
pub(super) fn validate_paths(
    file: &Path,
    list: Option<&Spanned<Vec<Spanned<PathDecl>>>>,
    host: Option<&Spanned<String>>,
    diags: &mut Diagnostics,
) -> Vec<PathMatch> {
    let mut paths = Vec::new();
    match (list, host) {
        (Some(list), _) => {
            if list.value.is_empty() {
                diags.push(
                    Diagnostic::error(Code::NoPaths, "`paths` is empty")
                        .at(span(file, Pos::of(list)))
                        .help(if host.is_some() {
                            "remove `paths` to serve the whole host, or list the paths"
                        } else {
                            "list at least one path, e.g. `paths: [/shop]`"
                        }),
                );
            }
            for p in &list.value {
                if let Some(m) = validate_path(file, p, &paths, diags) {
                    paths.push(m);
                }
            }
        }
        (None, Some(host)) => paths.push(PathMatch {
            kind: MatchKind::Prefix,
            value: "/".into(),
            pos: Pos::of(host),
        }),
        (None, None) => diags.push(
            Diagnostic::error(Code::MissingField, "missing field `paths` (or `host`)")
                .at(Span::new(file, 1, 1))
                .help("add `paths: [/your-prefix]`, or `host:` for an app on its own host"),
        ),
    }
    paths
}

/// One entry of `paths`; None when it repeats an earlier entry (`earlier`).
fn validate_path(
    file: &Path,
    p: &Spanned<PathDecl>,
    earlier: &[PathMatch],
    diags: &mut Diagnostics,
) -> Option<PathMatch> {
    let pos = Pos::of(p);
    let problems = platform::path_problems(&p.value.value);
    let refused = !problems.is_empty();
    for prob in problems {
        diags.push(
            Diagnostic::error(Code::from(prob.fault), prob.message)
                .at(span(file, pos))
                .help(prob.help),
        );
    }
    // A refused path needs no advice on how Kong would read it.
    let meta = platform::kong_regex_metachars(&p.value.value);
    if !refused && !meta.is_empty() && p.value.kind == MatchKind::Prefix {
        let shown: String = meta.iter().collect();
        diags.push(
            Diagnostic::warning(
                Code::KongRegexPath,
                format!(
                    "path `{}` has `{shown}`, which Kong's router reads as regex syntax",
                    p.value.value
                ),
            )
            .at(span(file, pos))
            .help("avoid regex metacharacters in prefixes; Kong does not escape them"),
        );
    }
    if let Some(prev) = earlier
        .iter()
        .find(|m| m.kind == p.value.kind && m.value == p.value.value)
    {
        diags.push(
            Diagnostic::error(
                Code::DuplicatePath,
                format!("path `{}` is listed twice", p.value.value),
            )
            .at(span(file, pos))
            .related(span(file, prev.pos), "first listed here")
            .help("remove one of them"),
        );
        return None;
    }
    Some(PathMatch {
        kind: p.value.kind,
        value: p.value.value.clone(),
        pos,
    })
}

/// A host-routed app's paths are the rules of one HTTPRoute.
pub(super) fn check_host_rule_count(
    file: &Path,
    paths: &[PathMatch],
    host_routed: bool,
    diags: &mut Diagnostics,
) {
    if Quotas::over_crd(paths.len()) && host_routed {
        diags.push(
            Diagnostic::error(
                Code::AppTooBig,
                format!(
                    "app has {} paths; an HTTPRoute holds at most {} rules",
                    paths.len(),
                    Quotas::crd_rules()
                ),
            )
            .at(span(file, paths[0].pos))
            .help("merge paths under a common prefix"),
        );
    }
}

pub(super) fn validate_pin(
    file: &Path,
    group: Option<&Spanned<u32>>,
    host_routed: bool,
    diags: &mut Diagnostics,
) -> Option<(u32, Pos)> {
    let pin = group.map(|g| (g.value, Pos::of(g)));
    if let Some((g, pos)) = pin {
        if g == 0 {
            diags.push(
                Diagnostic::error(
                    Code::InvalidGroup,
                    "group 0 does not exist; groups start at 1",
                )
                .at(span(file, pos))
                .help("pin a group number of 1 or more, or remove `group`"),
            );
        }
        if host_routed {
            diags.push(
                Diagnostic::error(
                    Code::InvalidGroup,
                    "a host-routed app has its own route and no group",
                )
                .at(span(file, pos))
                .help("remove `group`, or remove `host` to share a group"),
            );
        }
    }
    pin
}

pub(super) fn validate_health_check(
    file: &Path,
    health_check: Option<&Spanned<HealthCheck>>,
    diags: &mut Diagnostics,
) -> Option<HealthCheck> {
    health_check.map(|h| {
        if let Some(p) = &h.value.path {
            for prob in platform::path_problems(p) {
                diags.push(
                    Diagnostic::error(
                        Code::from(prob.fault),
                        format!("health check {}", prob.message),
                    )
                    .at(span(file, Pos::of(h)))
                    .help(prob.help),
                );
            }
        }
        if let Some(i) = h.value.interval_seconds
            && !(5..=300).contains(&i)
        {
            diags.push(
                Diagnostic::error(
                    Code::InvalidHealthCheck,
                    format!("interval {i}s is out of range"),
                )
                .at(span(file, Pos::of(h)))
                .help("Lattice health check intervals are 5 to 300 seconds"),
            );
        }
        h.value.clone()
    })
}

/// The place of a value in a declaration file.
pub(super) fn span(file: &Path, pos: Pos) -> Span {
    Span::new(file, pos.line, pos.column)
}
