//! The bad-input corpus: each case is a small project that `latgen render` must refuse with
//! exactly the error in `tests/corpus/<case>.stderr` (file, line, message, help) and exit 2,
//! writing nothing — or, for the cases marked as fine (a BOM, CRLF line endings), render.
//! A few cases run another command on a project it must refuse: `check --base` with a
//! revision the repository lacks, and `move` of an unknown app or into a full group (exit 1).
//! Hostile inputs (alias bombs, deep nesting, a 10 MB file, a symlink loop) must also end
//! quickly. Each case is its own test, `corpus::<case>`; a missing snapshot fails. Refresh
//! the snapshots with `LATGEN_BLESS=1 cargo test --test corpus`.

#[path = "suite/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use libtest_mimic::Trial;

const OK_APP: &str = "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\n";

fn write(dir: &Path, rel: &str, bytes: &[u8]) {
    let p = dir.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, bytes).unwrap();
}

fn app(body: &str) -> impl Fn(&Path) + '_ {
    move |d: &Path| write(d, "apps/shop.yaml", body.as_bytes())
}

fn alias_bomb() -> String {
    let mut s = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let prev = format!("*a{}", i - 1);
        s.push_str(&format!(
            "a{i}: &a{i} [{}]\n",
            [prev.as_str(); 10].join(", ")
        ));
    }
    s.push_str("namespace: web\n");
    s
}

/// Writes a case's project into a fresh folder.
type Setup = Box<dyn Fn(&Path) + Send>;

/// (case, how to set it up, exit code). Exit 0 cases must render.
fn cases() -> Vec<(&'static str, Setup, i32)> {
    [
        yaml_cases(),
        yaml_cases_more(),
        layout_cases(),
        number_cases(),
        value_cases(),
        value_cases_more(),
        path_cases(),
        path_cases_more(),
        auth_path_cases(),
        quota_cases(),
        dispatch_cases(),
        kong_cases(),
        kong_host_cases(),
        canary_cases(),
        preview_cases(),
        preview_host_cases(),
        project_cases(),
        project_cases_more(),
        service_name_cases(),
        import_cases(),
        import_domain_cases(),
        import_auth_cases(),
        environment_cases(),
        principal_cases(),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// Cases about the YAML itself: syntax, shape, encoding, size and hostile documents.
fn yaml_cases() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            "malformed-yaml",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080\npaths: [/shop]\n",
            )),
            2,
        ),
        ("empty-file", Box::new(app("")), 2),
        ("only-comments", Box::new(app("# nothing here\n\n")), 2),
        ("not-a-mapping", Box::new(app("- namespace: web\n")), 2),
        ("scalar-document", Box::new(app("just a string\n")), 2),
        (
            "several-documents",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\n---\nnamespace: other\n",
            )),
            2,
        ),
        (
            "binary-garbage",
            Box::new(|d: &Path| {
                write(
                    d,
                    "apps/shop.yaml",
                    &[0x00, 0xff, 0xfe, 0x89, b'P', b'N', b'G', 0x0d, 0x0a],
                )
            }),
            2,
        ),
        (
            "utf8-bom",
            Box::new(|d: &Path| write(d, "apps/shop.yaml", format!("\u{feff}{OK_APP}").as_bytes())),
            0,
        ),
    ]
}

/// More cases about the YAML itself: syntax, shape, encoding, size and hostile documents.
fn yaml_cases_more() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            "crlf-line-endings",
            Box::new(app(
                "namespace: web\r\nservice: { name: shop, port: 8080 }\r\npaths: [/shop]\r\n",
            )),
            0,
        ),
        (
            "unknown-field",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\nowner: team-a\n",
            )),
            2,
        ),
        (
            "misspelled-field",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npath: [/shop]\n",
            )),
            2,
        ),
        (
            "misspelled-nested-field",
            Box::new(app(
                "namespace: web\nservice: { name: shop, prot: 8080 }\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "wrong-type",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: eighty }\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "wrong-type-list",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: /shop\n",
            )),
            2,
        ),
        (
            "missing-namespace",
            Box::new(app("service: { name: shop, port: 8080 }\npaths: [/shop]\n")),
            2,
        ),
        (
            "missing-paths-and-host",
            Box::new(app("namespace: web\nservice: { name: shop, port: 8080 }\n")),
            2,
        ),
    ]
}

/// Cases about how a declaration is laid out: brackets left open, keys indented out of
/// line.
fn layout_cases() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            "unclosed-list",
            Box::new(app(
                "namespace: [web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "key-indented-between",
            Box::new(app(
                "namespace: web\nservice:\n  name: shop\n port: 8080\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "key-indented-too-far",
            Box::new(app(
                "namespace: web\nservice:\n  name: shop\n   port: 8080\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "key-dedented-to-top",
            Box::new(app(
                "namespace: web\nservice:\n  name: shop\nport: 8080\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "key-dedented-out-of-health-check",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\nhealthCheck:\n  path: /alive\nintervalSeconds: 10\n",
            )),
            2,
        ),
    ]
}

/// Cases about numbers: each names the field and what it takes.
fn number_cases() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            "named-port",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: http }\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "port-negative",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: -1 }\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "port-quoted",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: \"8080\" }\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "group-a-word",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\ngroup: two\n",
            )),
            2,
        ),
        (
            "peak-rps-negative",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\npeakRps: -5\n",
            )),
            2,
        ),
        (
            "peak-rps-beyond-any-app",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\npeakRps: 5000000000\n",
            )),
            2,
        ),
        (
            "isolate-quoted",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\nisolate: 'true'\n",
            )),
            2,
        ),
        (
            "settings-port-quoted",
            Box::new(|d: &Path| {
                write(d, "apps/shop.yaml", OK_APP.as_bytes());
                write(d, "latgen.yaml", b"kong:\n  port: \"8443\"\n");
            }),
            2,
        ),
    ]
}

