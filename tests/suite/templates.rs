//! Custom templates (`--templates DIR`) are untrusted: whatever they render must still parse
//! back as the object latgen meant, and they cannot run forever.

use super::common;
use super::project;

use std::path::Path;

use latgen::input::ProjectPaths;
use latgen::input::confine::Project;
use latgen::render::Templates;

fn build_with(
    dir: &Path,
    name: &str,
    source: &str,
) -> Result<latgen::pipeline::Built, Vec<(String, String)>> {
    let tdir = common::scratch();
    let p = tdir.path().join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, source).unwrap();
    let project = Project::new(tdir.path());
    let templates = Templates::load(Some((tdir.path(), &project)))
        .map_err(|d| vec![(d.code.to_string(), d.message)])?;
    latgen::pipeline::build(&ProjectPaths::at_root(dir), &templates).map_err(|f| {
        f.diags
            .iter()
            .map(|d| (d.code.to_string(), d.message.clone()))
            .collect()
    })
}

fn embedded(name: &str) -> &'static str {
    latgen::render::TEMPLATES
        .iter()
        .find(|(n, _)| *n == name)
        .unwrap()
        .1
}

/// The errors of building `fixture` with the built-in `template` edited: `from` replaced
/// by `to`.
fn errors_after_edit(fixture: &str, template: &str, from: &str, to: &str) -> Vec<(String, String)> {
    let src = embedded(template).replace(from, to);
    assert_ne!(src, embedded(template), "`{from}` is in {template}");
    build_with(&common::fixture(fixture), template, &src).unwrap_err()
}

#[test]
fn an_override_that_stays_valid_is_used() {
    let src = embedded("kong/bridge-service.yaml.j2").replace(
        "app.kubernetes.io/managed-by: latgen",
        "app.kubernetes.io/managed-by: latgen\n    team: platform",
    );
    let built = build_with(
        &common::fixture("traps"),
        "kong/bridge-service.yaml.j2",
        &src,
    )
    .unwrap();
    let bridge = &built.output.files[Path::new("kong/service-shop-lattice.yaml")];
    assert!(bridge.contains("    team: platform\n"), "{bridge}");
}

#[test]
fn a_template_that_starts_its_own_document_still_renders_one_document() {
    for start in ["---\n", "# ours\n---\n"] {
        let src = format!("{start}{}", embedded("kong/bridge-service.yaml.j2"));
        let built = build_with(
            &common::fixture("traps"),
            "kong/bridge-service.yaml.j2",
            &src,
        )
        .unwrap_or_else(|e| panic!("{start:?}: {e:?}"));
        let bridge = &built.output.files[Path::new("kong/service-shop-lattice.yaml")];
        assert!(
            bridge.starts_with(latgen::manifest::layout::HEADER_COMMENT),
            "{bridge}"
        );
        assert_eq!(
            bridge.lines().filter(|l| *l == "---").count(),
            1,
            "{start:?}: {bridge}"
        );
    }
}

#[test]
fn a_misspelled_field_is_refused() {
    let errs = errors_after_edit("traps", "kong/route.yaml.j2", "backendRefs:", "backendRef:");
    assert!(
        errs.iter().all(|(code, _)| code == "rendered-invalid"),
        "{errs:?}"
    );
    assert!(
        errs[0].1.contains("fields its type does not define"),
        "{errs:?}"
    );
}

#[test]
fn a_smuggled_second_object_is_refused() {
    let src = format!(
        "{}---\napiVersion: v1\nkind: Secret\nmetadata: {{ name: x }}\n",
        embedded("kong/bridge-service.yaml.j2")
    );
    let errs = build_with(
        &common::fixture("traps"),
        "kong/bridge-service.yaml.j2",
        &src,
    )
    .unwrap_err();
    assert!(errs[0].1.contains("expected one YAML document"), "{errs:?}");
}

#[test]
fn a_renamed_object_is_refused() {
    let errs = errors_after_edit(
        "traps",
        "lattice/group-route.yaml.j2",
        "name: {{ name | yaml }}",
        "name: hijacked",
    );
    assert!(
        errs[0].1.contains("metadata.name is not `group-01`"),
        "{errs:?}"
    );
}

#[test]
fn an_undefined_variable_is_an_error_not_an_empty_string() {
    let errs = errors_after_edit(
        "traps",
        "kong/route.yaml.j2",
        "{{ target | yaml }}",
        "{{ tagret | yaml }}",
    );
    assert!(
        errs.iter().any(|(code, _)| code == "template-error"),
        "{errs:?}"
    );
}

#[test]
fn a_runaway_template_is_stopped() {
    let src = "{% for i in range(100000) %}{% for j in range(100000) %}{% endfor %}{% endfor %}";
    let errs = build_with(&common::fixture("traps"), "kustomization.yaml.j2", src).unwrap_err();
    assert!(
        errs.iter().any(|(code, _)| code == "template-error"),
        "{errs:?}"
    );
}

