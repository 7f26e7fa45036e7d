use std::time::Instant;
fn main() {
    let dir = std::path::PathBuf::from(std::env::args().nth(1).unwrap());
    let paths = latgen::load::ProjectPaths::at_root(&dir);
    let t = Instant::now();
    let mut diags = latgen::diag::Diagnostics::new();
    let loaded = latgen::load::load(&paths, &mut diags);
    let t_load = t.elapsed();
    let t = Instant::now();
    let apps = latgen::validate::validate(&loaded, &paths.config, &mut diags);
    let t_val = t.elapsed();
    let t = Instant::now();
    let plan = latgen::plan::plan(&apps, &loaded.lock, &paths.lock, &loaded.config, &mut diags);
    let t_plan = t.elapsed();
    let templates = latgen::render::Templates::load(None).unwrap();
    let t = Instant::now();
    let out = latgen::render::render(&plan, &apps, &loaded.config, &templates).unwrap();
    let t_render = t.elapsed();
    let t = Instant::now();
    let before = latgen::write::read_tree(&dir.join("generated")).unwrap();
    let t_read = t.elapsed();
    let t = Instant::now();
    let q = latgen::check::quota_during_change(&before, &out.files, 10, &dir);
    let c = latgen::check::priority_churn(&before, &out.files, &dir);
    let t_q = t.elapsed();
    let t = Instant::now();
    let ch = latgen::write::changes(&dir.join("generated"), &before, &out, &[]).unwrap();
    let t_ch = t.elapsed();
    eprintln!(
        "load {:?} validate {:?} plan {:?} render {:?} read_out {:?} quota+churn {:?} changes {:?} ({} {} {})",
        t_load,
        t_val,
        t_plan,
        t_render,
        t_read,
        t_q,
        t_ch,
        q.len(),
        c.len(),
        ch.len()
    );
}
