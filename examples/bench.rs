//! The benchmark harness: generates N apps deterministically (as latgen declarations and as
//! values for the Helm chart that does the same job), times latgen's stages in-process and
//! its whole-process runs, the Helm chart side by side, and the I/O floor, and writes
//! BENCHMARKS.md.
//!
//!     cargo run --release --example bench -- --sizes 1000,10000,100000 \
//!         --helm target/bench/helm/bin/helm --chart ../shared/bench/helm-peer --out BENCHMARKS.md
//!
//! `bench/run.sh` fetches `helm` and runs exactly that.

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use latgen::input::ProjectPaths;
use latgen::render::Templates;

// The input generator, shared with the tests that check output at the benchmark's sizes.
#[path = "../bench/generate.rs"]
mod generate;
use generate::{GenApp, generate};

// The same apps as a live setup on the domains Lattice assigned, for the import timing.
#[path = "../bench/assigned_export.rs"]
mod assigned_export;

// The steps `render --base` writes for a move and a dispatch switch.
#[path = "../bench/rollout_steps.rs"]
mod rollout_steps;

struct Args {
    sizes: Vec<usize>,
    helm: Option<PathBuf>,
    chart: Option<PathBuf>,
    out: Option<PathBuf>,
    runs: usize,
    work: PathBuf,
}

fn args() -> Args {
    let mut a = Args {
        sizes: vec![1000, 10_000],
        helm: None,
        chart: None,
        out: None,
        runs: 7,
        work: PathBuf::from("target/bench"),
    };
    let mut it = std::env::args().skip(1);
    while let Some(flag) = it.next() {
        let mut value = || it.next().unwrap_or_else(|| panic!("{flag} needs a value"));
        match flag.as_str() {
            "--sizes" => {
                a.sizes = value()
                    .split(',')
                    .map(|s| s.trim().parse().expect("a number"))
                    .collect()
            }
            "--helm" => a.helm = Some(value().into()),
            "--chart" => a.chart = Some(value().into()),
            "--out" => a.out = Some(value().into()),
            "--runs" => a.runs = value().parse().expect("a number"),
            "--work" => a.work = value().into(),
            other => panic!("unknown flag {other}"),
        }
    }
    a
}

