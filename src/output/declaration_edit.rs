//! One environment's override of a declaration carried to another (`promote --apply`), as
//! an edit of the declaration's text: every line it does not carry stays as written
//! (comments, order, quoting), so the PR shows the change and nothing else.
//!
//! Only block style is edited (`overrides:` with one key per line, as `latgen import` and
//! the book write it); a flow mapping (`overrides: {staging: …}`) is left for the user.

use serde_json::Value;

/// A mapping entry: its key and the lines `start..end` it spans, from the key's line to its
/// value's last line (comments and blank lines after it excluded).
#[derive(Debug, Clone)]
struct Entry {
    key: String,
    start: usize,
    end: usize,
    indent: usize,
}

/// An environment's entry under `overrides:`, and the entries of its fields.
type EnvEntry = (Entry, Vec<Entry>);

/// A declaration with an override carried.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Carried {
    /// Every environment the app runs in now has the field alike: it became the
    /// declaration's own, and the overrides of it were removed. Else the target
    /// environment got the source's override of the field.
    pub folded: bool,
    /// The declaration's new text.
    pub text: String,
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn is_content(line: &str) -> bool {
    let t = line.trim();
    !t.is_empty() && !t.starts_with('#')
}

/// The entries of the block mapping indented `indent` within `lines[from..to]`.
fn entries(lines: &[&str], (from, to): (usize, usize), indent: usize) -> Vec<Entry> {
    let mut out: Vec<Entry> = Vec::new();
    for (i, line) in lines.iter().enumerate().take(to).skip(from) {
        if !is_content(line) {
            continue;
        }
        let at = indent_of(line);
        let item = line.trim_start().starts_with("- ") || line.trim() == "-";
        let inside = at > indent || (at == indent && item);
        if inside {
            if let Some(last) = out.last_mut() {
                last.end = i + 1;
            }
            continue;
        }
        let key = line.trim().split(':').next().unwrap_or_default();
        out.push(Entry {
            key: key.trim_matches(['"', '\'']).to_string(),
            start: i,
            end: i + 1,
            indent: at,
        });
    }
    out
}

/// The entries of the block mapping that is `entry`'s value.
fn children(lines: &[&str], entry: &Entry) -> Result<Vec<Entry>, String> {
    let rest = lines[entry.start]
        .split_once(':')
        .map_or("", |(_, r)| r)
        .trim();
    if !rest.is_empty() && !rest.starts_with('#') {
        return Err(format!(
            "`{}` is written on one line; carry it by hand, or write it as a block",
            entry.key
        ));
    }
    let first = (entry.start + 1..entry.end).find(|i| is_content(lines[*i]));
    Ok(first.map_or_else(Vec::new, |f| {
        entries(lines, (f, entry.end), indent_of(lines[f]))
    }))
}

fn find<'a>(entries: &'a [Entry], key: &str) -> Option<&'a Entry> {
    entries.iter().find(|e| e.key == key)
}

/// An entry's lines, indented `to` columns (its own lines' indentation kept under it).
fn reindent(lines: &[&str], entry: &Entry, to: usize) -> Vec<String> {
    (entry.start..entry.end)
        .map(|i| {
            let line = lines[i];
            if line.trim().is_empty() {
                return String::new();
            }
            let kept = line
                .get(entry.indent.min(indent_of(line))..)
                .unwrap_or(line);
            format!("{}{kept}", " ".repeat(to))
        })
        .collect()
}

/// The value of `field` as environment `env` has it: its override's, else the
/// declaration's own; None when neither sets it.
fn value_in(
    lines: &[&str],
    (top, envs): (&[Entry], &[EnvEntry]),
    field: &str,
    env: &str,
) -> Option<Value> {
    let over = envs.iter().find(|(e, _)| e.key == env);
    let entry = over
        .and_then(|(_, f)| find(f, field))
        .or_else(|| find(top, field))?;
    Some(value_of(lines, entry))
}

/// An entry's value, as YAML reads it: two entries alike but for their comments, quoting
/// or style are alike. Text that does not read is compared as text.
fn value_of(lines: &[&str], entry: &Entry) -> Value {
    let text = reindent(lines, entry, 0).join("\n");
    match serde_saphyr::from_str::<Value>(&text) {
        Ok(v) => v,
        Err(_) => Value::String(text),
    }
}