#[test]
fn a_template_with_a_syntax_error_is_reported_with_its_file_and_line() {
    let tdir = common::scratch();
    std::fs::create_dir_all(tdir.path().join("kong")).unwrap();
    std::fs::write(
        tdir.path().join("kong/route.yaml.j2"),
        "a: 1\n{% for x in %}\n",
    )
    .unwrap();
    let d = Templates::load(Some((tdir.path(), &Project::new(tdir.path()))))
        .err()
        .expect("a syntax error");
    assert_eq!(d.code, "template-error");
    let span = d.span.unwrap();
    assert_eq!(span.file, tdir.path().join("kong/route.yaml.j2"));
    assert_eq!(span.line, 2);
}

#[test]
fn a_target_group_policy_with_a_field_the_crd_lacks_is_refused() {
    let errs = errors_after_edit(
        "settings",
        "lattice/target-group-policy.yaml.j2",
        "enabled: true",
        "enabled: true\n    intervall: 10",
    );
    assert!(
        errs.iter()
            .all(|(code, m)| code == "rendered-invalid" && m.contains("intervall")),
        "{errs:?}"
    );
}

#[test]
fn target_group_policies_follow_health_checks_and_the_switch() {
    let tmp = common::copy_project(&common::fixture("settings"));
    let built = project::built(tmp.path());
    let policies: Vec<_> = built
        .output
        .files
        .keys()
        .filter(|p| p.to_string_lossy().contains("targetgrouppolicy-"))
        .collect();
    assert_eq!(
        policies.len(),
        1,
        "one app declares a health check: {policies:?}"
    );
    let text = std::fs::read_to_string(tmp.path().join("latgen.yaml")).unwrap();
    std::fs::write(
        tmp.path().join("latgen.yaml"),
        text.replace(
            "referenceGrants: false",
            "referenceGrants: false\n  targetGroupPolicies: false",
        ),
    )
    .unwrap();
    let built = project::built(tmp.path());
    assert!(
        !built
            .output
            .files
            .keys()
            .any(|p| p.to_string_lossy().contains("targetgrouppolicy-"))
    );
}

/// `latgen render --templates DIR` on a copy of the `traps` fixture whose Kong route
/// template starts with `prefix`: the run's exit code (None: ended by a signal), stderr,
/// and whether it wrote an output folder.
fn render_with_route_prefix(prefix: &str) -> (Option<i32>, String, bool) {
    let tmp = common::scratch();
    common::write_tree(tmp.path(), &common::read_tree(&common::fixture("traps")));
    let _ = std::fs::remove_dir_all(tmp.path().join("generated"));
    let route = tmp.path().join("tpl/kong/route.yaml.j2");
    std::fs::create_dir_all(route.parent().unwrap()).unwrap();
    std::fs::write(
        &route,
        format!("{prefix}{}", embedded("kong/route.yaml.j2")),
    )
    .unwrap();
    let run = common::latgen(tmp.path(), &["render", "--templates", "tpl"]);
    (run.code, run.stderr, tmp.path().join("generated").exists())
}

/// A template that builds a gigabyte in ten steps (the fuel bounds steps, not memory) is
/// stopped at its memory cap with a report naming it, not by an allocation failure that
/// aborts the process; nothing is written.
#[test]
fn a_template_that_builds_a_gigabyte_is_stopped_with_a_report() {
    let (code, stderr, wrote) = render_with_route_prefix(
        "{% set s = \"a\" * 100000000 %}# {{ [s, s, s, s, s, s, s, s, s, s] | join }}\n",
    );
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr
            .contains("error[template-error]: template kong/route.yaml.j2 used more than 256 MiB"),
        "{stderr}"
    );
    assert!(!wrote, "a stopped render wrote the output");
}

/// The same by doubling a string thirty-two times (no repetition operator, so minijinja's
/// own cap on one repetition does not apply; thirty-two steps are nothing to the fuel).
#[test]
fn a_template_that_doubles_a_string_again_and_again_is_stopped() {
    let doubling = "{% set s = s ~ s %}".repeat(32);
    let (code, stderr, wrote) = render_with_route_prefix(&format!(
        "{{% set s = \"abcdefgh\" %}}{doubling}# {{{{ s | length }}}}\n"
    ));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(stderr.contains("used more than 256 MiB"), "{stderr}");
    assert!(!wrote);
}

/// What a custom template renders for one object is capped below what the read-back would
/// choke on (and what the API server could store): 2 MiB of YAML in one route is refused.
#[test]
fn a_template_that_renders_an_object_too_large_to_store_is_refused() {
    let (code, stderr, wrote) =
        render_with_route_prefix(&format!("# {}\n", "{{ \"x\" * 1048576 }}".repeat(2)));
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains("error[template-error]: template kong/route.yaml.j2 rendered more than 1 MiB for one object"),
        "{stderr}"
    );
    assert!(!wrote);
}