fn write_inputs(dir: &Path, apps: &[GenApp]) -> PathBuf {
    let _ = std::fs::remove_dir_all(dir);
    let apps_dir = dir.join("apps");
    std::fs::create_dir_all(&apps_dir).unwrap();
    let mut values = String::from("rulesPerGroup: 10\napps:\n");
    for a in apps {
        std::fs::write(apps_dir.join(format!("{}.yaml", a.name)), a.declaration()).unwrap();
        let quoted: Vec<String> = a.paths.iter().map(|p| format!("\"{p}\"")).collect();
        let _ = write!(
            values,
            "  - name: {}\n    namespace: {}\n    paths: [{}]\n    service: {{name: {}, port: {}}}\n",
            a.name,
            a.namespace,
            quoted.join(", "),
            a.name,
            a.port
        );
        if let Some(h) = &a.host {
            let _ = writeln!(values, "    host: {h}");
        }
    }
    let values_file = dir.join("values.yaml");
    std::fs::write(&values_file, values).unwrap();
    values_file
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Runs a command `runs` times; median wall time and the largest peak RSS (KiB), measured
/// with GNU time when it is there.
fn measure(
    runs: usize,
    mut make: impl FnMut() -> Command,
    before: &mut dyn FnMut(),
) -> (Duration, Option<u64>) {
    let mut rounds = measure_rounds(runs, &mut [(&mut make, before)]);
    rounds.remove(0)
}

/// A command to time and what to do before each of its runs (untimed).
type Timed<'a> = (&'a mut dyn FnMut() -> Command, &'a mut dyn FnMut());

/// Runs several commands in `runs` rounds, one run of each per round, so that the machine's
/// drift from one minute to the next touches them alike; for each, the median wall time
/// and the largest peak RSS (KiB).
fn measure_rounds(runs: usize, cmds: &mut [Timed<'_>]) -> Vec<(Duration, Option<u64>)> {
    let mut times = vec![Vec::new(); cmds.len()];
    let mut rss: Vec<Option<u64>> = vec![None; cmds.len()];
    for _ in 0..runs {
        for (i, (make, before)) in cmds.iter_mut().enumerate() {
            before();
            let (time, kb) = run_once(make());
            times[i].push(time);
            rss[i] = rss[i].max(kb);
        }
    }
    times.into_iter().map(median).zip(rss).collect()
}

/// One timed run of `cmd`: its wall time and, with GNU time, its peak RSS (KiB).
fn run_once(cmd: Command) -> (Duration, Option<u64>) {
    let mut full = if Path::new("/usr/bin/time").exists() {
        let mut c = Command::new("/usr/bin/time");
        c.arg("-f")
            .arg("LATGEN_BENCH_RSS=%M")
            .arg(cmd.get_program())
            .args(cmd.get_args());
        if let Some(d) = cmd.get_current_dir() {
            c.current_dir(d);
        }
        c
    } else {
        cmd
    };
    let start = Instant::now();
    let out = full.output().expect("runs");
    let time = start.elapsed();
    assert!(
        out.status.success(),
        "{:?} failed: {}",
        full,
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    let kb = err
        .lines()
        .find_map(|l| l.strip_prefix("LATGEN_BENCH_RSS="))
        .and_then(|v| v.trim().parse::<u64>().ok());
    (time, kb)
}

/// Reading every input file and writing as many files of the same sizes as the output:
/// what any tool producing this tree must at least do.
fn io_floor(apps_dir: &Path, output: &Path, runs: usize, scratch: &Path) -> Duration {
    let sizes: Vec<(PathBuf, usize)> = walk(output)
        .into_iter()
        .map(|p| {
            let len = std::fs::metadata(&p).unwrap().len() as usize;
            (p.strip_prefix(output).unwrap().to_path_buf(), len)
        })
        .collect();
    let inputs = walk(apps_dir);
    let mut times = Vec::new();
    for _ in 0..runs {
        let _ = std::fs::remove_dir_all(scratch);
        let start = Instant::now();
        let mut total = 0;
        for p in &inputs {
            total += std::fs::read(p).unwrap().len();
        }
        let mut dirs = BTreeSet::new();
        let buf = vec![b'x'; sizes.iter().map(|s| s.1).max().unwrap_or(0)];
        for (rel, len) in &sizes {
            let p = scratch.join(rel);
            let parent = p.parent().unwrap().to_path_buf();
            if dirs.insert(parent.clone()) {
                std::fs::create_dir_all(&parent).unwrap();
            }
            std::fs::write(&p, &buf[..*len]).unwrap();
        }
        times.push(start.elapsed());
        assert!(total > 0);
    }
    let _ = std::fs::remove_dir_all(scratch);
    median(times)
}

/// Parsing every output file as YAML (no typed objects, no checks), on all cores: the least
/// any tool that reads its output back must spend on top of the I/O floor.
fn parse_floor(output: &Path, runs: usize) -> Duration {
    use rayon::prelude::*;
    let texts: Vec<String> = walk(output)
        .into_iter()
        .map(|p| std::fs::read_to_string(p).unwrap())
        .collect();
    let mut times = Vec::new();
    for _ in 0..runs {
        let start = Instant::now();
        texts.par_iter().for_each(|t| {
            let _: serde::de::IgnoredAny = serde_saphyr::from_str(t).unwrap();
        });
        times.push(start.elapsed());
    }
    median(times)
}

/// Each file's modification time, to see that a run wrote nothing.
fn mtimes(dir: &Path) -> Vec<(PathBuf, std::time::SystemTime)> {
    let mut all: Vec<_> = walk(dir)
        .into_iter()
        .map(|p| {
            let m = std::fs::metadata(&p).unwrap().modified().unwrap();
            (p, m)
        })
        .collect();
    all.sort();
    all
}

/// A wall-clock time and peak memory (KB), when known.
type Measured = (Duration, Option<u64>);

struct Row {
    n: usize,
    files: usize,
    stages: Stages,
    first: (Duration, Option<u64>),
    again: (Duration, Option<u64>),
    /// Files a render with nothing changed wrote (by modification time), after the rounds.
    touched: usize,
    check: (Duration, Option<u64>),
    /// `check --base HEAD` with one app added and its Lattice half rendered.
    base_check: (Duration, Option<u64>),
    /// Each step `render --base HEAD` writes of a one-app move and (10,000 apps and fewer)
    /// of a switch to header dispatch.
    steps: rollout_steps::Steps,
    floor: Duration,
    parse: Duration,
    helm: Option<(Duration, Option<u64>)>,
    /// With `auth.mode: iam` (10,000 apps and fewer): render into an empty folder, check.
    auth: Option<[Measured; 2]>,
    /// With `observability:` on (PrometheusRules, the Prometheus plugin, access logs; 10,000
    /// apps and fewer): render into an empty folder, check.
    observability: Option<[Measured; 2]>,
    /// What Argo CD would run on each side's folder (Lattice, Kong).
    consumer: Consumer,
    /// `latgen import` of the output into an empty project (10,000 apps and fewer).
    import: Option<Measured>,
    /// `latgen import` of the apps exported on the domains Lattice assigned (10,000 apps
    /// and fewer): kubectl's fields, Lists, grants and live auth policies.
    import_assigned: Option<Measured>,
    /// Two environments of the same apps (10,000 apps and fewer): render into empty output
    /// and check with `--env all`, then with `--env production` alone.
    environments: Option<[Measured; 4]>,
}

/// Reading each side's folder the way the deploy kit tells Argo CD to (a directory source,
/// the kustomization left out), and, at 1,000 apps, through `kustomize build` as before.
struct Consumer {
    /// `bench/directory_read.py` on each side: None when Python's `yaml` is not there.
    read: Option<[Duration; 2]>,
    /// `kubectl kustomize` on each side, at 1,000 apps only (it is superlinear).
    kustomize: Option<[Duration; 2]>,
}

/// One run of `bench/directory_read.py` on `folder`: the time it reports, None when it
/// cannot run (no Python or no `yaml` module).
fn directory_read(folder: &Path) -> Option<Duration> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("bench/directory_read.py");
    let out = Command::new("python3")
        .arg(script)
        .arg(folder)
        .arg("kustomization.yaml")
        .output()
        .ok()
        .filter(|o| o.status.success())?;
    let text = String::from_utf8_lossy(&out.stdout);
    let secs: f64 = text.split_whitespace().nth(1)?.parse().ok()?;
    Some(Duration::from_secs_f64(secs))
}

fn kustomize(folder: &Path) -> Option<Duration> {
    let start = Instant::now();
    let ok = Command::new("kubectl")
        .arg("kustomize")
        .arg(folder)
        .stdout(std::process::Stdio::null())
        .status()
        .ok()?
        .success();
    ok.then(|| start.elapsed())
}

/// The consumer side at `n` apps, on the rendered output `out`: the median of `runs`
/// directory reads per side (one at 100,000 apps), and kustomize once at 1,000 apps.
fn measure_consumer(out: &Path, n: usize, runs: usize) -> Consumer {
    let runs = if n >= 100_000 { 1 } else { runs };
    let side = |name: &str| -> Option<Duration> {
        let times: Option<Vec<Duration>> =
            (0..runs).map(|_| directory_read(&out.join(name))).collect();
        times.map(median)
    };
    let read = side("lattice").zip(side("kong")).map(|(l, k)| [l, k]);
    let kustomize = (n == 1000)
        .then(|| kustomize(&out.join("lattice")).zip(kustomize(&out.join("kong"))))
        .flatten()
        .map(|(l, k)| [l, k]);
    Consumer { read, kustomize }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    walkdir::WalkDir::new(dir)
        .into_iter()
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_file())
        .map(|e| e.into_path())
        .collect()
}

struct Stages {
    load: Duration,
    plan: Duration,
    render: Duration,
    write: Duration,
}

/// latgen's stages in-process, writing into an empty output folder.
fn stages(project: &Path) -> Stages {
    let paths = ProjectPaths::at_root(project);
    let out = project.join("generated");
    let _ = std::fs::remove_dir_all(&out);
    let _ = std::fs::remove_file(&paths.lock);
    let t = Instant::now();
    let mut diags = latgen::diag::Diagnostics::new();
    let loaded = latgen::input::load(&paths, &mut diags);
    let load = t.elapsed();
    let t = Instant::now();
    let apps = latgen::validate::validate(&loaded, &paths.config, &mut diags);
    let plan = latgen::plan::plan(&apps, &loaded.lock, &paths.lock, &loaded.config, &mut diags);
    let plan_t = t.elapsed();
    assert!(!diags.has_errors());
    let templates = Templates::load(None).unwrap();
    let t = Instant::now();
    let output = latgen::render::render(&plan, &apps, &loaded.config, &templates).unwrap();
    let render = t.elapsed();
    let t = Instant::now();
    let existing = latgen::output::read_tree(&out).unwrap();
    let lock = latgen::output::OutsideFile {
        path: &paths.lock,
        text: latgen::input::lock::serialize(&plan.lock),
    };
    latgen::output::sync(
        &paths.root,
        &out,
        &existing,
        std::borrow::Cow::Owned(output),
        Some(lock),
        |_| true,
    )
    .unwrap();
    let write = t.elapsed();
    Stages {
        load,
        plan: plan_t,
        render,
        write,
    }
}

/// One line of the targets table: the target, what was measured, whether it was met.
type Target = (String, String, bool);

/// The targets of issue 15 (speed), each against its figure.
fn targets(md: &mut String, rows: &[Row]) {
    let mut all = Vec::new();
    if let Some(r) = rows.iter().find(|r| r.n == 10_000) {
        all.extend(speed_targets(r));
        all.extend(memory_targets(r));
        if let Some(big) = rows.iter().find(|b| b.n == 100_000) {
            all.extend(growth_targets(r, big));
        }
        all.push((
            "re-render with nothing changed writes no file".into(),
            format!("{} files written", r.touched),
            r.touched == 0,
        ));
    }
    if let Some(small) = rows.iter().find(|r| r.n == 1000) {
        all.push((
            "at 1,000 apps, check under 100 ms (the pre-commit budget)".into(),
            format!("{:.0} ms", small.check.0.as_secs_f64() * 1000.0),
            small.check.0 < Duration::from_millis(100),
        ));
    }
    if let Some(r) = rows.iter().find(|r| r.n == 10_000) {
        all.extend(auth_targets(r));
        all.extend(observability_targets(r));
        all.extend(consumer_targets(r, rows.iter().find(|b| b.n == 100_000)));
        all.extend(import_targets(r));
        all.extend(environment_targets(r));
    }
    if all.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "\n## Targets (10,000 apps unless the target says otherwise)\n"
    );
    let _ = writeln!(md, "| target | measured | |");
    let _ = writeln!(md, "|---|---|---|");
    for (target, measured, ok) in all {
        let met = if ok { "met" } else { "**not met**" };
        let _ = writeln!(md, "| {target} | {measured} | {met} |");
    }
    if let Some(r) = rows.iter().find(|r| r.n == 10_000) {
        let _ = writeln!(
            md,
            "\nA render with a run-time typed read-back (`--verify`, custom templates) needs at least the I/O floor plus the parse of the output: {} + {} = {} at 10,000 apps.",
            secs(r.floor),
            secs(r.parse),
            secs(r.floor + r.parse)
        );
    }
}

