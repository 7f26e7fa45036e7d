//! The proof that lets a run skip reading the built-in templates' output back: for any
//! project that validates and plans, every object the built-in templates render parses
//! back into its typed object and equals the typed model latgen has of it (a render that
//! reads each object back and compares it with the model, as `--verify` does, is Ok).
//!
//! Projects are generated as text (declarations and latgen.yaml) with hostile strings in
//! every field a user writes: YAML syntax, YAML 1.1 words, number forms, line and format
//! characters, very long values, in plain, single- and double-quoted form. Validation
//! refuses many of them; the fixed sample below shows that enough are accepted, and that
//! they reach every template and every branch of one.

#[path = "../../fuzz/common/pipeline.rs"]
mod pipeline;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use pipeline::{Outcome, Project};
use proptest::prelude::*;
use proptest::sample::{Index, select};
use proptest::strategy::ValueTree;
use proptest::test_runner::{RngAlgorithm, TestRng, TestRunner};

/// Fragments that mean something to YAML or to a reader of it; mixed into values.
const HOSTILE: &[&str] = &[
    ": ",
    " #",
    "#",
    "'",
    "\"",
    "\n",
    "\r\n",
    "---",
    "...",
    "{",
    "}",
    "[",
    "]",
    "&a",
    "*a",
    "!",
    "!!str ",
    "%",
    "@",
    "|",
    ">",
    "`",
    " ",
    "\t",
    "yes",
    "no",
    "on",
    "off",
    "null",
    "~",
    "true",
    "1e3",
    "0x1F",
    "08",
    ".5",
    "? ",
    ",",
    "\\",
    "<<",
    "\u{85}",
    "\u{2028}",
    "\u{2029}",
    "\u{feff}",
    "\u{7f}",
    "\u{0}",
    "\u{9f}",
    "\u{fffe}",
    "é",
    "\u{1f600}",
    "\u{fffd}",
];

/// Words that are valid names but YAML 1.1 or 1.2 would read as something else if plain.
const WORDS: &[&str] = &[
    "yes", "no", "on", "off", "null", "true", "false", "y", "n", "nan", "inf", "e", "x", "shop",
    "web", "a-b", "api",
];

/// Labels that start with a digit and read as numbers if plain.
const NUMBERS: &[&str] = &["1e3", "0x1f", "08", "0", "123", "0o17", "1-2", "5e-1"];

/// Path segments a Lattice rule and the HTTPRoute CRD's CEL rule take, many of them
/// special to YAML or to URLs (`%` only as a percent-encoded byte, no `?`: the CRD refuses
/// those, and the validator with it).
const SEGMENTS: &[&str] = &[
    "shop",
    "a",
    "cart",
    "v2",
    ":",
    "@",
    "%25",
    "&",
    "q=1&r=2",
    "~",
    "+",
    "=",
    "-",
    "_",
    ".5",
    "1e3",
    "0x1F",
    "08",
    "null",
    "yes",
    "on",
    "~user",
    "a:b",
    "%41",
    "..a",
    ".well-known",
    "@me:x",
    "&a",
    "a=b",
    "x-",
    "::",
];

/// Header names Lattice can match, with the characters YAML reads as syntax.
const HEADERS: &[&str] = &[
    "x-latgen-app",
    "x#a",
    "!",
    "&a",
    "*a",
    "|",
    "`",
    "'",
    "~",
    "%",
    "^",
    "x.y",
    "x+y",
    "$x",
    "yes",
    "null",
    "on",
    "1e3",
    "0x1f",
    "08",
    "x-amzn-lattice-a",
    "X-Up",
];

/// Service name prefixes, most of which read as something else in plain YAML.
const PREFIXES: &[&str] = &[
    "shop-prod",
    "on",
    "null",
    "yes",
    "1e3",
    "0x1f",
    "08",
    "true",
    "no",
    "off",
    "y",
    "n",
    "a-b-c",
];

/// Group name prefixes.
const GROUP_PREFIXES: &[&str] = &[
    "group-", "g", "yes-", "null", "on", "1e3-", "0x", "08", "a-b-", "n",
];