/// The first line of an entry with the comment lines right above it, which describe it.
fn with_comments_above(lines: &[&str], entry: &Entry) -> usize {
    let mut start = entry.start;
    while start > 0 {
        let line = lines[start - 1];
        let comment = line.trim_start().starts_with('#') && indent_of(line) >= entry.indent;
        if !comment {
            break;
        }
        start -= 1;
    }
    start
}

/// Carries environment `from`'s override of `field` to `to` in the declaration `text`,
/// the app running in `running`. None when `from` does not override it or `to` has it
/// alike already.
pub(crate) fn carry(
    text: &str,
    field: &str,
    (from, to): (&str, &str),
    running: &[String],
) -> Result<Option<Carried>, String> {
    let lines: Vec<&str> = text.lines().collect();
    let top_indent = lines
        .iter()
        .find(|l| is_content(l))
        .map_or(0, |l| indent_of(l));
    let top = entries(&lines, (0, lines.len()), top_indent);
    let Some(overrides) = find(&top, "overrides") else {
        return Ok(None);
    };
    let envs: Vec<EnvEntry> = children(&lines, overrides)?
        .into_iter()
        .map(|e| children(&lines, &e).map(|f| (e, f)))
        .collect::<Result<_, _>>()?;
    let Some((src_env, src_fields)) = envs.iter().find(|(e, _)| e.key == from) else {
        return Ok(None);
    };
    let Some(src) = find(src_fields, field) else {
        return Ok(None);
    };
    let wanted = value_of(&lines, src);
    let at = |env: &str| value_in(&lines, (&top, &envs), field, env);
    if at(to).as_ref() == Some(&wanted) {
        return Ok(None);
    }
    let others_alike = (running.iter())
        .filter(|e| *e != from && *e != to)
        .all(|e| at(e).as_ref() == Some(&wanted));
    let mut edit = Edit::default();
    if others_alike {
        fold(&lines, (&top, overrides, &envs), (src, field), &mut edit);
    } else {
        copy(&lines, &envs, (src_env, src), to, &mut edit);
    }
    let newline = if text.contains("\r\n") { "\r\n" } else { "\n" };
    Ok(Some(Carried {
        folded: others_alike,
        text: edit.apply(&lines, newline, text.ends_with('\n')),
    }))
}

/// Line edits: each replaces the lines `start..end` (none: an insertion at `start`).
#[derive(Default)]
struct Edit {
    changes: Vec<(usize, usize, Vec<String>)>,
}

impl Edit {
    fn replace(&mut self, (start, end): (usize, usize), with: Vec<String>) {
        self.changes.push((start, end, with));
    }

    fn apply(mut self, lines: &[&str], newline: &str, newline_at_end: bool) -> String {
        // From the bottom up, so that each edit's line numbers still hold.
        self.changes.sort_by_key(|c| std::cmp::Reverse((c.0, c.1)));
        let mut out: Vec<String> = lines.iter().map(|l| l.to_string()).collect();
        for (start, end, with) in self.changes {
            out.splice(start..end, with);
        }
        let mut text = out.join(newline);
        if newline_at_end {
            text.push_str(newline);
        }
        text
    }
}

/// The field becomes the declaration's own, with the source's value, and no environment
/// overrides it any more; an override left empty goes, and `overrides:` with it.
fn fold(
    lines: &[&str],
    (top, overrides, envs): (&[Entry], &Entry, &[EnvEntry]),
    (src, field): (&Entry, &str),
    edit: &mut Edit,
) {
    let top_indent = overrides.indent;
    let own = reindent(lines, src, top_indent);
    let emptied: Vec<&Entry> = (envs.iter())
        .filter(|(_, f)| f.iter().all(|e| e.key == field))
        .map(|(e, _)| e)
        .collect();
    let all_emptied = emptied.len() == envs.len();
    let above = |e: &Entry| with_comments_above(lines, e);
    match find(top, field) {
        Some(base) => edit.replace((base.start, base.end), own),
        None => edit.replace((above(overrides), above(overrides)), own),
    }
    if all_emptied {
        edit.replace((above(overrides), overrides.end), Vec::new());
        return;
    }
    for (env, fields) in envs {
        if emptied.iter().any(|e| e.start == env.start) {
            edit.replace((above(env), env.end), Vec::new());
        } else if let Some(f) = find(fields, field) {
            edit.replace((above(f), f.end), Vec::new());
        }
    }
}