/// The consumer side: each side read under 10 s at 10,000 apps, linearly to 100,000.
fn consumer_targets(r: &Row, big: Option<&Row>) -> Vec<Target> {
    let Some(read) = r.consumer.read else {
        return Vec::new();
    };
    let slowest = read[0].max(read[1]);
    let mut all = vec![(
        "each side read as the deploy kit tells Argo CD to (directory source) in under 10 s".into(),
        format!("{} (Lattice), {} (Kong)", secs(read[0]), secs(read[1])),
        slowest < Duration::from_secs(10),
    )];
    if let Some(big_read) = big.and_then(|b| b.consumer.read) {
        let growth = |i: usize| big_read[i].as_secs_f64() / read[i].as_secs_f64();
        let worst = growth(0).max(growth(1));
        all.push((
            "100,000 apps: each side read in at most 11× the time of 10,000 (linear)".into(),
            format!("{:.1}× (Lattice), {:.1}× (Kong)", growth(0), growth(1)),
            worst <= 11.0,
        ));
    }
    all
}

/// Importing a setup of 10,000 apps (a one-off): faster than `helm template` renders the
/// same apps, and within render's memory budget for `check --base`.
fn import_targets(r: &Row) -> Vec<Target> {
    let Some(import) = r.import else {
        return Vec::new();
    };
    let mut all = Vec::new();
    if let Some((helm, _)) = r.helm {
        all.push((
            "`latgen import` of the 10,000-app output faster than `helm template` of the same apps"
                .into(),
            format!("{} against {}", secs(import.0), secs(helm)),
            import.0 < helm,
        ));
    }
    all.push((
        "`latgen import`'s peak RSS under 200 MB".into(),
        mb(import.1),
        import.1.is_some_and(|kb| kb < 200 * 1024),
    ));
    if let Some(assigned) = r.import_assigned {
        if let Some((helm, _)) = r.helm {
            all.push((
                "`latgen import` of the same apps exported on the domains Lattice assigned (kubectl's fields, Lists, grants, live auth policies) faster than `helm template`".into(),
                format!("{} against {}", secs(assigned.0), secs(helm)),
                assigned.0 < helm,
            ));
        }
        all.push((
            "that import's peak RSS under 200 MB".into(),
            mb(assigned.1),
            assigned.1.is_some_and(|kb| kb < 200 * 1024),
        ));
    }
    all
}

/// Two environments of 10,000 apps each (`--env all`): linear in the environments (each
/// within 2.2× of one), the speed against `helm template` run once per environment, and
/// each environment within its memory budget (so twice one's, at most, for both).
fn environment_targets(r: &Row) -> Vec<Target> {
    let Some([render_all, check_all, render_one, check_one]) = r.environments else {
        return Vec::new();
    };
    let mut all = Vec::new();
    let (x, shown) = ratio(render_all.0, render_one.0);
    all.push((
        "two environments (`--env all`): render within 2.2× of one environment's (linear)".into(),
        shown,
        x <= 2.2,
    ));
    let (x, shown) = ratio(check_all.0, check_one.0);
    all.push((
        "two environments (`--env all`): check within 2.2× of one environment's (linear)".into(),
        shown,
        x <= 2.2,
    ));
    if let Some((helm, _)) = r.helm {
        let (x, shown) = ratio(helm * 2, render_all.0);
        all.push((
            "two environments: render at least 6× faster than `helm template` run once per environment".into(),
            shown,
            x >= 6.0,
        ));
    }
    all.push((
        "two environments: render's peak RSS under 200 MB (one environment's 100 MB, twice)".into(),
        mb(render_all.1),
        render_all.1.is_some_and(|kb| kb < 200 * 1024),
    ));
    all
}

