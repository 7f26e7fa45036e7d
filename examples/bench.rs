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

use latgen::load::ProjectPaths;
use latgen::render::Templates;

// The input generator, shared with the tests that check output at the benchmark's sizes.
#[path = "../bench/generate.rs"]
mod generate;
use generate::{GenApp, generate};

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
        runs: 5,
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
    let gnu_time = Path::new("/usr/bin/time").exists();
    let mut times = Vec::new();
    let mut rss = None;
    for _ in 0..runs {
        before();
        let cmd = make();
        let mut full = if gnu_time {
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
        times.push(start.elapsed());
        assert!(
            out.status.success(),
            "{:?} failed: {}",
            full,
            String::from_utf8_lossy(&out.stderr)
        );
        let err = String::from_utf8_lossy(&out.stderr);
        if let Some(kb) = err
            .lines()
            .find_map(|l| l.strip_prefix("LATGEN_BENCH_RSS="))
            .and_then(|v| v.trim().parse::<u64>().ok())
        {
            rss = Some(rss.map_or(kb, |r: u64| r.max(kb)));
        }
    }
    (median(times), rss)
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

struct Row {
    n: usize,
    files: usize,
    stages: Stages,
    first: (Duration, Option<u64>),
    again: (Duration, Option<u64>),
    /// Files the runs with nothing changed wrote (by modification time).
    touched: usize,
    check: (Duration, Option<u64>),
    floor: Duration,
    parse: Duration,
    helm: Option<(Duration, Option<u64>)>,
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
    let loaded = latgen::load::load(&paths, &mut diags);
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
    let lock = latgen::output::LockFile {
        path: &paths.lock,
        text: latgen::lock::serialize(&plan.lock),
    };
    latgen::output::sync(
        &out,
        &existing,
        std::borrow::Cow::Owned(output),
        Some(lock),
        |_| true,
        latgen::output::Mode::Write,
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

/// The targets of the issue that asked for this harness, each against its figure.
fn targets(md: &mut String, rows: &[Row]) {
    let Some(r) = rows.iter().find(|r| r.n == 10_000) else {
        return;
    };
    let yes = |ok: bool| if ok { "met" } else { "**not met**" };
    let _ = writeln!(md, "\n## Targets (10,000 apps)\n");
    let _ = writeln!(md, "| target | measured | |");
    let _ = writeln!(md, "|---|---|---|");
    if let Some((helm, _)) = r.helm {
        let x = helm.as_secs_f64() / r.first.0.as_secs_f64();
        let _ = writeln!(
            md,
            "| render at least 10× faster than `helm template` | {x:.1}× ({} against {}) | {} |",
            secs(r.first.0),
            secs(helm),
            yes(x >= 10.0)
        );
    }
    let x = r.first.0.as_secs_f64() / r.floor.as_secs_f64();
    let _ = writeln!(
        md,
        "| render within 3× of the I/O floor | {x:.1}× ({} against {}) | {} |",
        secs(r.first.0),
        secs(r.floor),
        yes(x <= 3.0)
    );
    let rss = [r.first.1, r.again.1].into_iter().flatten().max();
    let _ = writeln!(
        md,
        "| render's peak RSS under 100 MB | {} | {} |",
        mb(rss),
        yes(rss.is_some_and(|k| k < 100 * 1024))
    );
    let _ = writeln!(
        md,
        "| check no slower than render | {} against {} | {} |",
        secs(r.check.0),
        secs(r.first.0),
        yes(r.check.0 <= r.first.0)
    );
    if let Some(big) = rows.iter().find(|b| b.n == 100_000) {
        let x = big.first.0.as_secs_f64() / r.first.0.as_secs_f64();
        let _ = writeln!(
            md,
            "| 100,000 apps render in at most 12× the time of 10,000 | {x:.1}× | {} |",
            yes(x <= 12.0)
        );
    }
    let _ = writeln!(
        md,
        "| re-render with nothing changed writes no file | {} files written | {} |",
        r.touched,
        yes(r.touched == 0)
    );
    if let Some((helm, _)) = r.helm {
        let least = r.floor + r.parse;
        let _ = writeln!(
            md,
            "\nAny render that writes this output and parses it back needs at least the I/O floor plus the parse of the output: {} + {} = {}, at most {:.1}× faster than `helm template` before it renders a single template.",
            secs(r.floor),
            secs(r.parse),
            secs(least),
            helm.as_secs_f64() / least.as_secs_f64()
        );
    }
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
    let rows: Vec<Row> = a
        .sizes
        .iter()
        .map(|&n| {
            let row = measure_size(&a, &latgen_bin, helm.as_ref(), n);
            let _ = std::fs::remove_dir_all(a.work.join(format!("n{n}")).join("helm-out"));
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
    let render = |dir: PathBuf| {
        let bin = latgen_bin.to_path_buf();
        move || {
            let mut c = Command::new(&bin);
            c.args(["render", "apps", "-o", "generated"])
                .current_dir(&dir);
            c
        }
    };
    let clean = {
        let dir = dir.clone();
        move || {
            let _ = std::fs::remove_dir_all(dir.join("generated"));
            let _ = std::fs::remove_file(dir.join("latgen.lock"));
        }
    };
    let first = measure(runs, render(dir.clone()), &mut { clean });
    let before = mtimes(&out);
    let again = measure(runs, render(dir.clone()), &mut || {});
    let after = mtimes(&out);
    let touched = before.iter().zip(&after).filter(|(b, a)| b != a).count()
        + before.len().abs_diff(after.len());
    let check = measure(
        runs,
        {
            let (bin, dir) = (latgen_bin.to_path_buf(), dir.clone());
            move || {
                let mut c = Command::new(&bin);
                c.args(["check", "apps", "-o", "generated"])
                    .current_dir(&dir);
                c
            }
        },
        &mut || {},
    );
    let floor = io_floor(&dir.join("apps"), &out, runs, &dir.join("floor"));
    let parse = parse_floor(&out, runs);
    let helm_result = helm.as_ref().map(|(bin, chart)| {
        let helm_out = dir.join("helm-out");
        measure(
            runs,
            || {
                let mut c = Command::new(bin);
                c.arg("template")
                    .arg("peer")
                    .arg(chart)
                    .arg("-f")
                    .arg(&values)
                    .arg("--output-dir")
                    .arg(&helm_out);
                c
            },
            &mut || {
                let _ = std::fs::remove_dir_all(&helm_out);
            },
        )
    });
    Row {
        n,
        files,
        stages: st,
        first,
        again,
        touched,
        check,
        floor,
        parse,
        helm: helm_result,
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
        "- Both tools run as whole processes, side by side, in the same working folder (`{}`): `helm template peer CHART -f values.yaml --output-dir …` and `latgen render apps -o generated` (into an empty folder, then again with nothing changed), and `latgen check`.",
        a.work.display()
    );
    let _ = writeln!(
        md,
        "- The I/O floor is what any tool writing this output must do: read every input file and write as many files, of the same sizes, as latgen writes (one object per file)."
    );
    let _ = writeln!(
        md,
        "- latgen parses every document it renders back into its typed object before writing; that read-back is most of `render + typed read-back` below. The last column of that table is the least it can cost: every output file parsed as YAML into nothing, on all cores.\n- The machine is shared: the same run varies by about 15% from one minute to the next, so each figure is the median of several runs, and Helm and latgen are timed one after the other in the same sitting.\n"
    );
}

/// The tables of figures and the growth lines.
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
        "| apps | output files | `helm template` | latgen render (empty output) | speed-up | latgen render (nothing changed) | latgen check | I/O floor | render ÷ floor |"
    );
    let _ = writeln!(md, "|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    let cell = |(t, r): (Duration, Option<u64>)| format!("{} / {}", secs(t), mb(r));
    for r in rows {
        let helm_cell = r.helm.map(cell).unwrap_or_else(|| "not run".into());
        let speedup = r
            .helm
            .map(|(t, _)| format!("{:.1}×", t.as_secs_f64() / r.first.0.as_secs_f64()))
            .unwrap_or_else(|| "–".into());
        let _ = writeln!(
            md,
            "| {} | {} | {helm_cell} | {} | {speedup} | {} | {} | {} | {:.1}× |",
            r.n,
            r.files,
            cell(r.first),
            cell(r.again),
            cell(r.check),
            secs(r.floor),
            r.first.0.as_secs_f64() / r.floor.as_secs_f64()
        );
    }
    let _ = writeln!(
        md,
        "\nlatgen's stages in-process (empty output folder), and what parsing the output alone costs:\n"
    );
    let _ = writeln!(
        md,
        "| apps | load | validate + plan | render + typed read-back | write | parsing the output as YAML, all cores |"
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
    let _ = writeln!(md);
    for w in rows.windows(2).filter(|w| w[1].n == w[0].n * 10) {
        let _ = writeln!(
            md,
            "Growth: {} apps take {:.1}× the time of {} to render (empty output), {:.1}× to check.",
            w[1].n,
            w[1].first.0.as_secs_f64() / w[0].first.0.as_secs_f64(),
            w[0].n,
            w[1].check.0.as_secs_f64() / w[0].check.0.as_secs_f64()
        );
    }
}
