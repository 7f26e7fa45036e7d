//! Every finding code latgen can report: one [`Code`] variant each, with its kebab-case
//! name, default severity and a one-line summary. The book's page of codes, the SARIF rules
//! and `latgen explain` are all made from this table. Codes are stable: they are part of the
//! interface (SARIF rule ids, JSON, suppressions), so a name is never changed once released.

/// The project's public repository. A placeholder until the project is published: this is
/// the one place the public URL is set, and every link to the documentation (SARIF rules,
/// `latgen explain`) is made from it.
pub(crate) const REPO_URL: &str = "https://github.com/latgen/latgen";

/// How bad a finding is: an error fails the run, a warning does not (unless denied).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Severity {
    Error,
    Warning,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
        }
    }
}

/// Builds the enum and its table from one list, so a code cannot be declared without a
/// name, a severity and a summary.
macro_rules! codes {
    ($($variant:ident = $id:literal, $severity:ident, $summary:literal;)*) => {
        /// A finding code.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $($variant,)*
        }

        impl Code {
            /// Every code, in the order of the table.
            pub const ALL: &'static [Code] = &[$(Code::$variant,)*];

            /// The stable kebab-case name (`nested-prefix`).
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Code::$variant => $id,)*
                }
            }

            /// The severity a finding of this code has unless a check says otherwise.
            pub const fn severity(self) -> Severity {
                match self {
                    $(Code::$variant => Severity::$severity,)*
                }
            }

            /// One line saying what the code means.
            pub const fn summary(self) -> &'static str {
                match self {
                    $(Code::$variant => $summary,)*
                }
            }
        }
    };
}