/// The targets with auth on: the same speed as without.
fn auth_targets(r: &Row) -> Vec<Target> {
    let Some([render, check]) = r.auth else {
        return Vec::new();
    };
    let mut all = Vec::new();
    if let Some((helm, _)) = r.helm {
        let (x, measured) = ratio(helm, render.0);
        all.push((
            "with `auth.mode: iam`, render at least 10× faster than `helm template` (without auth)"
                .into(),
            measured,
            x >= 10.0,
        ));
    }
    all.push((
        "with `auth.mode: iam`, check no slower than render".into(),
        format!("{} against {}", secs(check.0), secs(render.0)),
        check.0 <= render.0,
    ));
    all
}

/// The targets with observability on: the render targets still met.
fn observability_targets(r: &Row) -> Vec<Target> {
    let Some([render, check]) = r.observability else {
        return Vec::new();
    };
    let mut all = Vec::new();
    if let Some((helm, _)) = r.helm {
        let (x, measured) = ratio(helm, render.0);
        all.push((
            "with `observability:` on, render at least 10× faster than `helm template` (without)"
                .into(),
            measured,
            x >= 10.0,
        ));
    }
    all.push((
        "with `observability:` on, check no slower than render".into(),
        format!("{} against {}", secs(check.0), secs(render.0)),
        check.0 <= render.0,
    ));
    if let Some(rss) = render.1 {
        all.push((
            "with `observability:` on, render's peak RSS under 100 MB".into(),
            mb(Some(rss)),
            rss < 100 * 1024,
        ));
    }
    all
}

/// How `a` compares with `b`: "1.2× (a against b)".
fn ratio(a: Duration, b: Duration) -> (f64, String) {
    let x = a.as_secs_f64() / b.as_secs_f64();
    (x, format!("{x:.1}× ({} against {})", secs(a), secs(b)))
}

/// The time targets at one size: against Helm, the I/O floor and render.
fn speed_targets(r: &Row) -> Vec<Target> {
    let mut all = Vec::new();
    if let Some((helm, _)) = r.helm {
        let (x, measured) = ratio(helm, r.first.0);
        all.push((
            "render at least 10× faster than `helm template`".into(),
            measured,
            x >= 10.0,
        ));
    }
    let (x, measured) = ratio(r.first.0, r.floor);
    all.push((
        "render within 1.3× of the I/O floor".into(),
        measured,
        x <= 1.3,
    ));
    all.push((
        "check no slower than render".into(),
        format!("{} against {}", secs(r.check.0), secs(r.first.0)),
        r.check.0 <= r.first.0,
    ));
    let (x, measured) = ratio(r.base_check.0, r.first.0);
    all.push((
        "check --base (one app added, Lattice half) no more than 1.5× render".into(),
        measured,
        x <= 1.5,
    ));
    all.extend(step_targets(r));
    all
}

/// Each step of `render --base` within 3× render.
fn step_targets(r: &Row) -> Vec<Target> {
    let changes = [
        ("a one-app move", &r.steps.moved),
        ("a switch to header dispatch", &r.steps.switch),
    ];
    changes
        .into_iter()
        .filter(|(_, steps)| !steps.is_empty())
        .map(|(what, steps)| {
            let slowest = steps.iter().map(|s| s.0).max().unwrap_or_default();
            let (x, _) = ratio(slowest, r.first.0);
            let each: Vec<String> = steps.iter().map(|s| secs(s.0)).collect();
            (
                format!("each `render --base` step of {what} no more than 3× render"),
                format!(
                    "{x:.1}× (slowest of {} against {})",
                    each.join(", "),
                    secs(r.first.0)
                ),
                x <= 3.0,
            )
        })
        .collect()
}

/// The peak RSS targets at one size.
fn memory_targets(r: &Row) -> Vec<Target> {
    vec![
        under(
            "render's",
            [r.first.1, r.again.1].into_iter().flatten().max(),
            100,
        ),
        under("check's", r.check.1, 120),
        under("check --base's", r.base_check.1, 150),
    ]
}

/// A peak RSS under `limit` MB.
fn under(what: &str, kb: Option<u64>, limit: u64) -> Target {
    (
        format!("{what} peak RSS under {limit} MB"),
        mb(kb),
        kb.is_some_and(|k| k <= limit * 1024),
    )
}

/// 100,000 apps in at most 10× the time of 10,000, and within 600 MB, for each command.
fn growth_targets(r: &Row, big: &Row) -> Vec<Target> {
    let slowest = |steps: &[Measured]| steps.iter().copied().max_by_key(|s| s.0);
    let rows = [
        ("render", Some(r.first), Some(big.first)),
        (
            "render with nothing changed",
            Some(r.again),
            Some(big.again),
        ),
        ("check", Some(r.check), Some(big.check)),
        ("check --base", Some(r.base_check), Some(big.base_check)),
        (
            "each `render --base` step of a one-app move",
            slowest(&r.steps.moved),
            slowest(&big.steps.moved),
        ),
    ];
    let mut all = Vec::new();
    for (what, small, large) in rows {
        let (Some(small), Some(large)) = (small, large) else {
            continue;
        };
        let x = large.0.as_secs_f64() / small.0.as_secs_f64();
        all.push((
            format!("100,000 apps {what} in at most 10× the time of 10,000"),
            format!("{x:.1}× ({} against {})", secs(large.0), secs(small.0)),
            x <= 10.0,
        ));
        all.push(under(&format!("100,000 apps {what}'s"), large.1, 600));
    }
    all
}

fn secs(d: Duration) -> String {
    format!("{:.2} s", d.as_secs_f64())
}

fn mb(kb: Option<u64>) -> String {
    kb.map(|k| format!("{:.0} MB", k as f64 / 1024.0))
        .unwrap_or_else(|| "–".into())
}

fn main() {
    let a = args();
    let latgen_bin = std::env::current_exe()
        .unwrap()
        .parent()
        .unwrap()
        .parent()
        .unwrap()
        .join("latgen");
    assert!(
        latgen_bin.exists(),
        "build the binary first: cargo build --release"
    );
    let helm = a
        .helm
        .clone()
        .filter(|h| h.exists())
        .zip(a.chart.clone().filter(|c| c.exists()));
    forget_sizes(&a.work, |_| true);
    let rows: Vec<Row> = a
        .sizes
        .iter()
        .map(|&n| {
            let row = measure_size(&a, &latgen_bin, helm.as_ref(), n);
            forget_sizes(&a.work, |size| size == n);
            row
        })
        .collect();
    let mut md = String::new();
    write_method(&mut md, &a);
    write_results(&mut md, &a, &rows);
    targets(&mut md, &rows);
    print!("{md}");
    if let Some(out) = &a.out {
        std::fs::write(out, md).unwrap();
    }
}

