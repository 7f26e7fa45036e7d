//! `latgen explain CODE`: what a finding code means, its default severity, and an example
//! of an input that gets it. Also makes the README's table of codes.

use super::{Outcome, plural, to_stdout};
use crate::codes::Code;

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// The finding code (`nested-prefix`); without one, every code is listed.
    pub code: Option<String>,
}

pub fn run(args: &ExplainArgs) -> Outcome {
    let Some(name) = &args.code else {
        return to_stdout(list().as_bytes());
    };
    let Some(code) = Code::from_name(name) else {
        let names: Vec<&str> = Code::ALL.iter().map(|c| c.as_str()).collect();
        let hint = crate::diag::did_you_mean(name, names.iter().copied())
            .map(|m| format!(" (did you mean `{m}`?)"))
            .unwrap_or_default();
        eprintln!(
            "error: `{name}` is not a latgen finding code{hint}; `latgen explain` lists all {}",
            plural(Code::ALL.len(), "code")
        );
        return Outcome::Error;
    };
    to_stdout(text(code).as_bytes())
}

/// Every code with its default severity and summary, one a line, as `latgen explain`
/// prints them.
pub fn list() -> String {
    Code::ALL
        .iter()
        .map(|code| {
            format!(
                "{:<24} {:<8} {}\n",
                code.as_str(),
                code.severity().as_str(),
                code.summary()
            )
        })
        .collect()
}

/// The explanation of one code, as printed.
pub fn text(code: Code) -> String {
    format!(
        "{code} ({}): {}\n\n{}\n\nMore: {}\n",
        code.severity().as_str(),
        code.summary(),
        example(code),
        code.help_url()
    )
}

/// The README's table of codes (between `<!-- codes:start -->` and `<!-- codes:end -->`,
/// under "Finding codes"): one row per code, in the order of [`Code::ALL`].
pub fn markdown_table() -> String {
    let mut out = String::from("| code | severity | what it means |\n|---|---|---|\n");
    for code in Code::ALL {
        out.push_str(&format!(
            "| `{}` | {} | {} |\n",
            code.as_str(),
            code.severity().as_str(),
            code.summary().replace('|', "\\|")
        ));
    }
    out
}