/// Cases about the values of the fields.
fn value_cases() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            "duplicate-app-across-files",
            Box::new(|d: &Path| {
                write(d, "apps/a/shop.yaml", OK_APP.as_bytes());
                write(
                    d,
                    "apps/b/shop.yaml",
                    b"namespace: b\nservice: { name: shop, port: 8080 }\npaths: [/store]\n",
                );
            }),
            2,
        ),
        (
            "uppercase-name",
            Box::new(app(
                "name: Shop\nnamespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "name-starts-with-digit",
            Box::new(|d: &Path| write(d, "apps/9lives.yaml", OK_APP.as_bytes())),
            2,
        ),
        (
            "dot-dot-name",
            Box::new(app(
                "name: ../etc\nnamespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "over-long-name",
            Box::new(|d: &Path| {
                write(d, "apps/shop.yaml", format!("name: {}\nnamespace: web\nservice: {{ name: shop, port: 8080 }}\npaths: [/shop]\n", "a".repeat(60)).as_bytes())
            }),
            2,
        ),
        (
            "port-zero",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 0 }\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "port-70000",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 70000 }\npaths: [/shop]\n",
            )),
            2,
        ),
    ]
}

/// More cases about the values of the fields.
fn value_cases_more() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            "path-without-slash",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [shop]\n",
            )),
            2,
        ),
        (
            "path-double-slash",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop//cart]\n",
            )),
            2,
        ),
        (
            "path-dot-segments",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop/../admin, /shop/./x]\n",
            )),
            2,
        ),
        (
            "path-space",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [\"/shop cart\"]\n",
            )),
            2,
        ),
        (
            "path-encoded-slash",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop%2fcart]\n",
            )),
            2,
        ),
        (
            "path-hash",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [\"/shop#top\"]\n",
            )),
            2,
        ),
        (
            "path-too-long",
            Box::new(|d: &Path| {
                write(
                    d,
                    "apps/shop.yaml",
                    format!(
                        "namespace: web\nservice: {{ name: shop, port: 8080 }}\npaths: [/{}]\n",
                        "a".repeat(130)
                    )
                    .as_bytes(),
                )
            }),
            2,
        ),
    ]
}

/// Cases about an app with more paths than a shared group holds: the message says where
/// the limit comes from.
/// Cases about the header that header dispatch matches: each name Lattice cannot use.
fn dispatch_cases() -> Vec<(&'static str, Setup, i32)> {
    let with_header = |name: &'static str| -> Setup {
        Box::new(move |d: &Path| {
            write(d, "apps/shop.yaml", OK_APP.as_bytes());
            let yaml = format!("lattice:\n  dispatch: header\n  dispatchHeader: \"{name}\"\n");
            write(d, "latgen.yaml", yaml.as_bytes());
        })
    };
    vec![
        (
            "dispatch-header-reserved",
            with_header("x-amzn-lattice-app"),
            2,
        ),
        (
            "dispatch-header-too-long",
            with_header("x-app-name-that-goes-on-and-on-and-on-and-on"),
            2,
        ),
        ("dispatch-header-with-space", with_header("x app"), 2),
        ("dispatch-header-uppercase", with_header("X-Latgen-App"), 2),
        // Kong's nginx template sets it from the client's Host: a client would pick the app.
        (
            "dispatch-header-kong-sets",
            with_header("x-forwarded-host"),
            2,
        ),
        ("dispatch-header-hop-by-hop", with_header("connection"), 2),
    ]
}

/// An app's `kong:` settings and the project's `kong.routeDefaults`.
fn canary_cases() -> Vec<(&'static str, Setup, i32)> {
    let with_canary = |canary: &'static str| -> Setup {
        Box::new(move |d: &Path| {
            write(
                d,
                "apps/shop.yaml",
                format!("{OK_APP}canary: {canary}\n").as_bytes(),
            )
        })
    };
    vec![
        (
            "canary-is-the-stable-service",
            with_canary("{ service: shop }"),
            2,
        ),
        (
            "canary-service-uppercase",
            with_canary("{ service: Shop-Canary }"),
            2,
        ),
        (
            "canary-port-out-of-range",
            with_canary("{ service: shop-canary, port: 70000 }"),
            2,
        ),
        (
            "canary-readiness-gate-unknown",
            with_canary("{ service: shop-canary, readinessGate: webhook }"),
            2,
        ),
    ]
}