/// Removes the folders of the sizes `which` picks from the work folder (`n10000`,
/// `n10000-auth`, ...). Each size is measured with no other size's files beside it, and the
/// run leaves none: under /dev/shm they are memory, and the kernel keeps a name for each of
/// their files, which every file made or opened after them pays for in its look-ups (on
/// this machine, a render at 10,000 apps spent a tenth of its time there with two million
/// such names about).
fn forget_sizes(work: &Path, which: impl Fn(usize) -> bool) {
    let Ok(entries) = std::fs::read_dir(work) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if (name.to_str()).and_then(size_of_folder).is_some_and(&which) {
            let _ = std::fs::remove_dir_all(entry.path());
        }
    }
}

/// The size a work folder of the harness's own is for, by the names it gives them
/// (`n10000`, `n10000-auth`, ...); None for any other name.
fn size_of_folder(name: &str) -> Option<usize> {
    const OWN: [&str; 6] = [
        "",
        "-auth",
        "-environments",
        "-import",
        "-import-assigned",
        "-observability",
    ];
    let rest = name.strip_prefix('n')?;
    let digits = rest.len() - rest.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let (number, kind) = rest.split_at(digits);
    let canonical = !number.is_empty() && !number.starts_with('0');
    (canonical && OWN.contains(&kind)).then(|| number.parse().ok())?
}

/// Every figure at one size: the stages in-process, then whole processes side by side.
fn measure_size(a: &Args, latgen_bin: &Path, helm: Option<&(PathBuf, PathBuf)>, n: usize) -> Row {
    eprintln!("== {n} apps");
    let dir = a.work.join(format!("n{n}"));
    let apps = generate(n);
    let values = write_inputs(&dir, &apps);
    let st = stages(&dir);
    let out = dir.join("generated");
    let files = walk(&out).len();
    // A run at 100,000 apps takes seconds; three still give a median, which the
    // growth target needs on a shared machine (one run can be 15% off).
    let runs = if n >= 100_000 { a.runs.min(3) } else { a.runs };
    let clean = {
        let dir = dir.clone();
        move || {
            let _ = std::fs::remove_dir_all(dir.join("generated"));
            let _ = std::fs::remove_file(dir.join("latgen.lock"));
        }
    };
    let render = &["render", "apps", "-o", "generated"][..];
    let check = &["check", "apps", "-o", "generated"][..];
    // In rounds (a render into an empty folder, a render with nothing changed, a check),
    // so that the three are compared at the same moments.
    let timed = measure_rounds(
        runs,
        &mut [
            (&mut latgen(latgen_bin, &dir, render), &mut { clean }),
            (&mut latgen(latgen_bin, &dir, render), &mut || {}),
            (&mut latgen(latgen_bin, &dir, check), &mut || {}),
        ],
    );
    let [first, again, check]: [(Duration, Option<u64>); 3] =
        timed.try_into().expect("one result per command timed");
    // One more render with nothing changed, untimed: the files it wrote, by mtime.
    let before = mtimes(&out);
    run_once(latgen(latgen_bin, &dir, render)());
    let after = mtimes(&out);
    let touched = before.iter().zip(&after).filter(|(b, a)| b != a).count()
        + before.len().abs_diff(after.len());
    let floor = io_floor(&dir.join("apps"), &out, runs, &dir.join("floor"));
    let parse = parse_floor(&out, runs);
    let helm_result = helm.map(|(bin, chart)| measure_helm(&dir, bin, chart, &values, runs));
    let consumer = measure_consumer(&out, n, runs);
    let auth = (n <= 10_000).then(|| measure_auth(a, latgen_bin, &apps, n, runs));
    let observability = (n <= 10_000).then(|| measure_observability(a, latgen_bin, &apps, n, runs));
    let import = (n <= 10_000).then(|| measure_import(a, latgen_bin, &out, n, runs));
    let import_assigned =
        (n <= 10_000).then(|| measure_import_assigned(a, latgen_bin, &apps, n, runs));
    let environments = (n <= 10_000).then(|| measure_environments(a, latgen_bin, &apps, n, runs));
    // Last: they commit the folder to Git and change it.
    let base_check = measure_base_check(&dir, latgen_bin, runs);
    let steps = rollout_steps::measure_steps(&dir, latgen_bin, runs, n <= 10_000);
    Row {
        n,
        files,
        stages: st,
        first,
        again,
        touched,
        check,
        base_check,
        steps,
        floor,
        parse,
        helm: helm_result,
        auth,
        observability,
        consumer,
        import,
        import_assigned,
        environments,
    }
}

/// The overlays of the two-environment runs: each its own service-name prefix, staging a
/// smaller rule quota (so its groups differ from production's).
const ENVIRONMENTS: [(&str, &str); 2] = [
    (
        "staging",
        "lattice:\n  serviceNamePrefix: bench-stg\nquotas:\n  rulesPerService: 8\n",
    ),
    ("production", "lattice:\n  serviceNamePrefix: bench-prod\n"),
];

/// The same apps in two environments: `render --env all` into empty output folders and
/// `check --env all`, then the same for production alone, in rounds.
fn measure_environments(
    a: &Args,
    latgen_bin: &Path,
    apps: &[GenApp],
    n: usize,
    runs: usize,
) -> [Measured; 4] {
    let dir = a.work.join(format!("n{n}-environments"));
    let _ = std::fs::remove_dir_all(&dir);
    let apps_dir = dir.join("apps");
    std::fs::create_dir_all(&apps_dir).unwrap();
    std::fs::create_dir_all(dir.join("environments")).unwrap();
    for (name, text) in ENVIRONMENTS {
        std::fs::write(dir.join(format!("environments/{name}.yaml")), text).unwrap();
    }
    for app in apps {
        let path = apps_dir.join(format!("{}.yaml", app.name));
        std::fs::write(path, app.declaration()).unwrap();
    }
    let clean = || {
        let dir = dir.clone();
        move || {
            let _ = std::fs::remove_dir_all(dir.join("generated"));
            let _ = std::fs::remove_dir_all(dir.join("locks"));
        }
    };
    let all = ["--env", "all"];
    let one = ["--env", "production"];
    let cmd = |verb: &'static str, env: [&'static str; 2]| [verb, "apps", env[0], env[1]];
    let (render_all, check_all) = (cmd("render", all), cmd("check", all));
    let (render_one, check_one) = (cmd("render", one), cmd("check", one));
    let timed = measure_rounds(
        runs,
        &mut [
            (&mut latgen(latgen_bin, &dir, &render_all), &mut clean()),
            (&mut latgen(latgen_bin, &dir, &check_all), &mut || {}),
            (&mut latgen(latgen_bin, &dir, &render_one), &mut clean()),
            (&mut latgen(latgen_bin, &dir, &check_one), &mut || {}),
        ],
    );
    timed.try_into().expect("one result per command timed")
}