/// Integers as YAML may write them; the first ones are what a user means.
const PORTS: &[&str] = &["80", "8080", "1", "65535", "443"];
const ODD_PORTS: &[&str] = &[
    "0x1F", "08", "1e3", "0", "65536", "\"80\"", ".5", "~", "+80", "0o17", "1_000", "-1",
];
const INTERVALS: &[&str] = &["5", "300", "10", "0x1F"];
const ODD_INTERVALS: &[&str] = &["08", "1e1", "~", "null", "\"10\"", "10.0", ".5", "4", "301"];
const TIMEOUTS: &[&str] = &["60000", "1", "2147483646", "250ms", "30s", "2m", "0x10"];
const ODD_TIMEOUTS: &[&str] = &["0", "2147483647", "1.5s", "-1", "~", "\"60\"", "30 s", "1h"];
const PEAKS: &[&str] = &["1", "600", "2500"];
const ODD_PEAKS: &[&str] = &["0", "-1", "1e3", "\"600\"", "~"];
const RETRIES: &[&str] = &["0", "5", "32767"];
const ODD_RETRIES: &[&str] = &["32768", "-1", "~", "1e1", "\"3\""];
const ODD_PINS: &[&str] = &["0x1", "01", "~", "null", "0", "\"1\"", "1e0", "-1", "2"];

/// How a scalar is written in the generated YAML.
#[derive(Debug, Clone, Copy)]
enum Style {
    Plain,
    Single,
    /// Double-quoted, with characters outside ASCII escaped or written as they are.
    Double {
        escape: bool,
    },
}

/// A string value and how it is written.
#[derive(Debug, Clone)]
struct Val {
    value: String,
    style: Style,
}

impl Val {
    fn yaml(&self) -> String {
        match self.style {
            Style::Plain => self.value.clone(),
            Style::Single => format!("'{}'", self.value.replace('\'', "''")),
            Style::Double { escape } => double_quoted(&self.value, escape),
        }
    }
}

/// A YAML double-quoted scalar of `s`.
fn double_quoted(s: &str, escape: bool) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32))
            }
            c if escape && (c as u32) > 0xffff => out.push_str(&format!("\\U{:08x}", c as u32)),
            c if escape && !c.is_ascii() => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn style() -> impl Strategy<Value = Style> {
    prop_oneof![
        3 => Just(Style::Plain),
        2 => Just(Style::Single),
        4 => Just(Style::Double { escape: true }),
        2 => Just(Style::Double { escape: false }),
    ]
}

/// `value` with, now and then, a hostile fragment put in at some place: mostly valid
/// values (so that projects are accepted), some that validation must refuse.
fn mixed(value: impl Strategy<Value = String> + Clone + 'static) -> BoxedStrategy<String> {
    prop_oneof![
        30 => value.clone(),
        1 => (value, select(HOSTILE), any::<Index>()).prop_map(|(v, h, at)| {
            let chars: Vec<char> = v.chars().collect();
            let i = at.index(chars.len() + 1);
            let (head, tail) = chars.split_at(i);
            format!("{}{h}{}", head.iter().collect::<String>(), tail.iter().collect::<String>())
        }),
    ]
    .boxed()
}

fn val(value: impl Strategy<Value = String> + Clone + 'static) -> impl Strategy<Value = Val> {
    (mixed(value), style()).prop_map(|(value, style)| Val { value, style })
}

/// Anything: fragments of every kind, for the settings latgen passes through unchecked.
fn wild() -> impl Strategy<Value = String> {
    let piece = prop_oneof![3 => select(HOSTILE), 1 => select(WORDS), 1 => select(NUMBERS)];
    prop_oneof![
        4 => prop::collection::vec(piece, 1..5).prop_map(|p| p.concat()),
        1 => (select(HOSTILE), 100usize..400).prop_map(|(h, n)| h.repeat(n)),
        1 => Just(String::new()),
    ]
}

/// A DNS-1123 label, starting with a letter when `letter_first`; now and then too long.
fn label(letter_first: bool) -> BoxedStrategy<String> {
    let first = if letter_first {
        select(WORDS).boxed()
    } else {
        prop_oneof![select(WORDS), select(NUMBERS)].boxed()
    };
    let rest = prop::option::of(prop_oneof![select(WORDS), select(NUMBERS)]);
    prop_oneof![
        60 => (first, rest).prop_map(|(a, b)| match b {
            Some(b) => format!("{a}-{b}"),
            None => a.to_string(),
        }),
        1 => (50usize..70).prop_map(|n| format!("a{}", "b".repeat(n))),
    ]
    .boxed()
}

/// Valid host names that YAML reads as numbers if plain.
const NUMBER_HOSTS: &[&str] = &["0.5e-1", "1.5e3", "123.1e3", "08.5e1"];

fn hostname() -> BoxedStrategy<String> {
    prop_oneof![
        8 => prop::collection::vec(label(false), 1..3)
            .prop_map(|labels| format!("{}.example", labels.join("."))),
        1 => select(NUMBER_HOSTS).prop_map(str::to_string),
    ]
    .boxed()
}

fn path() -> BoxedStrategy<String> {
    prop_oneof![
        1 => Just("/".to_string()),
        40 => prop::collection::vec(select(SEGMENTS), 1..4).prop_map(|s| format!("/{}", s.join("/"))),
        1 => (100usize..140).prop_map(|n| format!("/{}", "p".repeat(n))),
    ]
    .boxed()
}