fn preview_cases() -> Vec<(&'static str, Setup, i32)> {
    let host = "previews:\n  host: \"{name}.{app}.preview.example.com\"\n";
    let with_preview = move |preview: &'static str| -> Setup {
        Box::new(move |d: &Path| {
            write(d, "apps/shop.yaml", OK_APP.as_bytes());
            write(d, "latgen.yaml", host.as_bytes());
            write(d, "previews/pr-1.yaml", preview.as_bytes())
        })
    };
    let ok = "app: shop\nname: pr-1\nservice: shop-pr-1\nexpires: 2099-12-31\n";
    vec![
        (
            "preview-of-an-undeclared-app",
            with_preview("app: shpo\nname: pr-1\nservice: shop-pr-1\nexpires: 2099-12-31\n"),
            2,
        ),
        (
            "preview-expires-not-a-date",
            with_preview("app: shop\nname: pr-1\nservice: shop-pr-1\nexpires: 2099-02-30\n"),
            2,
        ),
        (
            "preview-name-uppercase",
            with_preview("app: shop\nname: PR-1\nservice: shop-pr-1\nexpires: 2099-12-31\n"),
            2,
        ),
        (
            "preview-without-an-expiry",
            with_preview("app: shop\nname: pr-1\nservice: shop-pr-1\n"),
            2,
        ),
        (
            "preview-without-a-host-pattern",
            Box::new(move |d: &Path| {
                write(d, "apps/shop.yaml", OK_APP.as_bytes());
                write(d, "previews/pr-1.yaml", ok.as_bytes())
            }),
            2,
        ),
        (
            "preview-host-pattern-without-app",
            Box::new(move |d: &Path| {
                write(d, "apps/shop.yaml", OK_APP.as_bytes());
                write(
                    d,
                    "latgen.yaml",
                    b"previews:\n  host: \"{name}.preview.example.com\"\n",
                );
                write(d, "previews/pr-1.yaml", ok.as_bytes())
            }),
            2,
        ),
        (
            "app-named-like-a-preview-group",
            Box::new(move |d: &Path| {
                write(d, "apps/preview-01.yaml", OK_APP.as_bytes());
                write(d, "latgen.yaml", host.as_bytes())
            }),
            2,
        ),
        (
            "preview-given-twice",
            Box::new(move |d: &Path| {
                write(d, "apps/shop.yaml", OK_APP.as_bytes());
                write(d, "latgen.yaml", host.as_bytes());
                write(d, "previews/a.yaml", ok.as_bytes());
                write(d, "previews/b.yaml", ok.as_bytes())
            }),
            2,
        ),
    ]
}

/// Previews whose day is not written as the declarations say, or whose host is one that
/// production answers on (the preview's route would take production's traffic).
fn preview_host_cases() -> Vec<(&'static str, Setup, i32)> {
    let settings = "previews:\n  host: \"{name}.{app}.example.com\"\nkong:\n  hostnames: [www.shop.example.com]\n";
    let preview = |file: &'static str, text: &'static str| -> Setup {
        Box::new(move |d: &Path| {
            write(d, "apps/shop.yaml", OK_APP.as_bytes());
            write(d, "latgen.yaml", settings.as_bytes());
            write(d, file, text.as_bytes())
        })
    };
    vec![
        (
            "preview-expires-without-dashes",
            preview(
                "previews/pr-1.yaml",
                "app: shop\nname: pr-1\nservice: shop-pr-1\nexpires: 20991231\n",
            ),
            2,
        ),
        (
            "preview-expires-with-a-time",
            preview(
                "previews/pr-1.yaml",
                "app: shop\nname: pr-1\nservice: shop-pr-1\nexpires: 2099-12-31 23:59\n",
            ),
            2,
        ),
        (
            "preview-host-is-the-shared-host",
            preview(
                "previews/www.yaml",
                "app: shop\nname: www\nservice: shop-pr-1\nexpires: 2099-12-31\n",
            ),
            2,
        ),
        (
            "preview-host-is-a-host-routed-apps-host",
            Box::new(move |d: &Path| {
                write(d, "apps/shop.yaml", OK_APP.as_bytes());
                write(d, "latgen.yaml", settings.as_bytes());
                write(
                    d,
                    "apps/blog.yaml",
                    b"namespace: web\nservice: { name: blog, port: 8080 }\nhost: pr-1.shop.example.com\n",
                );
                write(
                    d,
                    "previews/pr-1.yaml",
                    b"app: shop\nname: pr-1\nservice: shop-pr-1\nexpires: 2099-12-31\n",
                )
            }),
            2,
        ),
    ]
}

fn kong_cases() -> Vec<(&'static str, Setup, i32)> {
    let with_kong = |kong: &'static str| -> Setup {
        Box::new(move |d: &Path| {
            write(
                d,
                "apps/shop.yaml",
                format!("{OK_APP}kong:\n{kong}").as_bytes(),
            )
        })
    };
    vec![
        (
            "kong-timeout-zero",
            with_kong("  timeouts: { read: 0 }\n"),
            2,
        ),
        (
            "kong-timeout-not-a-duration",
            with_kong("  timeouts: { read: 1h }\n"),
            2,
        ),
        ("kong-retries-too-many", with_kong("  retries: 40000\n"), 2),
        (
            "kong-plugin-uppercase",
            with_kong("  plugins: [Rate-Limit]\n"),
            2,
        ),
        (
            "kong-plugin-twice",
            with_kong("  plugins: [cors, cors]\n"),
            2,
        ),
        (
            "kong-host-without-hostnames",
            with_kong("  hosts: [shop.example.org]\n"),
            2,
        ),
        (
            "kong-defaults-timeout-zero",
            Box::new(|d: &Path| {
                write(d, "apps/shop.yaml", OK_APP.as_bytes());
                write(
                    d,
                    "latgen.yaml",
                    b"kong:\n  routeDefaults:\n    timeouts: { connect: 0 }\n",
                );
            }),
            2,
        ),
    ]
}

