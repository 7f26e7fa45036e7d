//! `latgen init`: its arguments, run by [`crate::ops::latgen_init`].

use std::path::PathBuf;

use crate::ops::latgen_init::{InitOptions, run as init};
use crate::ops::shell::{Exit, Ui};

#[derive(Debug, clap::Args)]
pub(crate) struct InitArgs {
    /// The project folder (created when missing).
    #[arg(default_value = ".")]
    pub dir: PathBuf,
    /// The Git repository that will hold the project (deploy.repoURL) [default: a
    /// placeholder that `latgen check` reports].
    #[arg(long, value_name = "URL")]
    pub repo_url: Option<String>,
    /// The Argo CD AppProject of the two Applications (deploy.project) [default: latgen].
    #[arg(long, value_name = "NAME")]
    pub project: Option<String>,
    /// The workload cluster's name in Argo CD (deploy.latticeCluster) [default: a
    /// placeholder].
    #[arg(long, value_name = "NAME")]
    pub lattice_cluster: Option<String>,
    /// The gateway cluster's name in Argo CD (deploy.kongCluster) [default: a placeholder].
    #[arg(long, value_name = "NAME")]
    pub kong_cluster: Option<String>,
    /// The prefix of this project's Lattice service names (lattice.serviceNamePrefix,
    /// e.g. shop-prod) [default: a placeholder that `latgen render` and `check` report].
    #[arg(long, value_name = "PREFIX")]
    pub service_name_prefix: Option<String>,
}

pub(crate) fn run(args: &InitArgs, ui: Ui) -> Exit {
    let opts = InitOptions {
        dir: &args.dir,
        repo_url: args.repo_url.as_deref(),
        project: args.project.as_deref(),
        lattice_cluster: args.lattice_cluster.as_deref(),
        kong_cluster: args.kong_cluster.as_deref(),
        service_name_prefix: args.service_name_prefix.as_deref(),
    };
    init(&opts, ui)
}