/// An integer as written in YAML: mostly one a user means, some odd forms.
fn number(usual: &'static [&'static str], odd: &'static [&'static str]) -> BoxedStrategy<String> {
    prop_oneof![20 => select(usual), 1 => select(odd)]
        .prop_map(str::to_string)
        .boxed()
}

/// A value written in odd ways more often: for settings latgen passes through unchecked.
fn wild_val() -> impl Strategy<Value = Val> {
    let style = prop_oneof![
        6 => Just(Style::Double { escape: true }),
        3 => Just(Style::Double { escape: false }),
        1 => Just(Style::Single),
        1 => Just(Style::Plain),
    ];
    (wild(), style).prop_map(|(value, style)| Val { value, style })
}

/// One entry of `paths:`: bare, `prefix:` or `exact:`.
#[derive(Debug, Clone)]
enum Match {
    Bare(Val),
    Prefix(Val),
    Exact(Val),
}

impl Match {
    fn val(&mut self) -> &mut Val {
        match self {
            Match::Bare(v) | Match::Prefix(v) | Match::Exact(v) => v,
        }
    }

    fn yaml(&self) -> String {
        match self {
            Match::Bare(v) => v.yaml(),
            Match::Prefix(v) => format!("prefix: {}", v.yaml()),
            Match::Exact(v) => format!("exact: {}", v.yaml()),
        }
    }
}

fn path_match() -> impl Strategy<Value = Match> + Clone {
    prop_oneof![
        3 => val(path()).prop_map(Match::Bare),
        1 => val(path()).prop_map(Match::Prefix),
        2 => val(path()).prop_map(Match::Exact),
    ]
}

/// A generated app declaration.
#[derive(Debug, Clone)]
struct AppGen {
    /// `name:`; unset, the file's name is the app's.
    name: Option<Val>,
    stem: String,
    namespace: Val,
    service: Val,
    port: String,
    host: Option<Val>,
    paths: Option<Vec<Match>>,
    pin: Option<String>,
    isolate: bool,
    health: Option<(Option<Val>, Option<String>)>,
    kong: Option<KongGen>,
    /// `peakRps:`, written as is.
    peak: Option<String>,
}

/// A generated `kong:` block: plugin names, one timeout of each kind, retries, hosts.
#[derive(Debug, Clone)]
struct KongGen {
    plugins: Vec<Val>,
    timeouts: [Option<String>; 3],
    retries: Option<String>,
    hosts: Vec<Val>,
}

fn kong() -> impl Strategy<Value = KongGen> {
    let timeout = || prop::option::of(number(TIMEOUTS, ODD_TIMEOUTS));
    (
        prop::collection::vec(val(label(false)), 0..3),
        [timeout(), timeout(), timeout()],
        prop::option::of(number(RETRIES, ODD_RETRIES)),
        prop::option::weighted(0.25, val(hostname())).prop_map(|h| h.into_iter().collect()),
    )
        .prop_map(|(plugins, timeouts, retries, hosts)| KongGen {
            plugins,
            timeouts,
            retries,
            hosts,
        })
}

impl KongGen {
    fn yaml(&self) -> String {
        let mut t = "kong:\n".to_string();
        if !self.plugins.is_empty() {
            let names: Vec<String> = self.plugins.iter().map(Val::yaml).collect();
            t += &format!("  plugins: [{}]\n", names.join(", "));
        }
        let timeouts = ["connect", "read", "write"].iter().zip(&self.timeouts);
        let timeouts: Vec<String> = timeouts
            .filter_map(|(k, v)| Some(format!("{k}: {}", v.as_ref()?)))
            .collect();
        if !timeouts.is_empty() {
            t += &format!("  timeouts: {{{}}}\n", timeouts.join(", "));
        }
        if let Some(r) = &self.retries {
            t += &format!("  retries: {r}\n");
        }
        for (i, h) in self.hosts.iter().enumerate() {
            t += &format!(
                "{}    - {}\n",
                if i == 0 { "  hosts:\n" } else { "" },
                h.yaml()
            );
        }
        t
    }
}