/// An app's `kong.hosts` in a project with `kong.hostnames`.
fn kong_host_cases() -> Vec<(&'static str, Setup, i32)> {
    let with_hostnames = |apps: Vec<(&'static str, String)>| -> Setup {
        Box::new(move |d: &Path| {
            for (file, text) in &apps {
                write(d, file, text.as_bytes());
            }
            write(d, "latgen.yaml", b"kong:\n  hostnames: [www.example.com]\n");
        })
    };
    let shop = |hosts: &str| {
        (
            "apps/shop.yaml",
            format!("{OK_APP}kong:\n  hosts: [{hosts}]\n"),
        )
    };
    let blog = (
        "apps/blog.yaml",
        "namespace: web\nservice: { name: blog, port: 8080 }\nhost: blog.example.com\n".into(),
    );
    vec![
        (
            "kong-host-with-scheme",
            with_hostnames(vec![shop("https://shop.example.org")]),
            2,
        ),
        (
            "kong-host-already-there",
            with_hostnames(vec![shop("www.example.com")]),
            2,
        ),
        (
            "kong-host-of-a-host-routed-app",
            with_hostnames(vec![shop("blog.example.com"), blog.clone()]),
            2,
        ),
        (
            "kong-host-routed-app-takes-the-shared-host",
            with_hostnames(vec![(
                "apps/blog.yaml",
                format!("{}kong:\n  hosts: [www.example.com]\n", blog.1),
            )]),
            2,
        ),
    ]
}

fn quota_cases() -> Vec<(&'static str, Setup, i32)> {
    let paths = |n: usize| -> String {
        (0..n)
            .map(|i| format!("/p{i}"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    vec![
        (
            "app-over-the-rule-quota",
            Box::new(move |d: &Path| {
                write(
                    d,
                    "latgen.yaml",
                    b"quotas:\n  rulesPerService: 6\n  reservedRules: 1\n",
                );
                write(
                    d,
                    "apps/shop.yaml",
                    format!(
                        "namespace: web\nservice: {{ name: shop, port: 8080 }}\npaths: [{}]\n",
                        paths(6)
                    )
                    .as_bytes(),
                );
            }),
            2,
        ),
        (
            "app-over-the-crd-rule-limit",
            Box::new(move |d: &Path| {
                write(d, "latgen.yaml", b"quotas:\n  rulesPerService: 40\n");
                write(
                    d,
                    "apps/shop.yaml",
                    format!(
                        "namespace: web\nservice: {{ name: shop, port: 8080 }}\npaths: [{}]\n",
                        paths(17)
                    )
                    .as_bytes(),
                );
            }),
            2,
        ),
    ]
}

/// Cases about paths and the other names a declaration carries.
fn path_cases() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            "host-ip",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\nhost: 10.0.0.1\n",
            )),
            2,
        ),
        (
            "host-with-port",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\nhost: shop.example.com:8443\n",
            )),
            2,
        ),
        (
            "host-with-scheme",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\nhost: https://docs.example.com/\n",
            )),
            2,
        ),
        (
            "host-uppercase",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\nhost: Shop.Example.com\n",
            )),
            2,
        ),
        (
            "injection-newline",
            Box::new(app(
                "namespace: \"web\\nkind: Secret\"\nservice: { name: shop, port: 8080 }\npaths: [/shop]\n",
            )),
            2,
        ),
        (
            "injection-colon",
            Box::new(app(
                "namespace: web\nservice: { name: \"shop: evil\", port: 8080 }\npaths: [/shop]\n",
            )),
            2,
        ),
    ]
}

/// More cases about paths and the other names a declaration carries.
/// Percent-encoded paths while auth is on: Kong decodes them before it routes, Lattice and
/// the auth policy compare them as written.
fn auth_path_cases() -> Vec<(&'static str, Setup, i32)> {
    let with_path = |path: &'static str, auth: bool| -> Setup {
        Box::new(move |d: &Path| {
            let app = format!(
                "namespace: web\nservice: {{ name: shop, port: 8080 }}\npaths: [/shop, {path}]\n"
            );
            write(d, "apps/shop.yaml", app.as_bytes());
            if auth {
                let settings = "auth:\n  mode: iam\n  account: \"111122223333\"\n  region: ap-northeast-2\n  kong: { vpcs: [vpc-0a1b2c3d4e5f67890] }\n";
                write(d, "latgen.yaml", settings.as_bytes());
            }
        })
    };
    vec![
        (
            "path-encoded-letter-under-auth",
            with_path("/%61dmin", true),
            2,
        ),
        (
            "path-encoded-dots-under-auth",
            with_path("/x/%2e%2E/admin", true),
            2,
        ),
        // Without an auth policy, a path Kong and Lattice read alike is all that matters.
        (
            "path-encoded-letter-without-auth",
            with_path("/%61dmin", false),
            0,
        ),
    ]
}

fn path_cases_more() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            "alias-bomb",
            Box::new(|d: &Path| write(d, "apps/shop.yaml", alias_bomb().as_bytes())),
            2,
        ),
        (
            "deep-nesting",
            Box::new(|d: &Path| {
                write(
                    d,
                    "apps/shop.yaml",
                    format!("namespace: {}{}\n", "[".repeat(20_000), "]".repeat(20_000)).as_bytes(),
                )
            }),
            2,
        ),
        (
            "ten-megabytes",
            Box::new(|d: &Path| {
                write(
                    d,
                    "apps/shop.yaml",
                    format!("namespace: web\n# {}\n", "x".repeat(10 * 1024 * 1024)).as_bytes(),
                )
            }),
            2,
        ),
        (
            "symlink-loop",
            Box::new(|d: &Path| {
                write(d, "apps/team/shop.yaml", OK_APP.as_bytes());
                std::os::unix::fs::symlink("..", d.join("apps/team/loop")).unwrap();
            }),
            2,
        ),
        (
            "unreadable-file",
            Box::new(|d: &Path| {
                write(d, "apps/shop.yaml", OK_APP.as_bytes());
                std::os::unix::fs::symlink("/nonexistent/cart.yaml", d.join("apps/cart.yaml"))
                    .unwrap();
            }),
            2,
        ),
    ]
}

