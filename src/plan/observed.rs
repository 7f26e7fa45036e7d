//! `latgen plan --observed FILE`: the apps' peak request rates as measured (a Prometheus
//! query's result, in the HTTP API's JSON), against what the plan was made from: groups
//! whose apps together run over the throughput budget, apps that run above their declared
//! `peakRps`, and what `latgen render` would move once the declarations say what the apps
//! do.
//!
//! The rates come from Kong, where each app keeps its own route through every move: KIC
//! names the Kong route `httproute.<namespace>.<name>.<rule>.<match>`, and Kong's
//! Prometheus plugin labels `kong_http_requests_total` with it. The query the book gives
//! (docs/src/guide/moves.md) turns that into one series per app, labelled `app`.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::diag::codes::{Code, Severity};
use crate::diag::{Diagnostic, Diagnostics, Span};
use crate::input::app::{App, AppId};
use crate::plan::prepared::Prepared;
use crate::plan::rebalance::monthly_cost::grouped;

/// An observed file larger than this is refused: 100,000 apps' series fit in about 10 MiB.
pub(crate) const MAX_OBSERVED_BYTES: u64 = 64 * 1024 * 1024;

/// The highest rate a series may give, requests per second: what a declaration may say
/// ([`crate::input::app::MAX_PEAK_RPS`]).
pub(crate) const MAX_RATE: f64 = crate::input::app::MAX_PEAK_RPS as f64;

/// A Prometheus HTTP API response (`/api/v1/query` or `/api/v1/query_range`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    status: String,
    #[serde(default)]
    error: Option<String>,
    data: Option<Data>,
}

/// The result is read series by series, straight from the text, each folded into the
/// peaks as it is read: a file of a million series never becomes a tree of JSON values,
/// nor a list of series.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Data {
    result_type: String,
    result: Folded,
}

/// The peaks of the series read so far, and the first thing wrong with one (the rest of
/// the result is then read but not used).
#[derive(Default)]
struct Folded {
    peaks: BTreeMap<String, f64>,
    problem: Option<String>,
}

impl Folded {
    /// Adds one element of the result to the peaks.
    fn add(&mut self, item: Item) -> Result<(), String> {
        let Item::Series { metric, values } = item else {
            return Err("the result holds something other than a series".into());
        };
        let Some(app) = metric.get("app") else {
            return Err(format!(
                "a series has no `app` label ({}): the query must sum by app",
                labels(&metric)
            ));
        };
        for (_, value) in values {
            let rate: f64 =
                (value.parse()).map_err(|_| format!("`{value}` (app `{app}`) is not a number"))?;
            if rate.is_finite() && rate > MAX_RATE {
                return Err(format!(
                    "`{value}` (app `{app}`) is over {} requests per second, more than any app serves: is the query a `rate()`, summed by app?",
                    grouped(MAX_RATE as u64)
                ));
            }
            // NaN (no traffic in the window) and negative rates say nothing of a peak.
            if rate.is_finite() && rate >= 0.0 {
                let peak = self.peaks.entry(app.clone()).or_insert(0.0_f64);
                *peak = peak.max(rate);
            }
        }
        Ok(())
    }
}

impl<'de> Deserialize<'de> for Folded {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Folded, D::Error> {
        struct FoldVisitor;
        impl<'de> serde::de::Visitor<'de> for FoldVisitor {
            type Value = Folded;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a list of series")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Folded, A::Error> {
                let mut folded = Folded::default();
                while let Some(item) = seq.next_element::<Item>()? {
                    if folded.problem.is_none() {
                        folded.problem = folded.add(item).err();
                    }
                }
                Ok(folded)
            }
        }
        d.deserialize_seq(FoldVisitor)
    }
}

/// One element of the result: a series (a JSON object) of an instant query (`vector`: one
/// sample, `value`) or a range query (`matrix`: `values`, whose highest is the peak), or
/// anything else (a scalar or string result's elements), which is not a series.
enum Item {
    Series {
        metric: BTreeMap<String, String>,
        /// `[unix time, "value"]`: Prometheus writes sample values as strings.
        values: Vec<(f64, String)>,
    },
    Other,
}