fn app() -> impl Strategy<Value = AppGen> {
    let paths = prop::collection::vec(path_match(), 1..4);
    // Host-routed apps list their paths or serve the whole host; a pin is for the others.
    let routing = prop_oneof![
        3 => (paths.clone(), prop::option::weighted(0.2, number(&["1"], ODD_PINS)))
            .prop_map(|(p, pin)| (None, Some(p), pin)),
        1 => (val(hostname()), prop::option::of(paths))
            .prop_map(|(h, p)| (Some(h), p, None)),
    ];
    let health = prop::option::weighted(
        0.4,
        (
            prop::option::of(val(path())),
            prop::option::of(number(INTERVALS, ODD_INTERVALS)),
        ),
    );
    let who = (
        prop::option::of(val(label(true))),
        label(true),
        prop::option::weighted(0.3, number(PEAKS, ODD_PEAKS)),
    );
    let backend = (
        val(label(false)),
        val(label(false)),
        number(PORTS, ODD_PORTS),
    );
    let kong = prop::option::weighted(0.12, kong());
    (
        who,
        backend,
        routing,
        prop::bool::weighted(0.1),
        health,
        kong,
    )
        .prop_map(
            |(
                (name, stem, peak),
                (namespace, service, port),
                (host, paths, pin),
                isolate,
                health,
                kong,
            )| AppGen {
                name,
                stem,
                namespace,
                service,
                port,
                host,
                paths,
                pin,
                isolate,
                health,
                kong,
                peak,
            },
        )
}

/// The declaration's text.
fn declaration(a: &AppGen) -> String {
    let mut t = String::new();
    if let Some(n) = &a.name {
        t += &format!("name: {}\n", n.yaml());
    }
    t += &format!("namespace: {}\n", a.namespace.yaml());
    t += &format!(
        "service:\n  name: {}\n  port: {}\n",
        a.service.yaml(),
        a.port
    );
    if let Some(h) = &a.host {
        t += &format!("host: {}\n", h.yaml());
    }
    if let Some(paths) = &a.paths {
        t += "paths:\n";
        for p in paths {
            t += &format!("  - {}\n", p.yaml());
        }
    }
    if let Some(pin) = &a.pin {
        t += &format!("group: {pin}\n");
    }
    if a.isolate {
        t += "isolate: true\n";
    }
    match &a.health {
        Some((None, None)) => t += "healthCheck: {}\n",
        Some((path, interval)) => {
            t += "healthCheck:\n";
            if let Some(p) = path {
                t += &format!("  path: {}\n", p.yaml());
            }
            if let Some(i) = interval {
                t += &format!("  intervalSeconds: {i}\n");
            }
        }
        None => {}
    }
    if let Some(k) = &a.kong {
        t += &k.yaml();
    }
    if let Some(p) = &a.peak {
        t += &format!("peakRps: {p}\n");
    }
    t
}