/// The target environment gets the source's override of the field: in its override, in
/// place of its own value of it, or in a new override after the source's.
fn copy(
    lines: &[&str],
    envs: &[EnvEntry],
    (src_env, src): (&Entry, &Entry),
    to: &str,
    edit: &mut Edit,
) {
    match envs.iter().find(|(e, _)| e.key == to) {
        Some((env, fields)) => {
            let indent = fields.first().map_or(src.indent, |f| f.indent);
            let value = reindent(lines, src, indent);
            match find(fields, &src.key) {
                Some(f) => edit.replace((f.start, f.end), value),
                None => edit.replace((env.end, env.end), value),
            }
        }
        None => {
            let mut block = vec![format!("{}{to}:", " ".repeat(src_env.indent))];
            block.extend(reindent(lines, src, src.indent));
            let after = envs.iter().map(|(e, _)| e.end).max().unwrap_or(src_env.end);
            edit.replace((after, after), block);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const BLOG: &str = "namespace: blog\nservice: {name: blog-web, port: 8080}\n# the blog's paths\npaths:\n  - /blog\noverrides:\n  staging:\n    # tried in staging first\n    paths:\n      - /blog\n      - /journal\n";

    fn envs(names: &[&str]) -> Vec<String> {
        names.iter().map(|n| n.to_string()).collect()
    }

    #[test]
    fn a_path_change_carried_to_the_last_environment_becomes_the_declarations_own() {
        let got = carry(
            BLOG,
            "paths",
            ("staging", "production"),
            &envs(&["staging", "production"]),
        );
        let want = "namespace: blog\nservice: {name: blog-web, port: 8080}\n# the blog's paths\npaths:\n  - /blog\n  - /journal\n";
        assert_eq!(
            got,
            Ok(Some(Carried {
                folded: true,
                text: want.to_string()
            }))
        );
    }

    #[test]
    fn a_path_change_carried_while_another_environment_keeps_the_old_is_copied() {
        let running = envs(&["dev", "staging", "production"]);
        let got = carry(BLOG, "paths", ("staging", "production"), &running);
        let want = format!("{BLOG}  production:\n    paths:\n      - /blog\n      - /journal\n");
        assert_eq!(
            got,
            Ok(Some(Carried {
                folded: false,
                text: want
            }))
        );
    }

    #[test]
    fn an_override_the_target_has_alike_carries_nothing() {
        let text = format!("{BLOG}  production:\n    paths:\n      - /blog\n      - /journal\n");
        let running = envs(&["dev", "staging", "production"]);
        assert_eq!(
            carry(&text, "paths", ("staging", "production"), &running),
            Ok(None)
        );
    }

    #[test]
    fn a_field_the_source_does_not_override_carries_nothing() {
        let running = envs(&["staging", "production"]);
        assert_eq!(
            carry(BLOG, "host", ("staging", "production"), &running),
            Ok(None)
        );
    }

    #[test]
    fn other_fields_of_the_source_override_stay() {
        let text = "paths: [/blog]\noverrides:\n  staging:\n    host: blog.staging.example.com\n    paths: [/blog, /journal]\n";
        let running = envs(&["staging", "production"]);
        let want = "paths: [/blog, /journal]\noverrides:\n  staging:\n    host: blog.staging.example.com\n";
        let got = carry(text, "paths", ("staging", "production"), &running);
        assert_eq!(
            got,
            Ok(Some(Carried {
                folded: true,
                text: want.to_string()
            }))
        );
    }

    #[test]
    fn an_override_alike_but_for_its_style_carries_nothing() {
        let text = format!("{BLOG}  production:\n    paths: [/blog, /journal]  # as staging\n");
        let running = envs(&["dev", "staging", "production"]);
        assert_eq!(
            carry(&text, "paths", ("staging", "production"), &running),
            Ok(None)
        );
    }

    #[test]
    fn a_declaration_with_crlf_keeps_its_line_ends() {
        let text = BLOG.replace('\n', "\r\n");
        let running = envs(&["staging", "production"]);
        let got = carry(&text, "paths", ("staging", "production"), &running).unwrap();
        let text = got.unwrap().text;
        assert!(!text.replace("\r\n", "").contains('\n'), "{text:?}");
    }

    #[test]
    fn overrides_on_one_line_are_left_to_the_user() {
        let text = "paths: [/blog]\noverrides: {staging: {paths: [/journal]}}\n";
        let running = envs(&["staging", "production"]);
        assert!(carry(text, "paths", ("staging", "production"), &running).is_err());
    }
}