impl<'de> Deserialize<'de> for Item {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Item, D::Error> {
        #[derive(Deserialize)]
        struct Series {
            metric: BTreeMap<String, String>,
            value: Option<(f64, String)>,
            #[serde(default)]
            values: Vec<(f64, String)>,
        }
        struct ItemVisitor;
        impl<'de> serde::de::Visitor<'de> for ItemVisitor {
            type Value = Item;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a series")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, map: A) -> Result<Item, A::Error> {
                let s = Series::deserialize(serde::de::value::MapAccessDeserializer::new(map))?;
                let mut values = s.values;
                values.extend(s.value);
                Ok(Item::Series {
                    metric: s.metric,
                    values,
                })
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Item, A::Error> {
                while seq.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Item::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Item, E> {
                Ok(Item::Other)
            }
            fn visit_unit<E>(self) -> Result<Item, E> {
                Ok(Item::Other)
            }
        }
        d.deserialize_any(ItemVisitor)
    }
}

/// Each app's observed peak, requests per second, by the series' `app` label; the
/// response's own error when it is one.
pub(crate) fn parse(file: &Path, text: &str) -> Result<BTreeMap<String, f64>, Diagnostic> {
    let bad = |what: String| {
        Diagnostic::error(Code::InvalidObserved, what)
            .at(Span::file(file))
            .help("save the result of the query in the book (Moves, status, plan and cost) as Prometheus returns it: `curl -s \"$PROM/api/v1/query\" --data-urlencode query=… > observed.json`")
    };
    let response: Response = serde_json::from_str(text)
        .map_err(|e| bad(format!("not a Prometheus API response: {e}")))?;
    if response.status != "success" {
        let error = response.error.unwrap_or_default();
        return Err(bad(format!("the query failed in Prometheus: {error}")));
    }
    let Some(data) = response.data else {
        return Err(bad("the response has no `data`".into()));
    };
    if !matches!(data.result_type.as_str(), "vector" | "matrix") {
        return Err(bad(format!(
            "the result is a {}, not one series per app (a vector or a matrix)",
            data.result_type
        )));
    }
    match data.result.problem {
        Some(problem) => Err(bad(problem)),
        None => Ok(data.result.peaks),
    }
}

fn labels(metric: &BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = metric.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!("{{{}}}", pairs.join(", "))
}

/// How many names of series for undeclared apps the report shows: a query that is not
/// summed by app (a series per route or pod) would make a line of millions.
pub(crate) const UNKNOWN_SHOWN: usize = 10;

/// An app that runs above its declaration.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Stale {
    pub app: AppId,
    pub declared: Option<u64>,
    pub observed: f64,
}

/// A shared group and its apps' observed peaks against the budget.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct GroupLoad {
    pub number: u32,
    /// The apps' observed peaks summed (an app with no series counts its declared peak).
    pub load: f64,
    pub budget: u64,
    /// The group's apps, hottest first, with what each counts.
    pub apps: Vec<(AppId, f64)>,
}

impl GroupLoad {
    pub fn over(&self) -> bool {
        self.load > self.budget as f64
    }
}

/// What the observed peaks say of the plan.
#[derive(Debug, Default)]
pub(crate) struct Observation {
    pub groups: Vec<GroupLoad>,
    pub stale: Vec<Stale>,
    /// The moves `render` makes once every stale declaration says what its app does: app,
    /// from, to.
    pub moves: Vec<(AppId, u32, u32)>,
    /// Series for apps the project does not declare: the first [`UNKNOWN_SHOWN`] names, in
    /// name order, and how many there are.
    pub unknown: Vec<String>,
    pub unknown_count: usize,
    /// What the plan with the observed peaks reports (an app no group can take alone).
    pub problems: Diagnostics,
}