/// Makes names, hosts and paths unique across the apps where they came out equal, so that
/// most projects are not refused for a clash the generator made by chance.
fn make_unique(apps: &mut [AppGen]) {
    let (mut names, mut hosts, mut paths) = (BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for (i, a) in apps.iter_mut().enumerate() {
        match &mut a.name {
            Some(n) if !names.insert(n.value.clone()) => n.value += &format!("-{i}"),
            Some(_) => {}
            None if !names.insert(a.stem.clone()) => a.stem += &format!("-{i}"),
            None => {}
        }
        if let Some(h) = &mut a.host
            && !hosts.insert(h.value.clone())
        {
            h.value = format!("h{i}.{}", h.value);
        }
        // Extra Kong hosts of one app's own: never another app's, never the project's.
        for (k, h) in a.kong.iter_mut().flat_map(|k| &mut k.hosts).enumerate() {
            h.value = format!("x{i}-{k}.{}", h.value);
        }
        let host = a.host.as_ref().map(|h| h.value.clone());
        for (k, m) in a.paths.iter_mut().flatten().enumerate() {
            let exact = matches!(m, Match::Exact(_));
            let v = m.val();
            if !paths.insert((host.clone(), exact, v.value.clone())) {
                v.value += &format!("-{i}{k}");
            }
        }
    }
}

/// A Gateway reference in the settings.
#[derive(Debug, Clone)]
struct GatewayGen {
    name: Val,
    namespace: Option<Val>,
    section_name: Option<Val>,
}

fn gateway() -> impl Strategy<Value = GatewayGen> {
    // The namespace and listener name reach the routes as they are written.
    let free = || prop::option::of(prop_oneof![1 => val(label(false)), 2 => wild_val()]);
    (val(label(false)), free(), free()).prop_map(|(name, namespace, section_name)| GatewayGen {
        name,
        namespace,
        section_name,
    })
}

/// Generated settings; an unset field is left out of latgen.yaml.
#[derive(Debug, Clone)]
struct SettingsGen {
    lattice_gateway: Option<GatewayGen>,
    kong_gateway: Option<GatewayGen>,
    lattice_namespace: Option<Val>,
    kong_namespace: Option<Val>,
    group_prefix: Option<Val>,
    domain: Option<Val>,
    hostnames: Option<Vec<Val>>,
    /// Set: `dispatch: header`, with `dispatchHeader` when the inner value is.
    header: Option<Option<Val>>,
    service_name_prefix: Option<Val>,
    https: bool,
    kong_port: Option<String>,
    rules_per_service: u8,
    reference_grants: bool,
    target_group_policies: bool,
    /// `auth.mode: iam`, Kong calling from its VPC.
    auth: bool,
    /// `observability:` with PrometheusRules, latgen's Prometheus plugin and access logs.
    observability: bool,
}

fn settings() -> impl Strategy<Value = SettingsGen> {
    let opt = |s: BoxedStrategy<Val>| prop::option::of(s);
    let labels = (
        opt(val(label(false)).boxed()),
        opt(val(label(false)).boxed()),
        opt(val(select(GROUP_PREFIXES).prop_map(str::to_string)).boxed()),
        opt(val(hostname()).boxed()),
        prop::option::of(prop::collection::vec(val(hostname()), 0..3)),
    );
    let routing = (
        prop::option::of(prop::option::of(val(
            select(HEADERS).prop_map(str::to_string)
        ))),
        opt(val(select(PREFIXES).prop_map(str::to_string)).boxed()),
        any::<bool>(),
        prop::option::weighted(0.2, number(PORTS, ODD_PORTS)),
    );
    let switches = (
        1u8..=16,
        prop::bool::weighted(0.9),
        prop::bool::weighted(0.9),
    );
    let gateways = (prop::option::of(gateway()), prop::option::of(gateway()));
    (gateways, labels, routing, switches).prop_map(
        |((lg, kg), (ln, kn, gp, dom, hn), (header, snp, https, port), (rules, rg, tgp))| {
            SettingsGen {
                lattice_gateway: lg,
                kong_gateway: kg,
                lattice_namespace: ln,
                kong_namespace: kn,
                group_prefix: gp,
                domain: dom,
                hostnames: hn,
                header,
                service_name_prefix: snp,
                https,
                kong_port: port,
                rules_per_service: rules,
                reference_grants: rg,
                target_group_policies: tgp,
                // A quarter of the projects, chosen by a value drawn already: a draw of its
                // own would change every project after it.
                auth: rules % 4 == 0,
                observability: rules % 3 == 0,
            }
        },
    )
}

/// `  key: value` lines for the fields that are set, indented by `indent`.
fn fields(indent: &str, pairs: &[(&str, Option<String>)]) -> String {
    pairs
        .iter()
        .filter_map(|(k, v)| v.as_ref().map(|v| format!("{indent}{k}: {v}\n")))
        .collect()
}

fn gateway_text(indent: &str, g: &GatewayGen) -> String {
    let inner = format!("{indent}  ");
    let pairs = [
        ("name", Some(g.name.yaml())),
        ("namespace", g.namespace.as_ref().map(Val::yaml)),
        ("sectionName", g.section_name.as_ref().map(Val::yaml)),
    ];
    format!("{indent}gateway:\n{}", fields(&inner, &pairs))
}

/// The text of latgen.yaml.
fn settings_text(s: &SettingsGen) -> String {
    let mut t = String::from("lattice:\n");
    if let Some(g) = &s.lattice_gateway {
        t += &gateway_text("  ", g);
    }
    let header = s.header.as_ref();
    t += &fields(
        "  ",
        &[
            ("namespace", s.lattice_namespace.as_ref().map(Val::yaml)),
            ("groupPrefix", s.group_prefix.as_ref().map(Val::yaml)),
            ("domain", s.domain.as_ref().map(Val::yaml)),
            ("dispatch", header.map(|_| "header".to_string())),
            (
                "dispatchHeader",
                header.and_then(|h| h.as_ref().map(Val::yaml)),
            ),
            (
                "serviceNamePrefix",
                s.service_name_prefix.as_ref().map(Val::yaml),
            ),
            ("referenceGrants", Some(s.reference_grants.to_string())),
            (
                "targetGroupPolicies",
                Some(s.target_group_policies.to_string()),
            ),
        ],
    );
    t += "kong:\n";
    if let Some(g) = &s.kong_gateway {
        t += &gateway_text("  ", g);
    }
    let protocol = if s.https { "https" } else { "http" };
    t += &fields(
        "  ",
        &[
            ("namespace", s.kong_namespace.as_ref().map(Val::yaml)),
            ("protocol", Some(protocol.to_string())),
            ("port", s.kong_port.clone()),
        ],
    );
    match s.hostnames.as_deref() {
        Some([]) => t += "  hostnames: []\n",
        Some(_) => t += "  hostnames:\n",
        None => {}
    }
    for h in s.hostnames.iter().flatten() {
        t += &format!("    - {}\n", h.yaml());
    }
    if s.auth {
        t += "auth:\n  mode: iam\n  account: \"111122223333\"\n  region: ap-northeast-2\n";
        t += "  kong: { vpcs: [vpc-0a1b2c3d4e5f67890] }\n  serviceNetworkPolicy: true\n";
    }
    if s.observability {
        t += "observability:\n  prometheus: { labels: { release: prom } }\n";
        t += "  accessLogs: { destinationArn: \"arn:aws:s3:::lattice-logs\" }\n";
    }
    t + &format!("quotas:\n  rulesPerService: {}\n", s.rules_per_service)
}

/// A whole project as the texts a user would commit.
fn project_of(settings: &SettingsGen, mut apps: Vec<AppGen>) -> Project {
    make_unique(&mut apps);
    let decls = apps
        .iter()
        .enumerate()
        .map(|(i, a)| {
            let file = match a.name {
                Some(_) => format!("apps/file{i}.yaml"),
                None => format!("apps/{}.yaml", a.stem),
            };
            (PathBuf::from(file), declaration(a))
        })
        .collect();
    Project {
        config: Some(settings_text(settings)),
        lock: None,
        decls,
    }
}

fn project() -> impl Strategy<Value = Project> {
    let apps = prop_oneof![
        1 => Just(Vec::new()),
        15 => prop::collection::vec(app(), 1..5),
    ];
    (settings(), apps).prop_map(|(s, apps)| project_of(&s, apps))
}

/// Projects in the fixed sample.
const SAMPLE: usize = 200;

/// The first projects the property's strategy makes from a fixed seed, and how each ran.
fn sample() -> Vec<(Project, Outcome)> {
    let rng = TestRng::deterministic_rng(RngAlgorithm::ChaCha);
    let mut runner = TestRunner::new_with_rng(ProptestConfig::default(), rng);
    let strategy = project();
    (0..SAMPLE)
        .map(|_| {
            let p = strategy.new_tree(&mut runner).expect("a project").current();
            let outcome = pipeline::run(&p, pipeline::verifying_templates());
            (p, outcome)
        })
        .collect()
}

fn messages(diags: &latgen::diag::Diagnostics) -> String {
    diags
        .iter()
        .map(|d| format!("{}: {}", d.code, d.message))
        .collect::<Vec<_>>()
        .join("\n")
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The proof itself: a project that validates and plans renders, every object equal
    /// to its typed model.
    #[test]
    fn built_in_templates_render_the_typed_model(project in project()) {
        if let Outcome::Failed(diags) = pipeline::run(&project, pipeline::verifying_templates()) {
            prop_assert!(false, "a project that plans does not render:\n{}", messages(&diags));
        }
    }
}

/// The built-in templates, every one rendered by the template engine (none by its writer).
fn interpreted_templates() -> &'static latgen::render::Templates {
    static T: std::sync::OnceLock<latgen::render::Templates> = std::sync::OnceLock::new();
    T.get_or_init(|| {
        latgen::render::Templates::load(None)
            .expect("built-in templates compile")
            .interpreting(true)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// The writers that render the most used built-in templates without the template
    /// engine (src/render/builtin.rs) give exactly the text their templates give, for
    /// every file of every generated project.
    #[test]
    fn built_in_writers_give_their_templates_text(project in project()) {
        let written = pipeline::run(&project, pipeline::verifying_templates());
        let interpreted = pipeline::run(&project, interpreted_templates());
        match (written, interpreted) {
            (Outcome::Rendered(w), Outcome::Rendered(i)) => {
                for (path, text) in &i.files {
                    prop_assert_eq!(w.files.get(path).map(|t| &**t), Some(&**text), "{}", path.display());
                }
                prop_assert_eq!(w.files.len(), i.files.len());
            }
            (Outcome::Refused, Outcome::Refused) => {}
            (Outcome::Failed(w), Outcome::Failed(i)) => prop_assert_eq!(messages(&w), messages(&i)),
            (w, i) => prop_assert!(false, "written: {w:?}\ninterpreted: {i:?}"),
        }
    }
}

/// The property is not vacuous: a good share of the generated projects, hostile values and
/// all, get through validation and planning and are rendered.
#[test]
fn a_third_of_the_generated_projects_render() {
    let sample = sample();
    let rendered = sample
        .iter()
        .filter(|(p, o)| !p.decls.is_empty() && matches!(o, Outcome::Rendered(_)))
        .count();
    assert!(
        rendered * 3 >= SAMPLE,
        "only {rendered} of {SAMPLE} generated projects with apps render"
    );
}

/// A rendered file: its path under the output folder, and its text.
type FileCheck = fn(&Path, &str) -> bool;

fn is(path: &Path, side: &str, prefix: &str) -> bool {
    path.starts_with(side)
        && path
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with(prefix))
}

fn group_route(p: &Path, t: &str) -> bool {
    is(p, "lattice", "httproute-") && t.contains("latgen.dev/group:")
}

fn host_route(p: &Path, t: &str) -> bool {
    is(p, "lattice", "httproute-") && !t.contains("latgen.dev/group:")
}

fn kong_route(p: &Path, _: &str) -> bool {
    is(p, "kong", "httproute-")
}

fn bridge(p: &Path, _: &str) -> bool {
    is(p, "kong", "service-")
}

fn policy(p: &Path, _: &str) -> bool {
    is(p, "lattice", "targetgrouppolicy-")
}

fn auth_policy(p: &Path, _: &str) -> bool {
    is(p, "lattice", "iamauthpolicy-")
}

fn route(p: &Path, t: &str) -> bool {
    group_route(p, t) || host_route(p, t) || kong_route(p, t)
}

/// Every template and every branch of one, as it shows in a rendered file.
const BRANCHES: &[(&str, FileCheck)] = &[
    ("auth policy of a group", |p, t| {
        auth_policy(p, t) && t.contains("latgen.dev/group")
    }),
    ("auth policy of a dedicated route", |p, t| {
        auth_policy(p, t) && !t.contains("latgen.dev/group")
    }),
    ("auth policy, header condition", |p, t| {
        auth_policy(p, t) && t.contains("RequestHeader/")
    }),
    ("group route, path dispatch", |p, t| {
        group_route(p, t) && !t.contains("headers:")
    }),
    ("group route, header dispatch", |p, t| {
        group_route(p, t) && t.contains("headers:")
    }),
    ("group route, service name set", |p, t| {
        group_route(p, t) && t.contains("service-name-override:")
    }),
    ("group route, service name not set", |p, t| {
        group_route(p, t) && !t.contains("service-name-override:")
    }),
    ("host route", host_route),
    ("host route, service name set", |p, t| {
        host_route(p, t) && t.contains("service-name-override:")
    }),
    ("Kong route, dispatch header", |p, t| {
        kong_route(p, t) && t.contains("RequestHeaderModifier")
    }),
    ("Kong route, no dispatch header", |p, t| {
        kong_route(p, t) && !t.contains("RequestHeaderModifier")
    }),
    ("Kong route, hostnames", |p, t| {
        kong_route(p, t) && t.contains("\n  hostnames:")
    }),
    ("Kong route, any host", |p, t| {
        kong_route(p, t) && !t.contains("\n  hostnames:")
    }),
    ("parentRef with a namespace", |p, t| {
        route(p, t) && t.contains("\n      namespace: ")
    }),
    ("parentRef with a quoted namespace", |p, t| {
        route(p, t) && t.contains("\n      namespace: \"")
    }),
    ("parentRef without a namespace", |p, t| {
        route(p, t) && !t.contains("\n      namespace: ")
    }),
    ("parentRef with a sectionName", |p, t| {
        route(p, t) && t.contains("\n      sectionName: ")
    }),
    ("parentRef with a quoted sectionName", |p, t| {
        route(p, t) && t.contains("\n      sectionName: \"")
    }),
    ("parentRef without a sectionName", |p, t| {
        route(p, t) && !t.contains("sectionName: ")
    }),
    ("Kong route, plugins", |p, t| {
        kong_route(p, t) && t.contains("konghq.com/plugins:")
    }),
    ("Kong route, no plugins", |p, t| {
        kong_route(p, t) && !t.contains("konghq.com/plugins:")
    }),
    ("bridge, connect timeout", |p, t| {
        bridge(p, t) && t.contains("konghq.com/connect-timeout: ")
    }),
    ("bridge, read timeout", |p, t| {
        bridge(p, t) && t.contains("konghq.com/read-timeout: ")
    }),
    ("bridge, write timeout", |p, t| {
        bridge(p, t) && t.contains("konghq.com/write-timeout: ")
    }),
    ("bridge, retries", |p, t| {
        bridge(p, t) && t.contains("konghq.com/retries: ")
    }),
    ("bridge, no annotations", |p, t| {
        bridge(p, t) && !t.contains("annotations:")
    }),
    ("bridge, http", |p, t| {
        bridge(p, t) && !t.contains("konghq.com/protocol")
    }),
    ("bridge, https", |p, t| {
        bridge(p, t) && t.contains("konghq.com/protocol: https")
    }),
    ("PrometheusRule of the apps", |p, _| {
        is(p, "kong", "prometheusrule-latgen-apps")
    }),
    ("PrometheusRule of a Lattice service, peak alert", |p, t| {
        is(p, "kong", "prometheusrule-latgen-") && t.contains("LatgenAppAboveDeclaredPeak")
    }),
    (
        "PrometheusRule of a Lattice service, no peak alert",
        |p, t| {
            is(p, "kong", "prometheusrule-latgen-")
                && t.contains("LatgenLatticeServiceNearBudget")
                && !t.contains("LatgenAppAboveDeclaredPeak")
        },
    ),
    ("Kong's Prometheus plugin", |p, _| {
        is(p, "kong", "kongplugin-latgen-prometheus")
    }),
    ("access log policy of a group", |p, t| {
        is(p, "lattice", "accesslogpolicy-") && t.contains("latgen.dev/group")
    }),
    ("access log policy of a dedicated route", |p, t| {
        is(p, "lattice", "accesslogpolicy-") && !t.contains("latgen.dev/group")
    }),
    ("reference grant", |p, _| {
        is(p, "lattice", "referencegrant-")
    }),
    ("target group policy, interval", |p, t| {
        policy(p, t) && t.contains("intervalSeconds:")
    }),
    ("target group policy, no interval", |p, t| {
        policy(p, t) && !t.contains("intervalSeconds:")
    }),
    ("target group policy, path", |p, t| {
        policy(p, t) && t.contains("\n    path: ")
    }),
    ("target group policy, no path", |p, t| {
        policy(p, t) && !t.contains("\n    path: ")
    }),
    ("kustomization, resources", |p, t| {
        p.ends_with("kustomization.yaml") && t.contains("resources:\n  - ")
    }),
    ("kustomization, no resources", |p, t| {
        p.ends_with("kustomization.yaml") && t.contains("resources: []")
    }),
];

/// The property is not vacuous: the sample's rendered projects reach every branch of
/// every built-in template.
#[test]
fn the_generated_projects_reach_every_template_branch() {
    let sample = sample();
    let files: Vec<(&PathBuf, &latgen::manifest::tree::Text)> = sample
        .iter()
        .filter_map(|(_, o)| match o {
            Outcome::Rendered(out) => Some(out.files.iter()),
            _ => None,
        })
        .flatten()
        .collect();
    let missed: Vec<&str> = BRANCHES
        .iter()
        .filter(|(_, hit)| !files.iter().any(|(p, t)| hit(p, t)))
        .map(|(name, _)| *name)
        .collect();
    assert!(
        missed.is_empty(),
        "no generated project reaches: {missed:?}"
    );
}

/// The `pipeline` fuzz target's assertion, on each of its seeds: CI runs it without the
/// fuzzer.
#[test]
fn the_fuzz_seeds_render_the_typed_model() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz/seeds/pipeline");
    let mut seeds: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("the pipeline seeds")
        .map(|e| e.expect("a seed").path())
        .collect();
    seeds.sort();
    let mut rendered = 0;
    for seed in &seeds {
        // Shown with the failure, to name the seed.
        eprintln!("seed {}", seed.display());
        let text = std::fs::read_to_string(seed).expect("a seed is text");
        let outcome = pipeline::assert_no_rendered_invalid(&Project::from_sections(&text));
        rendered += usize::from(matches!(outcome, Outcome::Rendered(_)));
    }
    assert!(
        rendered > 0,
        "none of the {} seeds in {} renders",
        seeds.len(),
        dir.display()
    );
}