/// Cases about the project around the declarations: output folder, links, other commands.
fn project_cases() -> Vec<(&'static str, Setup, i32)> {
    vec![
        ("output-inside-apps", Box::new(app(OK_APP)), 2),
        (
            "output-is-a-file",
            Box::new(|d: &Path| {
                write(d, "apps/shop.yaml", OK_APP.as_bytes());
                write(d, "out.yaml", b"keep me\n");
            }),
            2,
        ),
        // Other commands: a base revision the repository does not have, and refused moves.
    ]
}

/// More cases about the project around the declarations: output folder, links, other commands.
/// Host-routed apps whose Lattice service name, under `lattice.serviceNamePrefix`, is the
/// one latgen gives a shared group or a preview group.
fn service_name_cases() -> Vec<(&'static str, Setup, i32)> {
    let with_app = |name: &'static str| -> Setup {
        Box::new(move |d: &Path| {
            write(d, "apps/shop.yaml", OK_APP.as_bytes());
            write(
                d,
                &format!("apps/{name}.yaml"),
                format!("namespace: web\nservice: {{ name: blog, port: 8080 }}\nhost: {name}.example.com\n").as_bytes(),
            );
            write(d, "latgen.yaml", b"lattice:\n  serviceNamePrefix: shop\n");
        })
    };
    vec![
        ("host-routed-app-named-like-group-1", with_app("g01"), 2),
        (
            "host-routed-app-named-like-preview-group-1",
            with_app("pv01"),
            2,
        ),
    ]
}

fn project_cases_more() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            "check-base-unknown-revision",
            Box::new(|d: &Path| {
                write(d, "apps/shop.yaml", OK_APP.as_bytes());
                common::git(d, &["init", "-q"]);
                common::git(d, &["add", "-A"]);
                common::git(d, &["commit", "-q", "-m", "base"]);
            }),
            2,
        ),
        (
            "move-unknown-app",
            Box::new(|d: &Path| {
                write(d, "apps/shop.yaml", OK_APP.as_bytes());
                write(
                    d,
                    "apps/shopping.yaml",
                    b"namespace: web\nservice: { name: shopping, port: 8080 }\npaths: [/shopping]\n",
                );
            }),
            1,
        ),
        (
            "move-into-full-group",
            Box::new(|d: &Path| {
                write(d, "latgen.yaml", b"quotas:\n  rulesPerService: 2\n");
                for name in ["blog", "cart", "shop"] {
                    write(
                        d,
                        &format!("apps/{name}.yaml"),
                        format!("namespace: web\nservice: {{ name: {name}, port: 8080 }}\npaths: [/{name}]\n").as_bytes(),
                    );
                }
                write(
                    d,
                    "latgen.lock",
                    b"version: 1\napps:\n  blog: 2\n  cart: 1\n  shop: 1\n",
                );
            }),
            1,
        ),
    ]
}

/// One app of a live setup, its own Lattice route and its Kong route and bridge, as
/// `latgen import` reads them from `live/`, with `edit` applied to the text.
fn live(edit: fn(String) -> String) -> Setup {
    Box::new(move |d: &Path| {
        let text = "apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: web}
spec:
  parentRefs: [{name: lattice-gateway, namespace: aws-application-networking-system, sectionName: http}]
  hostnames: [shop.lattice.internal]
  rules:
  - matches: [{path: {type: PathPrefix, value: /shop}}]
    backendRefs: [{name: shop, port: 8080}]
---
apiVersion: gateway.networking.k8s.io/v1
kind: HTTPRoute
metadata: {name: shop, namespace: kong-routes}
spec:
  parentRefs: [{name: kong, namespace: kong}]
  rules:
  - matches: [{path: {type: PathPrefix, value: /shop}}]
    filters: [{type: URLRewrite, urlRewrite: {hostname: shop.lattice.internal}}]
    backendRefs: [{name: shop-lattice, port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: shop-lattice, namespace: kong-routes}
spec: {type: ExternalName, externalName: shop.lattice.internal, ports: [{name: http, port: 80}]}
";
        write(d, "live/shop.yaml", edit(text.to_string()).as_bytes());
    })
}

/// Lattice routes import cannot tell where Kong reaches: no hostname, and no domain Lattice
/// assigned recorded on them. Refused like [`import_cases`].
fn import_domain_cases() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            // A route with a custom domain that Kong reaches at its assigned domain: latgen
            // writes one domain for both, and would drop the hostname it has.
            "import-route-with-a-hostname-reached-at-its-assigned-domain",
            live(|t| {
                let assigned =
                    "shop-web-0a1b2c3d4e5f6a7b8.7d67968.vpc-lattice-svcs.ap-northeast-2.on.aws";
                t.replace("shop.lattice.internal", assigned)
                    .replacen(
                        &format!("hostnames: [{assigned}]"),
                        "hostnames: [shop.lattice.internal]",
                        1,
                    )
                    .replacen(
                        "metadata: {name: shop, namespace: web}",
                        &format!("metadata: {{name: shop, namespace: web, annotations: {{application-networking.k8s.aws/lattice-assigned-domain-name: {assigned}}}}}"),
                        1,
                    )
            }),
            1,
        ),
        (
            "import-route-without-hostname",
            live(|t| t.replacen("  hostnames: [shop.lattice.internal]\n", "", 1)),
            1,
        ),
        (
            // Kong rewrites to a domain Lattice assigned, and the route has no hostname and
            // not the controller's annotation: it was exported before any sync.
            "import-route-on-an-assigned-domain-never-synced",
            live(|t| {
                t.replacen("  hostnames: [shop.lattice.internal]\n", "", 1)
                    .replace(
                        "shop.lattice.internal",
                        "shop-web-0a1b2c3d4e5f6a7b8.7d67968.vpc-lattice-svcs.ap-northeast-2.on.aws",
                    )
            }),
            1,
        ),
    ]
}