codes! {
    IoError = "io-error", Error, "a file or folder cannot be read or written";
    SymlinkLoop = "symlink-loop", Error, "a symbolic link under apps/ loops back to a folder above it";
    InputOutsideProject = "input-outside-project", Error, "an input (declaration, settings, lock, template) resolves outside the project folder or into .git: latgen does not read it";
    NotUtf8 = "not-utf8", Error, "a file is not UTF-8 text";
    FileTooLarge = "file-too-large", Error, "an input is larger than latgen reads (a declaration or latgen.yaml 1 MiB, latgen.lock 16 MiB)";
    EmptyFile = "empty-file", Error, "a declaration file declares nothing";
    MultipleDocuments = "multiple-documents", Error, "a declaration file holds more than one YAML document";
    NotAMapping = "not-a-mapping", Error, "a declaration is not a mapping of fields";
    YamlSyntax = "yaml-syntax", Error, "the YAML cannot be parsed";
    UnknownField = "unknown-field", Error, "a field latgen does not know (often a typo)";
    MissingField = "missing-field", Error, "a required field is missing";
    DuplicateKey = "duplicate-key", Error, "a field is given twice";
    InvalidType = "invalid-type", Error, "a field has the wrong shape";
    InvalidValue = "invalid-value", Error, "a field's value is out of its range";
    InvalidConfig = "invalid-config", Error, "a setting in latgen.yaml is not usable";
    InvalidLock = "invalid-lock", Error, "latgen.lock cannot be used";
    InvalidObserved = "invalid-observed", Error, "the file `plan --observed` reads is not a Prometheus query result with an `app` label per series";
    InvalidName = "invalid-name", Error, "an app name is not a DNS-1123 label of at most 55 characters that starts with a letter";
    ReservedName = "reserved-name", Error, "an app name has the form of a shared group's name";
    InvalidNamespace = "invalid-namespace", Error, "a namespace is not a DNS-1123 label";
    InvalidService = "invalid-service", Error, "a Service name is not a DNS-1123 label";
    InvalidPort = "invalid-port", Error, "a port is outside 1..65535";
    InvalidHost = "invalid-host", Error, "a host is not a lowercase DNS name (no IP, port or wildcard)";
    InvalidPath = "invalid-path", Error, "a path Gateway API or Lattice refuses";
    PathTooLong = "path-too-long", Error, "a path longer than the 128 characters a Lattice rule takes";
    TrailingSlash = "trailing-slash", Error, "a path ends with `/`, so Kong and Lattice miss the bare path";
    KongRegexPath = "kong-regex-path", Warning, "a prefix holds characters Kong's router reads as regex";
    NoPaths = "no-paths", Error, "`paths` is empty";
    DuplicatePath = "duplicate-path", Error, "an app lists a path twice";
    InvalidGroup = "invalid-group", Error, "a `group` pin that cannot be honoured";
    InvalidHealthCheck = "invalid-health-check", Error, "a health check outside what Lattice takes";
    DuplicateApp = "duplicate-app", Error, "two declarations have the same app name";
    DuplicateHost = "duplicate-host", Error, "two apps are served on the same host";
    PathConflict = "path-conflict", Error, "two apps claim the same match on the same host";
    InvalidLatticeName = "invalid-lattice-name", Error, "the controller's Lattice service name for a route is not valid";
    LatticeNameCollision = "lattice-name-collision", Error, "two routes get the same truncated Lattice service name";
    ServiceNameChanged = "service-name-changed", Error, "a route's Lattice service name differs from the one it was created with: the controller ignores the change";
    ServiceNameCollision = "service-name-collision", Warning, "two routes, of this project or of another lock given with --also-lock, have one Lattice service name";
    AppTooBig = "app-too-big", Error, "an app has more paths than a group holds rules";
    PinnedGroupFull = "pinned-group-full", Error, "a pinned group has no room for the app";
    PinConflict = "pin-conflict", Error, "an app is pinned to a group other than the one it is in: move it instead";
    OutgrownGroup = "outgrown-group", Warning, "a locked app no longer fits its group (it grew, or the group's limits shrank): the plan moves it to a group with room";
    GroupOverQuota = "group-over-quota", Error, "a route holds more rules than the Lattice rule quota";
    CrdRuleLimit = "crd-rule-limit", Error, "a route holds more than the HTTPRoute CRD's 16 rules";
    PriorityLimit = "priority-limit", Error, "more rules than Lattice's 100 rule priorities";
    TargetGroupQuota = "target-group-quota", Error, "a route reaches more backends than the target-group quota";
    GroupAtQuota = "group-at-quota", Warning, "a group is at its rule quota: a path edit in it would fail";
    IsolationConflict = "isolation-conflict", Error, "two `isolate` apps in one group";
    RpsBudget = "rps-budget", Error, "a group's declared peak rps is over the per-service budget";
    AppOverBudget = "app-over-budget", Warning, "an app declares more peak rps than a whole Lattice service's budget: no group carries it, and no move helps";
    NestedPrefix = "nested-prefix", Error, "two apps' prefixes nest in one Lattice route: Lattice misroutes the outer app's traffic";
    OrderDependentGroup = "order-dependent-group", Error, "one request can match two apps' rules in one Lattice route, so it routes right only in an order of rules the controller does not keep";
    RuleShadowed = "rule-shadowed", Error, "an earlier Lattice rule takes a later rule's traffic (string-prefix, first match)";
    UnreachableRule = "unreachable-rule", Warning, "a Lattice rule can never match: an earlier rule to the same backend covers it, or no Kong route sets the header it matches";
    KongPluginConflict = "kong-plugin-conflict", Warning, "a request-transformer plugin on a Kong route latgen writes: it and the one KIC makes of the route's Host rewrite and dispatch header replace each other";
    KongPluginMissing = "kong-plugin-missing", Error, "a Kong route names a plugin no file in kong.pluginFiles defines: KIC serves the route without it";
    CanaryNameClash = "canary-name-clash", Error, "a canary app shares a Lattice route with another app that has a Service of the same name: the Rollout would move both apps' weights";
    CanaryReadinessGate = "canary-readiness-gate", Warning, "a canary app does not say how its new canary pods get the Lattice readiness gate";
    CanaryInMove = "canary-in-move", Warning, "a canary app is moving between groups: its Rollout must list both routes until the move finishes";
    PreviewUnknownApp = "preview-unknown-app", Error, "a preview under previews/ is of an app no declaration declares";
    PreviewExpired = "preview-expired", Warning, "a preview is past the day its file says it ends";
    ImportRefused = "import-refused", Error, "`latgen import` met an existing object it cannot express as a declaration (nothing is written without --partial)";
    RouteUnresolved = "route-unresolved", Error, "a Kong route does not reach a Lattice rule through its bridge and Host";
    RouteMismatch = "route-mismatch", Error, "a Kong route's paths reach a Service other than its app's";
    ForeignFile = "foreign-file", Warning, "a manifest in the output folder that latgen did not write: Argo CD applies it unchecked, or not at all";
    StaleOutput = "stale-output", Error, "generated/ differs from what `latgen render` writes";
    LockStale = "lock-stale", Error, "latgen.lock differs from what `latgen render` writes";
    UnsafeRollout = "unsafe-rollout", Error, "one side of the change could go live first and break routing";
    TemplateError = "template-error", Error, "a template cannot be compiled or rendered";
    RenderedInvalid = "rendered-invalid", Error, "a template rendered an object that is not what latgen meant";
    NotStoredForm = "not-stored-form", Warning, "a template leaves out a field the API server sets, so Argo CD never sees the object in sync";
    InvalidOutput = "invalid-output", Error, "the output folder is a file or overlaps apps/";
    InterruptedRender = "interrupted-render", Warning, "a render or write was interrupted and left its staging folder or a pending file beside the output, the lock or the deploy kit";
    GitError = "git-error", Error, "the base revision cannot be read";
    MoveRefused = "move-refused", Error, "a move that would break a quota or names no app or group";
    ProtocolMismatch = "protocol-mismatch", Error, "Kong speaks a protocol or port the Lattice listener does not take";
    CrdVersion = "crd-version", Error, "the output uses an API version the configured Gateway API CRDs do not serve";
    DnsUnacknowledged = "dns-unacknowledged", Warning, "apps have hosts of their own and latgen.yaml does not say how those resolve inside the gateway's VPC";
    PlaceholderSetting = "placeholder-setting", Error, "a setting (deploy, lattice.serviceNamePrefix) still holds the placeholder `latgen init` wrote";
    InvalidCaller = "invalid-caller", Error, "a caller (`callers:` of an app, `auth.kong` or `auth.callers`) names no IAM principal, organization, VPC or method an auth policy takes";
    AuthPolicyTooLarge = "auth-policy-too-large", Error, "a Lattice service's auth policy is over the 10,000-byte limit (not adjustable)";
    AuthMismatch = "auth-mismatch", Error, "an auth policy lets in a caller the declarations do not, or keeps out one they do";
    AuthOpenWindow = "auth-open-window", Warning, "a new Lattice service is open to every caller until the controller attaches its auth policy, with no service-network policy behind it";
    StaleDeploy = "stale-deploy", Error, "deploy/ differs from what `latgen deploy` writes";
    UnknownEnvironment = "unknown-environment", Error, "--env names no environment of the project, is missing in a project with environments, or is given in one without";
    EnvServiceNameClash = "env-service-name-clash", Error, "two environments in one account and Region would create a Lattice service of the same name: their controllers overwrite each other's";
    EnvObjectClash = "env-object-clash", Error, "two environments write the same object into one cluster and namespace";
    EnvNetworkClash = "env-network-clash", Error, "two environments' service networks are associated with one VPC, which takes one service network";
    EnvArgoCdClash = "env-argocd-clash", Warning, "two environments' deploy kits name their Argo CD AppProject and Applications alike in one Argo CD namespace: applied to one Argo CD, the second overwrites the first";
    CanaryRouteChange = "canary-route-change", Warning, "a step changes a Lattice route that holds canary apps: its sync puts a running canary's traffic back on the stable Service";
    DirectCallersMoved = "direct-callers-moved", Warning, "a step takes an app's rules off the Lattice service that its callers of its own call straight (not through Kong): they must call its new address";
    CommittedTransactionFile = "committed-transaction-file", Error, "a staging folder, journal or pending file of latgen's is committed to the repository, or is what no run of latgen leaves (a link): latgen removes it unread and acts on nothing in it";
}