/// Found by the property: settings latgen passes through unchecked (a Gateway's namespace
/// and listener name) with a character JSON leaves as it is but YAML cannot print, or reads
/// as a line break, rendered routes that do not read back.
#[test]
fn gateway_settings_with_characters_yaml_cannot_print_render_the_typed_model() {
    for c in [
        '\u{7f}', '\u{85}', '\u{9f}', '\u{2028}', '\u{2029}', '\u{feff}', '\u{fffe}', '\u{ffff}',
    ] {
        let odd = double_quoted(&format!("a{c}b"), true);
        let gateway =
            format!("  gateway:\n    name: gw\n    namespace: {odd}\n    sectionName: {odd}\n");
        let project = Project {
            config: Some(format!("lattice:\n{gateway}kong:\n{gateway}")),
            lock: None,
            decls: vec![(
                PathBuf::from("apps/shop.yaml"),
                "namespace: web\nservice: { name: shop, port: 80 }\npaths: [/shop]\n".into(),
            )],
        };
        match pipeline::run(&project, pipeline::verifying_templates()) {
            Outcome::Rendered(_) => {}
            Outcome::Failed(diags) => panic!("{c:?}: {}", messages(&diags)),
            Outcome::Refused => panic!("{c:?}: the project is refused"),
        }
    }
}