/// The `shop` export of [`live`] with a live IAMAuthPolicy on its Lattice route (`policy`,
/// its statements as JSON, and `more`, objects after it), in a project whose latgen.yaml
/// turns auth on when `auth` is set.
fn live_auth(statements: &'static str, more: &'static str, auth: bool) -> Setup {
    Box::new(move |d: &Path| {
        live(|t| t)(d);
        let policy = format!(
            "---\napiVersion: application-networking.k8s.aws/v1alpha1\nkind: IAMAuthPolicy\nmetadata: {{name: shop, namespace: web}}\nspec:\n  targetRef: {{group: gateway.networking.k8s.io, kind: HTTPRoute, name: shop}}\n  policy: '{{\"Version\":\"2012-10-17\",\"Statement\":[{statements}]}}'\n{more}"
        );
        write(d, "live/shop-auth.yaml", policy.as_bytes());
        if auth {
            let settings = "auth:\n  mode: iam\n  account: \"111122223333\"\n  region: ap-northeast-2\n  kong: {vpcs: [vpc-0a1b2c3d4e5f67890]}\n";
            write(d, "latgen.yaml", settings.as_bytes());
        }
    })
}

/// Kong's statement, as every live policy of [`live_auth`] has it to be imported.
const KONG_STATEMENT: &str = r#"{"Effect":"Allow","Principal":"*","Action":"vpc-lattice-svcs:Invoke","Resource":"*","Condition":{"StringEquals":{"vpc-lattice-svcs:SourceVpc":"vpc-0a1b2c3d4e5f67890"}}}"#;

/// Live auth policies import cannot read into `callers:` without changing who gets in:
/// each refused with the statement, and nothing written.
fn import_auth_cases() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            // An explicit Deny: latgen writes only Allow statements.
            "import-auth-policy-with-a-deny",
            live_auth(
                concat!(
                    r#"{"Effect":"Allow","Principal":"*","Action":"vpc-lattice-svcs:Invoke","Resource":"*","Condition":{"StringEquals":{"vpc-lattice-svcs:SourceVpc":"vpc-0a1b2c3d4e5f67890"}}},"#,
                    r#"{"Effect":"Deny","Principal":"*","Action":"vpc-lattice-svcs:Invoke","Resource":"*","Condition":{"StringEquals":{"vpc-lattice-svcs:RequestMethod":"DELETE"}}}"#
                ),
                "",
                true,
            ),
            1,
        ),
        (
            // A condition latgen does not write (StringLike on a header).
            "import-auth-policy-with-a-condition-latgen-does-not-write",
            live_auth(
                concat!(
                    r#"{"Effect":"Allow","Principal":"*","Action":"vpc-lattice-svcs:Invoke","Resource":"*","Condition":{"StringEquals":{"vpc-lattice-svcs:SourceVpc":"vpc-0a1b2c3d4e5f67890"}}},"#,
                    r#"{"Effect":"Allow","Principal":"*","Action":"vpc-lattice-svcs:Invoke","Resource":"*","Condition":{"StringLike":{"vpc-lattice-svcs:RequestHeader/x-team":"ops-*"}}}"#
                ),
                "",
                true,
            ),
            1,
        ),
        (
            // Open to anyone: a caller with no principal, organization or VPC.
            "import-auth-policy-open-to-anyone",
            live_auth(
                r#"{"Effect":"Allow","Principal":"*","Action":"vpc-lattice-svcs:Invoke","Resource":"*"}"#,
                "",
                true,
            ),
            1,
        ),
        (
            // A resource of part of the app's requests only.
            "import-auth-policy-on-part-of-the-app",
            live_auth(
                concat!(
                    r#"{"Effect":"Allow","Principal":"*","Action":"vpc-lattice-svcs:Invoke","Resource":"*","Condition":{"StringEquals":{"vpc-lattice-svcs:SourceVpc":"vpc-0a1b2c3d4e5f67890"}}},"#,
                    r#"{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:role/reports"},"Action":"vpc-lattice-svcs:Invoke","Resource":"arn:aws:vpc-lattice:ap-northeast-2:111122223333:service/svc-0a1b2c3d4e5f6a7b8/shop/reports/*"}"#
                ),
                "",
                true,
            ),
            1,
        ),
        (
            // Kong is not let in, and latgen lets Kong call every app.
            "import-auth-policy-that-keeps-kong-out",
            live_auth(
                r#"{"Effect":"Allow","Principal":{"AWS":"arn:aws:iam::111122223333:role/reports"},"Action":"vpc-lattice-svcs:Invoke","Resource":"*"}"#,
                "",
                true,
            ),
            1,
        ),
        (
            // auth.mode is none: the render would write no policy, and the service would be
            // open once the live one is pruned.
            "import-auth-policy-with-auth-off",
            live_auth(KONG_STATEMENT, "", false),
            1,
        ),
        (
            "import-second-auth-policy-on-a-route",
            live_auth(
                KONG_STATEMENT,
                "---\napiVersion: application-networking.k8s.aws/v1alpha1\nkind: IAMAuthPolicy\nmetadata: {name: shop-more, namespace: web}\nspec:\n  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: shop}\n  policy: '{\"Statement\":[]}'\n",
                true,
            ),
            1,
        ),
        (
            "import-auth-policy-on-a-route-not-imported",
            live_auth(
                KONG_STATEMENT,
                "---\napiVersion: application-networking.k8s.aws/v1alpha1\nkind: IAMAuthPolicy\nmetadata: {name: blog, namespace: web}\nspec:\n  targetRef: {group: gateway.networking.k8s.io, kind: HTTPRoute, name: blog}\n  policy: '{\"Statement\":[]}'\n",
                true,
            ),
            1,
        ),
    ]
}

