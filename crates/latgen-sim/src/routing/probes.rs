//! The requests worth following through a network: the paths its Kong routes declare and
//! the neighbours of each that string-prefix matching treats differently.

use super::*;

impl Network {
    /// Requests worth following to compare two networks or to check one: every path a Kong
    /// route declares, one segment deeper, and string extensions that expose string-prefix
    /// matching (`/shop` → `/shopx`, `/shop-x`), on each route's hosts. Sorted, each once.
    pub fn probes(&self) -> Vec<(String, String)> {
        self.probes_where(|_, _| true)
    }

    /// The [`Network::probes`] that `keep` accepts (host, path), sorted, each once. The
    /// Kong routes are gone through in parallel: a rollout asks this of every route of a
    /// large tree, and a switch of dispatch mode keeps tens of thousands.
    pub fn probes_where(&self, keep: impl Fn(&str, &str) -> bool + Sync) -> Vec<(String, String)> {
        use rayon::prelude::*;
        let mut out: Vec<(String, String)> = self
            .kong
            .par_chunks(512)
            .flat_map_iter(|routes| {
                let mut out = Vec::new();
                // One buffer for every candidate path: most are not kept, and are never
                // allocated.
                let mut p = String::new();
                for r in routes {
                    kept_probes(r, &keep, &mut p, &mut out);
                }
                out
            })
            .collect();
        out.par_sort_unstable();
        out.dedup();
        out
    }
}

/// The probes of one Kong route that `keep` accepts, into `out`; `p` is the buffer each
/// candidate path is made in.
fn kept_probes(
    r: &KongRoute,
    keep: &impl Fn(&str, &str) -> bool,
    p: &mut String,
    out: &mut Vec<(String, String)>,
) {
    let hosts: Vec<&str> = if r.hostnames.is_empty() {
        vec![ANY_HOST]
    } else {
        r.hostnames.iter().map(String::as_str).collect()
    };
    for m in &r.matches {
        let v = m.path.trim_end_matches('/');
        for suffix in [None, Some("/x"), Some("x"), Some("-x")] {
            p.clear();
            match suffix {
                None => p.push_str(&m.path),
                Some(s) => {
                    p.push_str(v);
                    p.push_str(s);
                }
            }
            for h in hosts.iter().filter(|h| keep(h, p)) {
                out.push((h.to_string(), p.clone()));
            }
        }
    }
}
