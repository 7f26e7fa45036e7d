//! The output folder as last rendered, asked by the planner when a group no longer holds the
//! apps the lock gives it: the app that needs more rules than the group's route gave it is
//! the one whose declaration grew, and the one that leaves.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::input::app::App;
use crate::input::config::Config;
use crate::input::confine::Project;
use latgen_sim::routing::LatticeRoute;

/// The Lattice routes of an output folder, each read the first time a group is asked about.
pub(crate) struct PreviousOutput<'a> {
    project: Project,
    dir: PathBuf,
    config: &'a Config,
    routes: RefCell<BTreeMap<u32, Option<LatticeRoute>>>,
}

impl<'a> PreviousOutput<'a> {
    /// The output folder `dir` of the project at `root`. Only a regular file inside the
    /// project is read; anything else counts as not rendered.
    pub fn new(root: &std::path::Path, dir: PathBuf, config: &'a Config) -> Self {
        PreviousOutput {
            project: Project::new(root),
            dir,
            config,
            routes: RefCell::new(BTreeMap::new()),
        }
    }

    fn route(&self, number: u32) -> Option<LatticeRoute> {
        let name = self.config.group_name(number);
        let path = self
            .dir
            .join("lattice")
            .join(format!("httproute-{name}.yaml"));
        let bytes = self.project.read(&path).ok()??;
        LatticeRoute::parse(&path, std::str::from_utf8(&bytes).ok()?)
    }
}

impl crate::plan::Previous for PreviousOutput<'_> {
    fn rules(&self, number: u32, app: &App) -> Option<u32> {
        let mut routes = self.routes.borrow_mut();
        let route = routes.entry(number).or_insert_with(|| self.route(number));
        let rules = route.as_ref()?.rules.iter();
        let of_app = rules.filter(|r| r.backend.as_ref().is_some_and(|b| app.is_backend(b)));
        Some(of_app.count() as u32)
    }
}