/// What `latgen import` cannot express: each refused at its object's file and line, and
/// nothing written.
fn import_cases() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            "import-rule-with-two-backends",
            live(|t| {
                t.replacen(
                    "backendRefs: [{name: shop, port: 8080}]",
                    "backendRefs: [{name: shop, port: 8080}, {name: shop-v2, port: 8080}]",
                    1,
                )
            }),
            1,
        ),
        (
            "import-unknown-filter",
            live(|t| {
                t.replace("filters: [{type: URLRewrite, urlRewrite: {hostname: shop.lattice.internal}}]", "filters: [{type: URLRewrite, urlRewrite: {hostname: shop.lattice.internal}}, {type: RequestHeaderModifier, requestHeaderModifier: {set: [{name: x-team, value: web}]}}]")
            }),
            1,
        ),
        (
            "import-route-shared-by-two-apps",
            live(|t| {
                t.replacen("    backendRefs: [{name: shop, port: 8080}]", "    backendRefs: [{name: shop, port: 8080}]\n  - matches: [{path: {type: PathPrefix, value: /cart}}]\n    backendRefs: [{name: cart, port: 8080}]", 1)
            }),
            1,
        ),
        (
            "import-kong-route-without-bridge",
            live(|t| {
                t.split("---\napiVersion: v1\n")
                    .next()
                    .unwrap_or_default()
                    .to_string()
            }),
            1,
        ),
        (
            "import-app-name-with-a-dot",
            live(|t| {
                t.replace(
                    "metadata: {name: shop, namespace: kong-routes}",
                    "metadata: {name: shop.v2, namespace: kong-routes}",
                )
                .replace("name: shop-lattice", "name: shop.v2-lattice")
            }),
            1,
        ),
        (
            "import-lattice-route-without-namespace",
            live(|t| {
                t.replacen(
                    "metadata: {name: shop, namespace: web}",
                    "metadata: {name: shop}",
                    1,
                )
            }),
            1,
        ),
        (
            "import-bridge-elsewhere",
            live(|t| {
                t.replace(
                    "externalName: shop.lattice.internal",
                    "externalName: shop-web-0a1b2c.7d67968.vpc-lattice-svcs.ap-northeast-2.on.aws",
                )
            }),
            1,
        ),
    ]
}

/// A project with two environments whose files are fine; `change` edits one of them.
fn environments(change: fn(&Path)) -> Setup {
    Box::new(move |d: &Path| {
        write(d, "apps/shop.yaml", OK_APP.as_bytes());
        write(d, "latgen.yaml", b"quotas: {rulesPerService: 10}\n");
        write(
            d,
            "environments/staging.yaml",
            b"lattice:\n  serviceNamePrefix: shop-stg\n",
        );
        write(
            d,
            "environments/production.yaml",
            b"lattice:\n  serviceNamePrefix: shop-prod\n",
        );
        change(d);
    })
}

/// An app of callers `callers` (one flow sequence), in a project whose auth is on in Region
/// ap-northeast-2 (partition `aws`).
fn with_callers(callers: &'static str) -> Setup {
    Box::new(move |d: &Path| {
        write(
            d,
            "latgen.yaml",
            b"auth:\n  mode: iam\n  account: \"111122223333\"\n  region: ap-northeast-2\n  kong: { vpcs: [vpc-0a1b2c3d4e5f67890] }\n",
        );
        let body = format!("{OK_APP}callers:\n  - principals: {callers}\n");
        write(d, "apps/shop.yaml", body.as_bytes());
    })
}