/// The observed peaks against `prepared`'s plan, and the plan with each stale app's
/// `peakRps` raised to what it does (rounded up), from the same lock.
pub(crate) fn observe(prepared: &Prepared, peaks: &BTreeMap<String, f64>) -> Observation {
    let apps = &prepared.apps;
    let by_name: BTreeMap<&str, AppId> = AppId::enumerate(apps)
        .map(|(id, a)| (a.name.as_str(), id))
        .collect();
    let mut unknown_names = (peaks.keys()).filter(|name| !by_name.contains_key(name.as_str()));
    let unknown = (unknown_names.by_ref().take(UNKNOWN_SHOWN))
        .cloned()
        .collect::<Vec<_>>();
    let unknown_count = unknown.len() + unknown_names.count();
    let observed = |id: AppId| peaks.get(&apps[id].name).copied();
    let stale: Vec<Stale> = AppId::enumerate(apps)
        .filter_map(|(id, app)| {
            let seen = observed(id)?;
            let above = app.peak_rps.is_none_or(|d| seen > d as f64);
            (above && seen > 0.0).then_some(Stale {
                app: id,
                declared: app.peak_rps,
                observed: seen,
            })
        })
        .collect();
    let budget = prepared.config.throughput.rps_per_service;
    let groups = (prepared.plan.groups.iter())
        .map(|g| {
            let mut counted: Vec<(AppId, f64)> = (g.members())
                .map(|id| {
                    let declared = apps[id].peak_rps.unwrap_or(0) as f64;
                    (id, observed(id).unwrap_or(declared))
                })
                .collect();
            counted.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
            GroupLoad {
                number: g.number,
                load: counted.iter().map(|(_, r)| r).sum(),
                budget,
                apps: counted,
            }
        })
        .collect();
    let (moves, mut problems) = replan(prepared, &stale);
    for s in stale.iter().filter(|s| s.observed > budget as f64) {
        let app = &apps[s.app];
        problems.push(
            Diagnostic::warning(
                Code::AppOverBudget,
                format!(
                    "app `{}` ran at {} rps, more than a Lattice service's whole budget of {} rps (`throughput.rpsPerService`): no group carries it, so `latgen render` keeps it where it is",
                    app.name,
                    grouped(s.observed.ceil() as u64),
                    grouped(budget),
                ),
            )
            .at(Span::new(&app.file, app.name_pos.line, app.name_pos.column))
            .help(crate::plan::over_budget::WHAT_HELPS),
        );
    }
    Observation {
        groups,
        stale,
        moves,
        unknown,
        unknown_count,
        problems,
    }
}

/// The plan from the same lock with each stale app's `peakRps` raised to what it does:
/// the groups change where an app no longer fits its own (`place_outgrown`).
fn replan(prepared: &Prepared, stale: &[Stale]) -> (Vec<(AppId, u32, u32)>, Diagnostics) {
    let mut apps: Vec<App> = prepared.apps.clone();
    for s in stale {
        apps[s.app.index()].peak_rps = Some(s.observed.ceil() as u64);
    }
    let lock = prepared.plan.lock.positioned();
    let mut diags = Diagnostics::new();
    let config = &prepared.config;
    let after = crate::plan::plan(&apps, &lock, Path::new("latgen.lock"), config, &mut diags);
    let moves = AppId::enumerate(&apps)
        .filter_map(|(id, _)| {
            let from = prepared.plan.serving_group(id)?;
            let to = after.serving_group(id)?;
            (from != to).then_some((id, from, to))
        })
        .collect();
    // Only what stops the plan: its warnings are the moves, said here in other words.
    let mut problems = Diagnostics::new();
    for d in diags.into_iter().filter(|d| d.severity == Severity::Error) {
        problems.push(d);
    }
    (moves, problems)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_instant_vector_gives_each_apps_rate() {
        let text = r#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"app":"cart"},"value":[1764669600,"1840.5"]},
            {"metric":{"app":"shop-web"},"value":[1764669600,"NaN"]}]}}"#;
        let peaks = parse(Path::new("o.json"), text).unwrap();
        assert_eq!(peaks.get("cart"), Some(&1840.5));
        assert_eq!(peaks.get("shop-web"), None);
    }

    #[test]
    fn a_matrix_gives_each_apps_highest_sample() {
        let text = r#"{"status":"success","data":{"resultType":"matrix","result":[
            {"metric":{"app":"cart"},"values":[[1,"10"],[2,"30.25"],[3,"20"]]}]}}"#;
        let peaks = parse(Path::new("o.json"), text).unwrap();
        assert_eq!(peaks.get("cart"), Some(&30.25));
    }

    #[test]
    fn an_error_response_or_a_series_without_app_is_refused() {
        let error = r#"{"status":"error","errorType":"bad_data","error":"parse error"}"#;
        let d = parse(Path::new("o.json"), error).unwrap_err();
        assert!(
            d.message
                .contains("the query failed in Prometheus: parse error")
        );
        let no_app = r#"{"status":"success","data":{"resultType":"vector","result":[
            {"metric":{"route":"x"},"value":[1,"1"]}]}}"#;
        let d = parse(Path::new("o.json"), no_app).unwrap_err();
        assert!(
            d.message.contains("has no `app` label ({route=\"x\"})"),
            "{}",
            d.message
        );
    }
}