/// `latgen import` of the rendered output (both sides) as if it were a foreign setup, into
/// an empty project, in rounds: each writes every declaration and the lock anew.
fn measure_import(a: &Args, latgen_bin: &Path, out: &Path, n: usize, runs: usize) -> Measured {
    let dir = a.work.join(format!("n{n}-import"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let (lattice, kong) = (out.join("lattice"), out.join("kong"));
    let (lattice, kong) = (lattice.to_str().unwrap(), kong.to_str().unwrap());
    import_rounds(
        latgen_bin,
        &dir,
        &["import", lattice, kong, "-o", "apps"],
        runs,
    )
}

/// `import` run in `dir` in rounds, each writing every declaration and the lock anew.
fn import_rounds(latgen_bin: &Path, dir: &Path, import: &[&str], runs: usize) -> Measured {
    let clean = {
        let dir = dir.to_path_buf();
        move || {
            let _ = std::fs::remove_dir_all(dir.join("apps"));
            let _ = std::fs::remove_file(dir.join("latgen.lock"));
        }
    };
    let timed = measure_rounds(
        runs,
        &mut [(&mut latgen(latgen_bin, dir, import), &mut { clean })],
    );
    timed[0]
}

/// `latgen import` of the apps as a live setup on the domains Lattice assigned
/// ([`assigned_export`]), into a project with auth on, in rounds: each writes every
/// declaration and the lock anew.
fn measure_import_assigned(
    a: &Args,
    latgen_bin: &Path,
    apps: &[GenApp],
    n: usize,
    runs: usize,
) -> Measured {
    let dir = a.work.join(format!("n{n}-import-assigned"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    assigned_export::write_export(&dir, apps);
    std::fs::write(dir.join("latgen.yaml"), AUTH_SETTINGS).unwrap();
    let import = ["import", "workload", "gateway", "-o", "apps"];
    import_rounds(latgen_bin, &dir, &import, runs)
}

/// The settings of the runs with auth on: Kong calls from its VPC.
const AUTH_SETTINGS: &str = "auth:\n  mode: iam\n  account: \"111122223333\"\n  region: ap-northeast-2\n  kong: { vpcs: [vpc-0a1b2c3d4e5f67890] }\n  serviceNetworkPolicy: true\n";

/// The same apps with `auth.mode: iam`, every tenth naming two callers of its own (a role
/// with a method, an organization): render into an empty folder and check, in rounds.
fn measure_auth(
    a: &Args,
    latgen_bin: &Path,
    apps: &[GenApp],
    n: usize,
    runs: usize,
) -> [(Duration, Option<u64>); 2] {
    let dir = a.work.join(format!("n{n}-auth"));
    let _ = std::fs::remove_dir_all(&dir);
    let apps_dir = dir.join("apps");
    std::fs::create_dir_all(&apps_dir).unwrap();
    std::fs::write(dir.join("latgen.yaml"), AUTH_SETTINGS).unwrap();
    for (i, app) in apps.iter().enumerate() {
        let mut text = app.declaration();
        if i % 10 == 0 {
            text.push_str("callers:\n  - principals: [\"arn:aws:iam::111122223333:role/reports\"]\n    methods: [GET]\n  - orgs: [o-a1b2c3d4e5]\n");
        }
        std::fs::write(apps_dir.join(format!("{}.yaml", app.name)), text).unwrap();
    }
    render_and_check(&dir, latgen_bin, runs)
}

/// The settings of the runs with observability on: every part of it.
const OBSERVABILITY_SETTINGS: &str = "observability:\n  prometheus: { labels: { release: prom } }\n  accessLogs: { destinationArn: \"arn:aws:s3:::lattice-logs\" }\n";

/// The same apps with `observability:` on: render into an empty folder and check, in rounds.
fn measure_observability(
    a: &Args,
    latgen_bin: &Path,
    apps: &[GenApp],
    n: usize,
    runs: usize,
) -> [(Duration, Option<u64>); 2] {
    let dir = a.work.join(format!("n{n}-observability"));
    let _ = std::fs::remove_dir_all(&dir);
    let apps_dir = dir.join("apps");
    std::fs::create_dir_all(&apps_dir).unwrap();
    std::fs::write(dir.join("latgen.yaml"), OBSERVABILITY_SETTINGS).unwrap();
    for app in apps {
        let path = apps_dir.join(format!("{}.yaml", app.name));
        std::fs::write(path, app.declaration()).unwrap();
    }
    render_and_check(&dir, latgen_bin, runs)
}

/// Render into an empty folder and check, in rounds, in `dir`.
fn render_and_check(dir: &Path, latgen_bin: &Path, runs: usize) -> [(Duration, Option<u64>); 2] {
    let render = &["render", "apps", "-o", "generated"][..];
    let check = &["check", "apps", "-o", "generated"][..];
    let clean = {
        let dir = dir.to_path_buf();
        move || {
            let _ = std::fs::remove_dir_all(dir.join("generated"));
            let _ = std::fs::remove_file(dir.join("latgen.lock"));
        }
    };
    let timed = measure_rounds(
        runs,
        &mut [
            (&mut latgen(latgen_bin, dir, render), &mut { clean }),
            (&mut latgen(latgen_bin, dir, check), &mut || {}),
        ],
    );
    timed.try_into().expect("one result per command timed")
}

/// A maker of `latgen ARGS` commands run in `dir`, for [`measure`] and [`measure_rounds`].
fn latgen<'a>(bin: &'a Path, dir: &'a Path, args: &'a [&'a str]) -> impl FnMut() -> Command + 'a {
    move || {
        let mut c = Command::new(bin);
        c.args(args).current_dir(dir);
        c
    }
}

/// `helm template` of the same apps, into an empty folder each time.
fn measure_helm(
    dir: &Path,
    bin: &Path,
    chart: &Path,
    values: &Path,
    runs: usize,
) -> (Duration, Option<u64>) {
    let helm_out = dir.join("helm-out");
    let result = measure(
        runs,
        || {
            let mut c = Command::new(bin);
            c.arg("template")
                .arg("peer")
                .arg(chart)
                .arg("-f")
                .arg(values)
                .arg("--output-dir")
                .arg(&helm_out);
            c
        },
        &mut || {
            let _ = std::fs::remove_dir_all(&helm_out);
        },
    );
    // Helm's output is not part of the project that the check with a base commits.
    let _ = std::fs::remove_dir_all(&helm_out);
    result
}

/// Runs git in `dir`; the harness cannot go on when it fails.
fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// `latgen check --base HEAD` on a change of one app added, its Lattice half rendered: the
/// project committed, one path-routed app declared, `render --base HEAD` run once.
fn measure_base_check(dir: &Path, latgen_bin: &Path, runs: usize) -> (Duration, Option<u64>) {
    git(dir, &["init", "-q"]);
    for (key, value) in [
        ("user.name", "latgen bench"),
        ("user.email", "bench@example.com"),
        ("commit.gpgsign", "false"),
        // Git packs its loose objects after a large commit in a process of its own that
        // outlives the commit: at 100,000 apps it ran for about 20 s on both cores, through
        // every timed run that followed. In the foreground it is done before them (the
        // steps' commits run it too, at 10,000 apps and more).
        ("maintenance.autoDetach", "false"),
        ("gc.autoDetach", "false"),
    ] {
        git(dir, &["config", key, value]);
    }
    // One `add` of the whole tree: at 100,000 apps it holds 226,000 files.
    git(
        dir,
        &["add", "-A", "--", "apps", "generated", "latgen.lock"],
    );
    git(dir, &["commit", "-q", "-m", "base"]);
    // Packed at every size, not only where Git's own threshold of loose objects is passed:
    // the base is read from a pack, as on a CI runner's fresh clone.
    git(dir, &["gc", "--quiet"]);
    // No generated path starts with /bench, so the new app collides with none.
    let added = GenApp {
        name: "bench-added".into(),
        namespace: "team-00".into(),
        paths: vec!["/bench-added".into()],
        host: None,
        port: 8080,
    };
    std::fs::write(dir.join("apps/bench-added.yaml"), added.declaration()).unwrap();
    let step = Command::new(latgen_bin)
        .args(["render", "apps", "-o", "generated", "--base", "HEAD"])
        .current_dir(dir)
        .output()
        .expect("runs");
    let said =
        String::from_utf8_lossy(&step.stderr).into_owned() + &String::from_utf8_lossy(&step.stdout);
    assert!(
        step.status.success() && said.contains("step 1 of 2"),
        "render --base HEAD did not write the first of two steps: {said}"
    );
    let check = &["check", "apps", "-o", "generated", "--base", "HEAD"][..];
    let result = measure(runs, latgen(latgen_bin, dir, check), &mut || {});
    // Back to the base, for the steps of other changes.
    std::fs::remove_file(dir.join("apps/bench-added.yaml")).unwrap();
    result
}

/// How each command grows from one size to ten times it.
fn write_growth(md: &mut String, rows: &[Row]) {
    let _ = writeln!(md);
    for w in rows.windows(2).filter(|w| w[1].n == w[0].n * 10) {
        let _ = writeln!(
            md,
            "Growth: {} apps take {:.1}× the time of {} to render (empty output), {:.1}× to check, {:.1}× to check --base.",
            w[1].n,
            w[1].first.0.as_secs_f64() / w[0].first.0.as_secs_f64(),
            w[0].n,
            w[1].check.0.as_secs_f64() / w[0].check.0.as_secs_f64(),
            w[1].base_check.0.as_secs_f64() / w[0].base_check.0.as_secs_f64()
        );
    }
}

/// The `render --base` steps of a move and of a dispatch switch.
fn write_steps(md: &mut String, rows: &[Row]) {
    let _ = writeln!(
        md,
        "\nEach step `latgen render --base HEAD` writes, from the commit that holds the step before it (a one-app `latgen move` to a new group; setting `lattice.dispatch: header`, at 10,000 apps and fewer):\n"
    );
    let _ = writeln!(
        md,
        "| apps | render (empty output) | move steps | dispatch switch steps |"
    );
    let _ = writeln!(md, "|---:|---:|---|---|");
    let each = |steps: &[Measured]| match steps {
        [] => "not run".to_string(),
        _ => steps
            .iter()
            .map(|s| cell(*s))
            .collect::<Vec<_>>()
            .join(", "),
    };
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} |",
            r.n,
            cell(r.first),
            each(&r.steps.moved),
            each(&r.steps.switch)
        );
    }
}

/// Every command's peak memory at each size.
fn write_memory(md: &mut String, rows: &[Row]) {
    let _ = writeln!(md, "\nPeak memory (RSS) of each command:\n");
    let _ = writeln!(
        md,
        "| apps | render (empty output) | render (nothing changed) | check | check --base | render --base (move, largest step) |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let step = r.steps.moved.iter().filter_map(|s| s.1).max();
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} |",
            r.n,
            mb(r.first.1),
            mb(r.again.1),
            mb(r.check.1),
            mb(r.base_check.1),
            mb(step)
        );
    }
}