/// Principal ARNs that IAM refuses in a policy (a role or user without a name, a path
/// with a `..` folder, a name without a letter or digit) or never lets in (another
/// partition's principal): the controller's PutAuthPolicy would fail, and a new service
/// would stay open. And an environment whose Lattice services are in another account
/// than its policies name.
fn principal_cases() -> Vec<(&'static str, Setup, i32)> {
    vec![
        (
            "principal-role-without-name",
            with_callers(r#"["arn:aws:iam::111122223333:role//"]"#),
            2,
        ),
        (
            "principal-role-dot-dot-path",
            with_callers(r#"["arn:aws:iam::111122223333:role/../x"]"#),
            2,
        ),
        (
            "principal-user-without-letter",
            with_callers(r#"["arn:aws:iam::111122223333:user/@"]"#),
            2,
        ),
        (
            "principal-other-partition",
            with_callers(r#"["arn:aws-cn:iam::111122223333:role/reports"]"#),
            2,
        ),
        (
            "env-placement-account-not-auth-account",
            environments(|d| {
                write(
                    d,
                    "latgen.yaml",
                    b"auth:\n  mode: iam\n  account: \"111122223333\"\n  region: ap-northeast-2\n  kong: { vpcs: [vpc-0a1b2c3d4e5f67890] }\n",
                );
                write(
                    d,
                    "environments/staging.yaml",
                    b"# Staging: its own account.\nlattice:\n  serviceNamePrefix: shop-stg\n  placement:\n    account: \"444455556666\"\n",
                );
            }),
            2,
        ),
    ]
}

/// Cases about environments: choosing one, their overlays, and apps that name them.
fn environment_cases() -> Vec<(&'static str, Setup, i32)> {
    vec![
        ("env-not-given", environments(|_| {}), 2),
        ("env-unknown-name", environments(|_| {}), 2),
        ("env-given-without-environments", Box::new(app(OK_APP)), 2),
        (
            "env-overlay-unknown-field",
            environments(|d| {
                write(
                    d,
                    "environments/staging.yaml",
                    b"# Staging.\nquotas:\n  rulesPerServise: 5\n",
                )
            }),
            2,
        ),
        (
            "env-overlay-wrong-type",
            environments(|d| {
                write(
                    d,
                    "environments/production.yaml",
                    b"quotas: {rulesPerService: many}\n",
                )
            }),
            2,
        ),
        (
            "env-overlay-bad-prefix",
            environments(|d| {
                write(
                    d,
                    "environments/production.yaml",
                    b"# Production.\nlattice:\n  serviceNamePrefix: Shop_Prod\n",
                )
            }),
            2,
        ),
        (
            "env-overlay-named-yml",
            environments(|d| write(d, "environments/qa.yml", b"{}\n")),
            2,
        ),
        (
            "env-named-all",
            environments(|d| write(d, "environments/all.yaml", b"{}\n")),
            2,
        ),
        (
            "env-bad-name",
            environments(|d| write(d, "environments/Prod.yaml", b"{}\n")),
            2,
        ),
        (
            "env-app-names-unknown-environment",
            environments(|d| {
                write(d, "apps/lab.yaml", b"namespace: lab\nservice: { name: lab, port: 8080 }\npaths: [/lab]\nenvironments: [stagin]\n")
            }),
            2,
        ),
        (
            "env-app-names-environments-in-a-project-without",
            Box::new(app(
                "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/shop]\nenvironments: [staging]\n",
            )),
            2,
        ),
    ]
}

/// The command a case runs (`--color never` is added): `render apps -o generated` unless
/// the case is about the output folder or about another command.
fn command(case: &str) -> Vec<&'static str> {
    match case {
        "output-inside-apps" => vec!["render", "apps", "-o", "apps/generated"],
        "output-is-a-file" => vec!["render", "apps", "-o", "out.yaml"],
        "check-base-unknown-revision" => vec!["check", "--base", "no-such-rev"],
        "move-unknown-app" => vec!["move", "shoping", "--group", "1"],
        "move-into-full-group" => vec!["move", "blog", "--group", "1"],
        c if c.starts_with("import-") => vec!["import", "live", "-o", "apps"],
        "env-not-given" | "env-app-names-environments-in-a-project-without" => {
            vec!["render", "apps"]
        }
        "env-unknown-name" => vec!["render", "apps", "--env", "stagin"],
        "env-given-without-environments" => vec!["render", "apps", "--env", "staging"],
        c if c.starts_with("env-") => vec!["render", "apps", "--env", "all"],
        _ => vec!["render", "apps", "-o", "generated"],
    }
}

/// One case: its exit code, in time; a refused case writes nothing and prints exactly its
/// snapshot, a fine case renders.
fn run_case(case: &str, setup: &dyn Fn(&Path), want_code: i32) {
    let tmp = common::scratch();
    setup(tmp.path());
    let before: Vec<_> = std::fs::read_dir(tmp.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let start = Instant::now();
    let out = Command::new(common::bin())
        .args(command(case))
        .args(["--color", "never"])
        .current_dir(tmp.path())
        .output()
        .unwrap();
    let took = start.elapsed();
    let code = out.status.code().unwrap_or(-1);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(took <= Duration::from_secs(10), "{case}: took {took:?}");
    assert!(
        code == want_code,
        "{case}: exit {code}, want {want_code}\n{stderr}"
    );
    if want_code != 0 {
        let mut after: Vec<_> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        after.sort();
        let mut before = before.clone();
        before.sort();
        assert!(
            after == before,
            "{case}: the run wrote {after:?} (before: {before:?})"
        );
        let file = common::root().join(format!("tests/corpus/{case}.stderr"));
        common::assert_snapshot(&file, &stderr);
    } else {
        assert!(
            tmp.path()
                .join("generated/kong/httproute-shop.yaml")
                .exists(),
            "{case}: rendered nothing\n{stderr}"
        );
    }
}

/// Every snapshot belongs to a refused case: a removed or renamed case leaves no stale file
/// behind.
fn no_stale_snapshots() {
    let refused: Vec<String> = cases()
        .into_iter()
        .filter(|(_, _, code)| *code != 0)
        .map(|(case, _, _)| format!("{case}.stderr"))
        .collect();
    let stale: Vec<String> = common::read_tree(&common::root().join("tests/corpus"))
        .into_keys()
        .map(|p| p.display().to_string())
        .filter(|f| !refused.contains(f))
        .collect();
    assert!(stale.is_empty(), "snapshots of no refused case: {stale:?}");
}

/// Runs one test per case, named `corpus::<case>`.
fn main() {
    let args = libtest_mimic::Arguments::from_args();
    let mut trials: Vec<Trial> = cases()
        .into_iter()
        .map(|(case, setup, want_code)| {
            Trial::test(format!("corpus::{case}"), move || {
                run_case(case, &*setup, want_code);
                Ok(())
            })
        })
        .collect();
    trials.push(Trial::test("corpus::no-stale-snapshots", || {
        no_stale_snapshots();
        Ok(())
    }));
    libtest_mimic::run(&args, trials).exit();
}
