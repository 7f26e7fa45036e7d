//! What an app had with a Kong route of its own: plugins, upstream timeouts and retries,
//! and more hostnames. `kong:` in an app declaration, `kong.routeDefaults` in latgen.yaml
//! for every app. The Kong side stays one route and one bridge Service per app whatever
//! the packing does, so these never touch the Lattice groups.
//!
//! Where each lands (KIC, Kong/kubernetes-ingress-controller): plugins in the route's
//! `konghq.com/plugins` annotation, which KIC resolves to a KongPlugin in the route's
//! namespace and else a KongClusterPlugin of that name (`internal/dataplane/kongstate/
//! plugin.go`); timeouts and retries in the bridge Service's `konghq.com/connect-timeout`,
//! `read-timeout`, `write-timeout` and `retries` annotations, which KIC sets on the Kong
//! Service it makes of the bridge (`kongstate/service.go`). KIC also reads Gateway API
//! `timeouts.backendRequest` on a rule, but as one value for all three timeouts; the
//! annotations keep them apart.

use std::fmt;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

/// Kong's range for a Service timeout, in milliseconds (`nonzero_timeout` in Kong's
/// `kong/db/schema/entities/services.lua`).
pub(crate) const TIMEOUT_MS: std::ops::RangeInclusive<u64> = 1..=2_147_483_646;
/// Kong's range for a Service's `retries`.
pub(crate) const RETRIES: std::ops::RangeInclusive<u64> = 0..=32_767;

/// A Kong timeout: a whole number of milliseconds (Kong's unit), or a duration such as
/// `250ms`, `30s` or `2m`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub(crate) struct Millis(pub u64);

impl<'de> Deserialize<'de> for Millis {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct MillisVisitor;

        impl Visitor<'_> for MillisVisitor {
            type Value = Millis;

            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str(
                    "milliseconds as a whole number, or a duration such as 250ms, 30s or 2m",
                )
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Millis, E> {
                Ok(Millis(v))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Millis, E> {
                u64::try_from(v)
                    .map(Millis)
                    .map_err(|_| E::invalid_value(de::Unexpected::Signed(v), &self))
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Millis, E> {
                // "invalid value: …": reported as a value out of its range, with the forms
                // a timeout takes.
                parse_duration(v)
                    .map(Millis)
                    .ok_or_else(|| E::invalid_value(de::Unexpected::Str(v), &self))
            }
        }

        deserializer.deserialize_any(MillisVisitor)
    }
}

/// `250ms`, `30s`, `2m` in milliseconds; None for anything else (or an overflow).
fn parse_duration(text: &str) -> Option<u64> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    let (number, unit) = text.split_at(digits);
    let number: u64 = number.parse().ok()?;
    let scale = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        _ => return None,
    };
    number.checked_mul(scale)
}

impl schemars::JsonSchema for Millis {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "KongTimeout".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "Milliseconds as a whole number (Kong's unit, 1 to 2147483646), or a duration: a number and `ms`, `s` or `m`.",
            "oneOf": [
                { "type": "integer", "minimum": 1, "maximum": 2_147_483_646_u64 },
                { "type": "string", "pattern": "^0*[1-9][0-9]*(ms|s|m)$" }
            ]
        })
    }
}

/// Upstream timeouts of the app's Kong Service (its bridge); a field left out keeps Kong's
/// default, 60 s.
#[derive(
    Debug, Clone, Copy, Default, Deserialize, Serialize, PartialEq, Eq, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields)]
pub(crate) struct Timeouts {
    /// Time to open a connection to Lattice.
    pub connect: Option<Millis>,
    /// Time between two reads of the response.
    pub read: Option<Millis>,
    /// Time between two writes of the request.
    pub write: Option<Millis>,
}

impl Timeouts {
    /// Each field the app sets, else the project's.
    fn or(self, defaults: Timeouts) -> Timeouts {
        Timeouts {
            connect: self.connect.or(defaults.connect),
            read: self.read.or(defaults.read),
            write: self.write.or(defaults.write),
        }
    }

    /// The set timeouts by their KIC annotation's name.
    pub fn named(&self) -> impl Iterator<Item = (&'static str, Millis)> {
        [
            ("connect-timeout", self.connect),
            ("read-timeout", self.read),
            ("write-timeout", self.write),
        ]
        .into_iter()
        .filter_map(|(name, ms)| Some((name, ms?)))
    }
}