/// How the figures are made.
fn write_method(md: &mut String, a: &Args) {
    let _ = writeln!(md, "# Benchmarks\n");
    let _ = writeln!(
        md,
        "Regenerate with `bench/run.sh` (it fetches a real `helm` and runs `cargo run --release --example bench`). Generated by `examples/bench.rs`; do not edit by hand.\n"
    );
    let _ = writeln!(md, "## Method\n");
    let _ = writeln!(
        md,
        "- The harness generates N apps deterministically (about 8% on their own host, 1-3 unique paths each, many sharing string prefixes or nesting) and writes them twice: as latgen `apps/` files and as values for the Helm chart in `../shared/bench/helm-peer`, which packs the same apps into groups inside its templates."
    );
    let _ = writeln!(
        md,
        "- Both tools run as whole processes, side by side, in the same working folder (`{}`): `helm template peer CHART -f values.yaml --output-dir …` and `latgen render apps -o generated` (into an empty folder, then again with nothing changed), and `latgen check`. Each size's folders are removed once it is measured (and any an earlier run left, before the first): no size is measured beside another's files.",
        a.work.display()
    );
    let _ = writeln!(
        md,
        "- The I/O floor is what any tool writing this output must do: read every input file and write as many files, of the same sizes, as latgen writes (one object per file)."
    );
    let _ = writeln!(
        md,
        "- latgen renders its built-in templates without parsing the output back: a property test and a fuzz assertion verify that their output parses back into the typed objects. Custom templates (`--templates`), and any render with `--verify`, are still parsed back at run time; the last column of the stages table is the least that read-back would add: every output file parsed as YAML into nothing, on all cores.\n- `latgen check --base HEAD` is timed on a change of one app added, its Lattice half rendered: the size's folder is committed to Git, one path-routed app is added to `apps/`, `latgen render apps --base HEAD` writes the first of the two steps, and `latgen check apps --base HEAD` checks it. The commit is packed before any run is timed (`git gc`, and Git's automatic maintenance after later commits runs in the foreground), so the base is read from a pack, as on a CI runner's fresh clone, and no repack competes with the timed runs.\n- The machine is shared: the same run varies by about 15% from one minute to the next, so each figure is the median of several runs, and Helm and latgen are timed one after the other in the same sitting. A render into an empty folder, a render with nothing changed and a check are timed in rounds (one run of each per round), so that the comparison of check with render is made at the same moments.\n"
    );
}