/// An input that gets the code, the headline latgen prints for it and its help line. Each
/// is what latgen says of that input; there is one per code, so a new code does not
/// compile without one.
fn example(code: Code) -> &'static str {
    match code {
        Code::InputOutsideProject => "\
Example: a PR adds a link that leads out of the project
    ln -s ../../outside/credentials apps/leak.yaml
  then latgen check:
error[input-outside-project]: `apps/leak.yaml` is a symbolic link to `../../outside/credentials`, outside the project: latgen does not read it
Fix: commit the file itself, or link to a file inside the project (not under .git)",
        Code::InterruptedRender => "\
Example: a render killed while it wrote generated/, then latgen check:
warning[interrupted-render]: a render of generated was interrupted and left .generated.latgen-new beside it
Fix: run `latgen render` (it removes the folder) or delete the folder; do not commit it",
        Code::IoError => "\
Example: latgen render shop.yaml   (a file, not the folder of declarations)
error[io-error]: shop.yaml is not a folder
Fix: give the folder that holds the app declarations, e.g. `latgen render apps/`",
        Code::SymlinkLoop => "\
Example: a link under apps/ that points back up
    ln -s .. apps/team/loop
  then latgen render:
error[symlink-loop]: cannot read apps/team/loop: a symbolic link loops back to a folder above it
Fix: remove the link or make the folder readable",
        Code::NotUtf8 => "\
Example: apps/cafe.yaml saved as Latin-1
    namespace: café
error[not-utf8]: file is not UTF-8 text
Fix: save the file as UTF-8",
        Code::FileTooLarge => "\
Example: apps/dump.yaml, a 2 MB file saved under apps/ by mistake
error[file-too-large]: declaration is larger than 1024 KiB
Fix: an app declaration is a few lines; is this the right file?",
        Code::EmptyFile => "\
Example: apps/shop.yaml, all commented out
    # namespace: web
    # paths: [/shop]
error[empty-file]: file declares no app
Fix: add `namespace`, `service` and `paths` (or `host`), or delete the file",
        Code::MultipleDocuments => "\
Example: apps/shop.yaml
    namespace: web
    service: { name: shop, port: 8080 }
    paths: [/shop]
    ---
    namespace: web
error[multiple-documents]: file holds more than one YAML document
Fix: latgen reads one app per file: move each document to its own file",
        Code::NotAMapping => "\
Example: apps/shop.yaml, written as a list
    - namespace: web
error[not-a-mapping]: the file is not a mapping of fields
Fix: write the declaration as `field: value` lines (name, namespace, service, paths, host, group, peakRps, isolate, healthCheck)",
        Code::YamlSyntax => "\
Example: apps/shop.yaml
    paths: [/shop
error[yaml-syntax]: unclosed bracket '['
Fix: fix the YAML syntax at this place",
        Code::UnknownField => "\
Example: apps/shop.yaml
    path: [/shop]
error[unknown-field]: unknown field `path`, expected one of name, namespace, service, paths, host, group, peakRps, isolate, healthCheck
Fix: did you mean `paths`?",
        Code::MissingField => "\
Example: apps/shop.yaml, without `namespace`
    service: { name: shop, port: 8080 }
    paths: [/shop]
error[missing-field]: missing field `namespace`
Fix: add `namespace`",
        Code::DuplicateKey => "\
Example: apps/shop.yaml
    namespace: web
    service: { name: shop, port: 8080 }
    paths: [/shop]
    namespace: shop
error[duplicate-key]: `namespace` is given twice
Fix: keep one of them",
        Code::InvalidType => "\
Example: apps/shop.yaml
    paths: /shop
error[invalid-type]: expected a list here, e.g. `[/shop, /cart]`
Fix: see the README for the shape of each field",
        Code::InvalidValue => "\
Example: apps/shop.yaml
    isolate: maybe
error[invalid-value]: invalid boolean
Fix: see the README for the allowed values",
        Code::InvalidConfig => "\
Example: latgen.yaml
    quotas: { rulesPerService: 0 }
error[invalid-config]: quotas.rulesPerService is 0
Fix: set it to the account's Lattice rules-per-listener quota",
        Code::InvalidLock => "\
Example: latgen.lock
    version: 1
    apps:
      shop: 0
error[invalid-lock]: app `shop` is in group 0; groups start at 1
Fix: remove the line so that render places the app anew",
        Code::InvalidName => "\
Example: apps/cart.yaml
    name: Cart
error[invalid-name]: app name `Cart` may hold only lowercase letters, digits and `-`
Fix: app names are DNS-1123 labels, e.g. `shop-web`; set `name:` or rename the file",
        Code::ReservedName => "\
Example: apps/shop.yaml
    name: group-01
error[reserved-name]: app name `group-01` has the form of a shared group's name
Fix: choose another name; group routes are named by `lattice.groupPrefix` and a number",
        Code::InvalidNamespace => "\
Example: apps/shop.yaml
    namespace: Web
error[invalid-namespace]: namespace `Web` may hold only lowercase letters, digits and `-`
Fix: give the Kubernetes namespace of the app's Service",
        Code::InvalidService => "\
Example: apps/shop.yaml
    service: { name: shop_web, port: 8080 }
error[invalid-service]: service name `shop_web` may hold only lowercase letters, digits and `-`
Fix: give the name of the app's Kubernetes Service",
        Code::InvalidPort => "\
Example: apps/shop.yaml
    service: { name: shop, port: 0 }
error[invalid-port]: port 0 is out of range
Fix: give the Service port, 1 to 65535",
        Code::InvalidHost => "\
Example: apps/shop.yaml
    host: shop.example.com:8443
error[invalid-host]: host `shop.example.com:8443` carries a port; give the bare host name
Fix: give the lowercase DNS name the app answers on, e.g. shop.example.com",
        Code::InvalidPath => "\
Example: apps/api.yaml
    paths: [/api//v2]
error[invalid-path]: path `/api//v2` contains `//`, which Gateway API refuses
Fix: write the path in its plain, normalized form",
        Code::PathTooLong => "\
Example: apps/api.yaml, with a path of 131 characters
    paths: [/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa…]
error[path-too-long]: path is 131 characters; a Lattice rule takes at most 128
Fix: shorten the path",
        Code::TrailingSlash => "\
Example: apps/api.yaml
    paths: [/api-docs/]
error[trailing-slash]: path `/api-docs/` ends with `/`
Fix: write `/api-docs`: a prefix with a trailing slash does not match the bare path on Kong or Lattice",
        Code::KongRegexPath => "\
Example: apps/legacy.yaml
    paths: [/v1.2]
warning[kong-regex-path]: path `/v1.2` has `.`, which Kong's router reads as regex syntax
Fix: avoid regex metacharacters in prefixes; Kong does not escape them",
        Code::NoPaths => "\
Example: apps/shop.yaml
    paths: []
error[no-paths]: `paths` is empty
Fix: list at least one path, e.g. `paths: [/shop]`",
        Code::DuplicatePath => "\
Example: apps/shop.yaml
    paths: [/shop, /shop]
error[duplicate-path]: path `/shop` is listed twice
Fix: remove one of them",
        Code::InvalidGroup => "\
Example: apps/shop.yaml
    group: 0
error[invalid-group]: group 0 does not exist; groups start at 1
Fix: pin a group number of 1 or more, or remove `group`",
        Code::InvalidHealthCheck => "\
Example: apps/shop.yaml
    healthCheck: { intervalSeconds: 1 }
error[invalid-health-check]: interval 1s is out of range
Fix: Lattice health check intervals are 5 to 300 seconds",
        Code::DuplicateApp => "\
Example: apps/shop.yaml and apps/team-b/shop.yaml, neither with `name:`
error[duplicate-app]: app `shop` is declared twice
Fix: give each app a unique name (`name:` or the file name)",
        Code::DuplicateHost => "\
Example: apps/blog.yaml
    host: www.example.com
  and apps/www.yaml
    host: www.example.com
error[duplicate-host]: host `www.example.com` is also served by app `blog`
Fix: a host gets one dedicated Lattice service: merge the apps or use another host",
        Code::PathConflict => "\
Example: apps/shop.yaml
    paths: [/shop]
  and apps/shop-new.yaml
    paths: [/shop]
error[path-conflict]: path `/shop` is also claimed by app `shop`
Fix: each path belongs to one app; remove it from one of them",
        Code::InvalidLatticeName => "\
Example: apps/svc-status.yaml
    namespace: web
    host: status.example.com
error[invalid-lattice-name]: the Lattice service name of app `svc-status` would be `svc-status-web`, which starts with `svc-`, which Lattice reserves
Fix: rename the app (the controller uses 20 characters of it and 18 of the namespace)",
        Code::LatticeNameCollision => "\
Example: apps/storefront-marketing-eu.yaml and apps/storefront-marketing-us.yaml,
  each on its own host, both with
    namespace: mkt
error[lattice-name-collision]: apps `storefront-marketing-eu` and `storefront-marketing-us` get the same Lattice service name `storefront-marketing-mkt`
Fix: the controller keeps 20 characters of the route name: make them differ earlier",
        Code::AppTooBig => "\
Example: apps/sink.yaml
    paths: [/s0, /s1, /s2, /s3, /s4, /s5, /s6, /s7, /s8, /s9, /s10]
error[app-too-big]: app `sink` has 11 paths; a shared group holds at most 10 rules
Fix: merge paths under a common prefix, or give the app its own `host`",
        Code::PinnedGroupFull => "\
Example: latgen.yaml
    quotas: { rulesPerService: 2 }
  with apps/docs.yaml
    paths: [/docs, /guide]
    group: 1
  and apps/late.yaml
    paths: [/late]
    group: 1
error[pinned-group-full]: group-01 has 2/2 rules; app `late` needs 1
Fix: pin another group, or remove `group` so that latgen picks one with room",
        Code::PinConflict => "\
Example: latgen.lock
    apps:
      shop: 2
  with apps/shop.yaml
    group: 1
error[pin-conflict]: app `shop` is in group-02 (latgen.lock) but pinned to group-01
Fix: move it with `latgen move shop --group 1`: that keeps it reachable at every step",
        Code::GroupOverQuota => "\
Example: latgen.lock, with apps a and b of one path each
    apps:
      a: 1
      b: 1
  after the quota is lowered in latgen.yaml
    quotas: { rulesPerService: 1 }
error[group-over-quota]: group-01 has 1/1 rules; app `b` needs 1
Fix: change the app, or remove its line from latgen.lock so that render places it anew (that moves it: ship the Lattice side first)",
        Code::CrdRuleLimit => "\
Example: latgen.yaml
    quotas: { rulesPerService: 20 }
  with latgen.lock
    apps:
      a: 1
      b: 1
  where app a has 8 paths and app b has 9:
error[crd-rule-limit]: group-01 has 8/16 rules; app `b` needs 9
Fix: change the app, or remove its line from latgen.lock so that render places it anew (that moves it: ship the Lattice side first)",
        Code::PriorityLimit => "\
Example: latgen.yaml
    quotas: { rulesPerService: 101 }
error[priority-limit]: quotas.rulesPerService is 101, more than the 100 rule priorities a Lattice listener has
Fix: set it to the account's Lattice rules-per-listener quota (at most 100)",
        Code::TargetGroupQuota => "\
Example: latgen.yaml
    quotas: { targetGroupsPerService: 1 }
  with latgen.lock
    apps:
      a: 1
      b: 1
error[target-group-quota]: group-01 already routes to 1/1 target groups; app `b` adds one
Fix: change the app, or remove its line from latgen.lock so that render places it anew (that moves it: ship the Lattice side first)",
        Code::GroupAtQuota => "\
Example: group-01 holds 10 rules, its quota, and apps/app0.yaml changes
    paths: [/p0]
  to
    paths: [{ exact: /p0 }]
  then latgen render:
warning[group-at-quota]: group-01 would briefly hold 11 rules (quota 10) while the controller replaces /p0 with /p0 (Exact): the rules over the quota are dropped without an error
Fix: ship the removal and the addition as two changes, or keep a rule free with `quotas.reservedRules: 1`",
        Code::IsolationConflict => "\
Example: apps/flash-sale.yaml and apps/promo.yaml, both with
    isolate: true
    group: 1
error[isolation-conflict]: apps `promo` and `flash-sale` are both `isolate: true` and cannot share group-01
Fix: pin another group, or remove `group` so that latgen picks one with room",
        Code::RpsBudget => "\
Example: apps/flash-sale.yaml
    peakRps: 8000
    group: 1
  with apps/promo.yaml
    peakRps: 3000
    group: 1
error[rps-budget]: group-01 already carries 8000 rps of its 10000 rps budget; app `promo` adds 3000
Fix: pin another group, or remove `group` so that latgen picks one with room",
        Code::NestedPrefix => "\
Example: apps/shop.yaml
    paths: [/shop]
  with apps/cart.yaml
    paths: [/shop/cart]
  both pinned to group 1:
error[nested-prefix]: apps `shop` (/shop) and `cart` (/shop/cart) cannot share group-01: their prefixes nest, and Lattice would send `/shop/cartx` to `cart` although it belongs to `shop` (/shop)
Fix: pin another group, or remove `group` so that latgen picks one with room",
        Code::RuleShadowed => "\
Example: apps shop (paths: [/shop]) and shopping (paths: [/shopping]) in group-01,
  and generated/lattice/httproute-group-01.yaml edited so that /shop comes first;
  then latgen check:
error[rule-shadowed]: rule 2 (/shopping) never gets traffic: rule 1 (/shop) comes first and Lattice matches prefixes as strings
Fix: order rules longest path first (latgen's templates do); check custom templates and hand edits",
        Code::UnreachableRule => "\
Example: apps/docs.yaml
    paths: [/docs, /docs/v2]
  and generated/lattice/httproute-group-01.yaml edited so that /docs comes first;
  then latgen check:
warning[unreachable-rule]: rule 2 (/docs/v2) can never match: rule 1 (/docs) comes first and takes all of its requests
Fix: order rules longest path first, or drop the covered rule",
        Code::RouteUnresolved => "\
Example: generated/kong/httproute-shop.yaml edited to rewrite the Host to
  group-02.lattice.internal while its bridge points at group-01; then latgen check:
error[route-unresolved]: Kong route `shop` sends /shop nowhere: the bridge points at group-01.lattice.internal but the Host is rewritten to group-02.lattice.internal
Fix: the bridge's externalName, the URLRewrite hostname and a Lattice route's first hostname must agree, and that route must have a rule for the path",
        Code::RouteMismatch => "\
Example: generated/lattice/httproute-group-01.yaml edited so that the rule for
  /shopping sends to the Service of app shop; then latgen check:
error[route-mismatch]: Kong route `shopping` sends /shopping to web/shop:8080 (rule 1 of lattice-groups/group-01), not to its app's Service web/shopping:8080
Fix: run `latgen render`; if it persists, check custom templates",
        Code::StaleOutput => "\
Example: generated/kong/service-shop-lattice.yaml, with a label added by hand
    edited: by-hand
  then latgen check:
error[stale-output]: service-shop-lattice.yaml differs from what `latgen render` writes
Fix: run `latgen render` and commit the result",
        Code::LockStale => "\
Example: latgen.lock still lists an app whose file is gone
    ghost: 1
  then latgen check:
error[lock-stale]: latgen.lock is not what `latgen render` writes
Fix: run `latgen render` and commit latgen.lock with apps/",
        Code::UnsafeRollout => "\
Example: apps/checkout.yaml added
    paths: [/checkout]
  and both sides rendered in one change; then latgen check --base origin/main:
error[unsafe-rollout]: if the Kong side goes live before the Lattice side, latgen.probe/checkout goes to 404 from Lattice (lattice-groups/group-01 has no matching rule) (before: 404 from Kong (no route); after: web/checkout:8080 (rule 1 of lattice-groups/group-01))
Fix: ship the Lattice side first: `latgen render --only lattice` in one PR, then `latgen render` in the next",
        Code::PriorityChurn => "\
Example: group-01 holds apps with paths /p1 to /p6, and apps/landing.yaml adds
    paths: [/landing]
  which comes first (longest path first); then latgen render:
warning[priority-churn]: 6 rules of group-01 change position, so their priorities change: more than the 5 one BatchUpdateRule call takes
Fix: watch the controller's events for this route when it syncs, or add the new paths in smaller changes",
        Code::TemplateError => "\
Example: my-templates/kong/route.yaml.j2, a copy of the built-in template with
    {{ target | yaml }}
  misspelled `{{ tagret | yaml }}`; then latgen render --templates my-templates:
error[template-error]: template kong/route.yaml.j2: `tagret` is undefined
Fix: fix the template; `latgen render` without --templates uses the built-in ones",
        Code::RenderedInvalid => "\
Example: my-templates/kong/route.yaml.j2, a copy of the built-in template with
    backendRefs:
  misspelled `backendRef:`; then latgen render --templates my-templates:
error[rendered-invalid]: template kong/route.yaml.j2 rendered an invalid HTTPRoute `shop`: it has fields its type does not define: spec.rules.?.0.backendRef
Fix: fix the template; every rendered object must parse back as the object latgen meant",
        Code::InvalidOutput => "\
Example: latgen render apps -o apps/generated
error[invalid-output]: output apps/generated overlaps the apps folder apps
Fix: write the manifests to a folder beside apps/, e.g. `-o generated/`",
        Code::GitError => "\
Example: latgen check --base origin/main, outside a Git repository
error[git-error]: git rev-parse --show-toplevel failed: fatal: not a git repository (or any of the parent directories): .git
Fix: run inside the Git repository, with the base revision fetched (e.g. `git fetch origin main`)",
        Code::MoveRefused => "\
Example: latgen move shopp --group 2   (the app is named shop)
error[move-refused]: there is no app `shopp`
Fix: did you mean `shop`?",
    }
}
