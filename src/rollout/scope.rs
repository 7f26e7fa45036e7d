//! What of a change a judge must look at: the requests it can reroute and the files on
//! their way, found from the routing states of its trees (see [`Scope`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use latgen_sim::routing::Network;

/// How many requests to follow, at least, make taking an unchanged file that any way can
/// take cheaper than looking for it on their ways. Following costs each request a walk per
/// network; a file taken but on no way costs every state a judge tries one document more,
/// and a judge tries several.
pub(crate) const REQUESTS_PER_FILE_TAKEN: usize = 10;

/// What of a change the networks of its trees show it can affect: the requests it can
/// reroute (of those any of the networks probes), and every file their way depends on in
/// any of the networks, the changed files included. A state that mixes the trees' versions
/// of the changed files routes every other request as all of them do, and routes these
/// requests as a network of these files alone does: judging a state needs no more.
pub(crate) struct Scope {
    pub probes: Vec<(String, String)>,
    pub files: BTreeSet<PathBuf>,
}

impl Scope {
    /// `every`: the changed files are every file of the trees the networks are of (then
    /// no other file can be on a rerouted request's way).
    pub fn of(nets: &[&Network], changed: (&BTreeSet<PathBuf>, bool)) -> Scope {
        Scope::of_with(nets, changed, false)
    }

    /// [`Scope::of`], every request followed for the files on its way even where none
    /// could add one: what the shortcut must agree with.
    #[cfg(test)]
    pub fn followed(nets: &[&Network], changed: (&BTreeSet<PathBuf>, bool)) -> Scope {
        Scope::of_with(nets, changed, true)
    }

    fn of_with(
        nets: &[&Network],
        (changed, every): (&BTreeSet<PathBuf>, bool),
        follow_all: bool,
    ) -> Scope {
        use rayon::prelude::*;
        // Each network's part is found on its own, in parallel: each is a pass over the
        // routes of a whole tree, and the first request followed through a network
        // indexes it.
        let mut keys = latgen_sim::routing::Reroutable::default();
        for k in nets
            .par_iter()
            .map(|n| n.reroutable(changed))
            .collect::<Vec<_>>()
        {
            keys.extend(k);
        }
        let mut probes: Vec<(String, String)> = nets
            .iter()
            .flat_map(|n| n.probes_where(|h, p| keys.could_claim(h, p)))
            .collect();
        // Each network's come sorted, and the networks share most: sorted once more.
        probes.par_sort_unstable();
        probes.dedup();
        let files = if every {
            changed.clone()
        } else {
            Scope::on_the_way(nets, &probes, changed, follow_all)
        };
        Scope { probes, files }
    }

    /// The `changed` files and every file on the way of `probes` in any of `nets`, with
    /// the auth policies of their routes and the routes of their policies.
    fn on_the_way(
        nets: &[&Network],
        probes: &[(String, String)],
        changed: &BTreeSet<PathBuf>,
        follow_all: bool,
    ) -> BTreeSet<PathBuf> {
        use rayon::prelude::*;
        use std::collections::HashSet;
        // Most files on the way are changed ones, and most are on the way of several
        // requests: only the others are kept, each once, before any is copied or sorted.
        let known: HashSet<&Path> = changed.iter().map(PathBuf::as_path).collect();
        // A way takes only Kong routes, bridges and Lattice routes: the unchanged ones of
        // those are all that following the requests could add.
        let unchanged: HashSet<&Path> = (nets.iter())
            .flat_map(|net| net.files_any_way_can_take())
            .filter(|f| !known.contains(f))
            .collect();
        let mut files = changed.clone();
        if !follow_all && unchanged.len() * REQUESTS_PER_FILE_TAKEN <= probes.len() {
            // Few against the requests (none in a switch's first round, its new Lattice
            // services in the second): each is taken rather than looked for. A file taken
            // that is on no request's way changes no judgement, since each state routes
            // these requests as the whole tree does (the judge of every file,
            // `Judge::unscoped`, is held to agree with the scoped one).
            files.extend(unchanged.into_iter().map(Path::to_path_buf));
        } else {
            let on_the_way = nets.par_iter().map(|net| {
                let mut more: HashSet<&Path> = HashSet::new();
                for (h, p) in probes {
                    let found = net.files_on_the_way(h, p).into_iter();
                    more.extend(found.filter(|f| !known.contains(f)));
                }
                more.into_iter().map(Path::to_path_buf).collect::<Vec<_>>()
            });
            for more in on_the_way.collect::<Vec<_>>() {
                files.extend(more);
            }
        }
        // A route is judged with its auth policy, and a policy with its route.
        let companions: Vec<PathBuf> = nets
            .iter()
            .flat_map(|n| n.auth_companions(&files))
            .collect();
        files.extend(companions);
        files
    }
}