/// The tables of figures and the growth lines.
/// A time and peak memory: "0.32 s / 54 MB".
fn cell((t, r): (Duration, Option<u64>)) -> String {
    format!("{} / {}", secs(t), mb(r))
}

/// What Argo CD would run on each side, per size.
fn write_consumer_results(md: &mut String, rows: &[Row]) {
    let _ = writeln!(
        md,
        "\nWhat Argo CD runs on each side's folder. The deploy kit makes each Application a directory source (plain manifests, the kustomization left out); its repo server then reads the folder file by file, which `bench/directory_read.py` does the same way (one process, libyaml). Through `kubectl kustomize` (kustomize v5.5), as an Application without `directory:` would detect and run, the same folders take far longer and grow superlinearly, so it is timed at 1,000 apps only:\n"
    );
    let _ = writeln!(
        md,
        "| apps | directory read, Lattice side | directory read, Kong side | kustomize build, Lattice side | kustomize build, Kong side |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|");
    for r in rows {
        let c = &r.consumer;
        let two = |v: Option<[Duration; 2]>, i: usize| v.map_or("not run".into(), |v| secs(v[i]));
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |",
            r.n,
            two(c.read, 0),
            two(c.read, 1),
            two(c.kustomize, 0),
            two(c.kustomize, 1)
        );
    }
}

/// The runs of a variant of the settings (`pick` gives a row's) beside those without,
/// under `intro`.
fn write_variant_results(
    md: &mut String,
    rows: &[Row],
    pick: fn(&Row) -> Option<[Measured; 2]>,
    intro: &str,
) {
    let with: Vec<(&Row, [Measured; 2])> =
        rows.iter().filter_map(|r| Some((r, pick(r)?))).collect();
    if with.is_empty() {
        return;
    }
    let _ = writeln!(md, "\n{intro}, the same apps:\n");
    let _ = writeln!(
        md,
        "| apps | latgen render (empty output) | without | latgen check | without |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|");
    for (r, [render, check]) in with {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |",
            r.n,
            cell(render),
            cell(r.first),
            cell(check),
            cell(r.check)
        );
    }
}

/// The runs with auth on, and with observability on.
fn write_variants(md: &mut String, rows: &[Row]) {
    write_variant_results(
        md,
        rows,
        |r| r.auth,
        "With `auth.mode: iam` (an IAMAuthPolicy beside every Lattice route; every tenth app names two callers of its own)",
    );
    write_variant_results(
        md,
        rows,
        |r| r.observability,
        "With `observability:` on (a PrometheusRule per Lattice service and one for the apps, Kong's Prometheus plugin named on every route, an AccessLogPolicy per Lattice route)",
    );
    write_environments(md, rows);
}

/// The runs with two environments, against one.
fn write_environments(md: &mut String, rows: &[Row]) {
    let with: Vec<(&Row, [Measured; 4])> = (rows.iter())
        .filter_map(|r| Some((r, r.environments?)))
        .collect();
    if with.is_empty() {
        return;
    }
    let _ = writeln!(
        md,
        "\nWith two environments (`environments/staging.yaml` with its own prefix and a rule quota of 8, `environments/production.yaml` with its own prefix), the same apps in each:\n"
    );
    let _ = writeln!(
        md,
        "| apps (each) | render --env all (empty output) | render --env production | check --env all | check --env production |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|");
    for (r, [render_all, check_all, render_one, check_one]) in with {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} |",
            r.n,
            cell(render_all),
            cell(render_one),
            cell(check_all),
            cell(check_one)
        );
    }
}

fn write_results(md: &mut String, a: &Args, rows: &[Row]) {
    let _ = writeln!(md, "## Results\n");
    let _ = writeln!(
        md,
        "Machine: {} cores, {}. Times are medians of {} runs (at most 3 at 100,000 apps), whole processes, wall clock; memory is peak RSS.\n",
        std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
        std::fs::read_to_string("/proc/cpuinfo")
            .ok()
            .and_then(
                |c| c.lines().find(|l| l.starts_with("model name")).map(|l| l
                    .split(':')
                    .nth(1)
                    .unwrap_or("")
                    .trim()
                    .to_string())
            )
            .unwrap_or_else(|| "unknown CPU".into()),
        a.runs
    );
    let _ = writeln!(
        md,
        "| apps | output files | `helm template` | latgen render (empty output) | speed-up | latgen render (nothing changed) | latgen check | latgen check --base (one app added) | I/O floor | render ÷ floor |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");

    for r in rows {
        let helm_cell = r.helm.map(cell).unwrap_or_else(|| "not run".into());
        let speedup = r
            .helm
            .map(|(t, _)| format!("{:.1}×", t.as_secs_f64() / r.first.0.as_secs_f64()))
            .unwrap_or_else(|| "–".into());
        let _ = writeln!(
            md,
            "| {} | {} | {helm_cell} | {} | {speedup} | {} | {} | {} | {} | {:.1}× |",
            r.n,
            r.files,
            cell(r.first),
            cell(r.again),
            cell(r.check),
            cell(r.base_check),
            secs(r.floor),
            r.first.0.as_secs_f64() / r.floor.as_secs_f64()
        );
    }
    let _ = writeln!(
        md,
        "\nlatgen's stages in-process (empty output folder), and in the last column what a run-time typed read-back (`--verify`, custom templates) would add at least:\n"
    );
    let _ = writeln!(
        md,
        "| apps | load | validate + plan | render (the templates; no read-back for built-in ones) | write | parsing the output as YAML, all cores |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} |",
            r.n,
            secs(r.stages.load),
            secs(r.stages.plan),
            secs(r.stages.render),
            secs(r.stages.write),
            secs(r.parse),
        );
    }
    write_steps(md, rows);
    write_memory(md, rows);
    write_variants(md, rows);
    write_consumer_results(md, rows);
    write_growth(md, rows);
}
