//! What of a change a judge must look at: the requests it can reroute and the files on
//! their way, found from the routing states of its trees (see [`Scope`]).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use latgen_sim::routing::Network;

/// How many requests one task follows through a network: enough that merging the files each
/// task finds costs little beside following them.
const FOLLOWED_AT_ONCE: usize = 1024;

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
        // The first network's keys are kept as found and the others added to them: a switch
        // of dispatch mode has every route's keys in each, and adding the first's again, one
        // by one on one core, was about a third of this part's time at 10,000 apps.
        let parts: Vec<_> = (nets.par_iter()).map(|n| n.reroutable(changed)).collect();
        let mut parts = parts.into_iter();
        let mut keys = parts.next().unwrap_or_default();
        for k in parts {
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
        use latgen_sim::routing::Hasher;
        use rayon::prelude::*;
        use std::collections::HashSet;
        // Most files on the way are changed ones, and most are on the way of several
        // requests: only the others are kept, each once, before any is copied or sorted.
        let known: HashSet<&Path, Hasher> = changed.iter().map(PathBuf::as_path).collect();
        // A way takes only Kong routes, bridges and the Lattice routes a Kong route sends
        // requests to. Where each of them is a changed file, following the requests could
        // add none: a switch's first round follows none of its tens of thousands, and its
        // second follows them only through the target (the step's new Lattice services are
        // unchanged, and reached only there).
        let none_to_add = |net: &&Network| net.files_a_way_can_reach().all(|f| known.contains(f));
        let to_follow: Vec<&Network> = (nets.par_iter().copied())
            .filter(|net| follow_all || !none_to_add(net))
            .collect();
        // Each network's requests in pieces, so that one network is followed on every core.
        let pieces = (to_follow.par_iter()).flat_map(|net| {
            probes
                .par_chunks(FOLLOWED_AT_ONCE)
                .map(move |some| (net, some))
        });
        let on_the_way = pieces.map(|(net, some)| {
            let mut more: HashSet<&Path, Hasher> = HashSet::default();
            for (h, p) in some {
                let found = net.files_on_the_way(h, p).into_iter();
                more.extend(found.filter(|f| !known.contains(f)));
            }
            more.into_iter().map(Path::to_path_buf).collect::<Vec<_>>()
        });
        let mut files = changed.clone();
        for more in on_the_way.collect::<Vec<_>>() {
            files.extend(more);
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