/// `kong.routeDefaults` in latgen.yaml: what every app's Kong route and bridge get unless
/// its declaration says otherwise.
#[derive(Debug, Clone, Default, Deserialize, PartialEq, Eq, schemars::JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub(crate) struct RouteDefaults {
    /// Plugins on every app's Kong route, before the app's own: KongPlugin names in the
    /// Kong routes' namespace, or KongClusterPlugin names.
    pub plugins: Vec<String>,
    /// Upstream timeouts of every app's Kong Service.
    pub timeouts: Timeouts,
    /// How often Kong retries a failed request to Lattice, 0 to 32767 (Kong's default: 5).
    #[schemars(range(max = 32767))]
    pub retries: Option<u64>,
}

/// `kong:` in an app declaration.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
pub(crate) struct KongDecl {
    /// Plugins on the app's Kong route, after `kong.routeDefaults.plugins`: KongPlugin
    /// names in the Kong routes' namespace (`kong.namespace`), or KongClusterPlugin names.
    #[schemars(with = "Option<Vec<String>>")]
    pub plugins: Option<Vec<Spanned<String>>>,
    /// Upstream timeouts of the app's Kong Service; each one set here replaces the
    /// project's.
    #[schemars(with = "Option<Timeouts>")]
    pub timeouts: Option<Spanned<Timeouts>>,
    /// How often Kong retries a failed request to Lattice, 0 to 32767; replaces the
    /// project's. 0 for an app whose requests must not be sent twice.
    #[schemars(with = "Option<u64>", range(max = 32767))]
    pub retries: Option<Spanned<u64>>,
    /// More public hostnames the app's Kong route answers on, besides `kong.hostnames` (or
    /// the app's own `host`).
    #[schemars(with = "Option<Vec<String>>")]
    pub hosts: Option<Vec<Spanned<String>>>,
}

/// An app's Kong settings, validated, the project's defaults applied.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct KongSettings {
    /// Plugin names, in order, each once.
    pub plugins: Vec<String>,
    pub timeouts: Timeouts,
    pub retries: Option<u64>,
    /// Hostnames the route answers on besides the project's or the app's own host.
    pub hosts: Vec<String>,
}

impl KongSettings {
    /// The settings of an app: the project's defaults, then what its declaration says.
    pub fn of(defaults: &RouteDefaults, decl: Option<&KongDecl>) -> KongSettings {
        let mut plugins = defaults.plugins.clone();
        let own = decl.and_then(|d| d.plugins.as_ref());
        for p in own.into_iter().flatten() {
            if !plugins.contains(&p.value) {
                plugins.push(p.value.clone());
            }
        }
        let timeouts = decl
            .and_then(|d| d.timeouts.as_ref())
            .map_or(defaults.timeouts, |t| t.value.or(defaults.timeouts));
        let retries = decl
            .and_then(|d| d.retries.as_ref())
            .map(|r| r.value)
            .or(defaults.retries);
        let hosts = decl.and_then(|d| d.hosts.as_ref());
        KongSettings {
            plugins,
            timeouts,
            retries,
            hosts: hosts
                .into_iter()
                .flatten()
                .map(|h| h.value.clone())
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_are_read_in_kongs_milliseconds() {
        assert_eq!(parse_duration("250ms"), Some(250));
        assert_eq!(parse_duration("30s"), Some(30_000));
        assert_eq!(parse_duration("2m"), Some(120_000));
        for bad in [
            "",
            "s",
            "30",
            "1.5s",
            "30 s",
            "-1s",
            "1h",
            "99999999999999999999m",
        ] {
            assert_eq!(parse_duration(bad), None, "{bad}");
        }
    }

    #[test]
    fn an_apps_timeouts_replace_the_projects_field_by_field() {
        let defaults = Timeouts {
            connect: Some(Millis(5_000)),
            read: Some(Millis(60_000)),
            write: None,
        };
        let own = Timeouts {
            read: Some(Millis(120_000)),
            ..Timeouts::default()
        };
        let merged = own.or(defaults);
        assert_eq!(merged.connect, Some(Millis(5_000)));
        assert_eq!(merged.read, Some(Millis(120_000)));
        assert_eq!(merged.write, None);
        let named: Vec<_> = merged.named().map(|(n, _)| n).collect();
        assert_eq!(named, ["connect-timeout", "read-timeout"]);
    }
}
