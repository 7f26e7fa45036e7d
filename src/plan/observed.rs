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
use crate::input::model::{App, AppId};
use crate::plan::prepared::Prepared;

/// An observed file larger than this is refused: 100,000 apps' series fit in about 10 MiB.
pub(crate) const MAX_OBSERVED_BYTES: u64 = 64 * 1024 * 1024;

/// A Prometheus HTTP API response (`/api/v1/query` or `/api/v1/query_range`).
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Response {
    status: String,
    #[serde(default)]
    error: Option<String>,
    data: Option<Data>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Data {
    result_type: String,
    result: serde_json::Value,
}

/// A series of an instant query (`vector`): one sample.
#[derive(Deserialize)]
struct Sample {
    metric: BTreeMap<String, String>,
    /// `[unix time, "value"]`: Prometheus writes sample values as strings.
    value: (f64, String),
}

/// A series of a range query (`matrix`): its samples over the range, whose highest is the
/// peak.
#[derive(Deserialize)]
struct Series {
    metric: BTreeMap<String, String>,
    values: Vec<(f64, String)>,
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
    let shape = |e: serde_json::Error| bad(format!("a {} result: {e}", data.result_type));
    let series: Vec<(BTreeMap<String, String>, Vec<String>)> = match data.result_type.as_str() {
        "vector" => serde_json::from_value::<Vec<Sample>>(data.result.clone())
            .map_err(shape)?
            .into_iter()
            .map(|s| (s.metric, vec![s.value.1]))
            .collect(),
        "matrix" => serde_json::from_value::<Vec<Series>>(data.result.clone())
            .map_err(shape)?
            .into_iter()
            .map(|s| (s.metric, s.values.into_iter().map(|v| v.1).collect()))
            .collect(),
        other => {
            return Err(bad(format!(
                "the result is a {other}, not one series per app (a vector or a matrix)"
            )));
        }
    };
    let mut peaks = BTreeMap::new();
    for (metric, values) in series {
        let Some(app) = metric.get("app") else {
            return Err(bad(format!(
                "a series has no `app` label ({}): the query must sum by app",
                labels(&metric)
            )));
        };
        for value in values {
            let rate: f64 = value
                .parse()
                .map_err(|_| bad(format!("`{value}` (app `{app}`) is not a number")))?;
            // NaN (no traffic in the window) and negative rates say nothing of a peak.
            if rate.is_finite() && rate >= 0.0 {
                let peak = peaks.entry(app.clone()).or_insert(0.0_f64);
                *peak = peak.max(rate);
            }
        }
    }
    Ok(peaks)
}

fn labels(metric: &BTreeMap<String, String>) -> String {
    let pairs: Vec<String> = metric.iter().map(|(k, v)| format!("{k}=\"{v}\"")).collect();
    format!("{{{}}}", pairs.join(", "))
}

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
    /// Series for apps the project does not declare.
    pub unknown: Vec<String>,
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
    let unknown = (peaks.keys())
        .filter(|name| !by_name.contains_key(name.as_str()))
        .cloned()
        .collect();
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
    let (moves, problems) = replan(prepared, &stale);
    Observation {
        groups,
        stale,
        moves,
        unknown,
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