impl Code {
    /// The code with this kebab-case name.
    pub fn from_name(name: &str) -> Option<Code> {
        Code::ALL.iter().copied().find(|c| c.as_str() == name)
    }

    /// Where this code is documented: its own section of the book's page of codes,
    /// `docs/src/reference/codes.md` (made by `commands::explain::markdown_page`).
    pub fn help_url(self) -> String {
        format!("{REPO_URL}/blob/main/docs/src/reference/codes.md#{self}")
    }

    /// Codes that mean "latgen could not do its job" (exit 2) rather than "the inputs have
    /// a problem" (exit 1).
    pub const fn is_operational(self) -> bool {
        matches!(
            self,
            Code::IoError | Code::SymlinkLoop | Code::InvalidOutput | Code::GitError
        )
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Lets a code be compared with its name, as tests and scripts spell it.
impl PartialEq<&str> for Code {
    fn eq(&self, name: &&str) -> bool {
        self.as_str() == *name
    }
}

/// The code of a path that the platform refuses, by the rule that refuses it.
impl From<latgen_sim::platform::PathFault> for Code {
    fn from(fault: latgen_sim::platform::PathFault) -> Code {
        use latgen_sim::platform::PathFault;
        match fault {
            PathFault::Invalid => Code::InvalidPath,
            PathFault::TooLong => Code::PathTooLong,
            PathFault::TrailingSlash => Code::TrailingSlash,
        }
    }
}

impl serde::Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_kebab_case() {
        let mut seen = std::collections::BTreeSet::new();
        for c in Code::ALL {
            assert!(seen.insert(c.as_str()), "{c} twice");
            assert!(
                c.as_str()
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-'),
                "{c}"
            );
            assert_eq!(Code::from_name(c.as_str()), Some(*c));
        }
    }
}
