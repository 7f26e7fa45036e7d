//! Where a setting is written in `latgen.yaml`, for findings about settings: the settings
//! are read into plain types (no positions), so the text is read a second time, keeping
//! only each key's place. Only findings need it, so it is read only when there is one.

use std::path::Path;

use serde::de::{self, Deserialize, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

use crate::diag::Span;

/// A YAML node: a mapping keeps its keys, where each key is written and where each value
/// starts; anything else is a leaf.
#[derive(Debug)]
enum Node {
    Map(Vec<(Spanned<Key>, Spanned<Node>)>),
    Leaf,
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct NodeVisitor;

        impl<'de> Visitor<'de> for NodeVisitor {
            type Value = Node;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("any YAML value")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
                let mut entries = Vec::new();
                while let Some(key) = map.next_key::<Spanned<Key>>()? {
                    let value = map.next_value::<Spanned<Node>>()?;
                    entries.push((key, value));
                }
                Ok(Node::Map(entries))
            }

            fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Node::Leaf)
            }

            fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
                Ok(Node::Leaf)
            }

            fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }

            fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }

            fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
                Ok(Node::Leaf)
            }

            fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
                Ok(Node::Leaf)
            }

            fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Leaf)
            }

            fn visit_none<E: de::Error>(self) -> Result<Node, E> {
                Ok(Node::Leaf)
            }

            fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Node, D::Error> {
                Node::deserialize(d)
            }
        }

        deserializer.deserialize_any(NodeVisitor)
    }
}

/// A mapping key of any scalar kind, as text (a key that is not text names no setting).
#[derive(Debug)]
struct Key(String);

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;

        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a mapping key")
            }

            fn visit_str<E: de::Error>(self, v: &str) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }

            fn visit_bool<E: de::Error>(self, v: bool) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }

            fn visit_i64<E: de::Error>(self, v: i64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }

            fn visit_u64<E: de::Error>(self, v: u64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }

            fn visit_f64<E: de::Error>(self, v: f64) -> Result<Key, E> {
                Ok(Key(v.to_string()))
            }

            fn visit_unit<E: de::Error>(self) -> Result<Key, E> {
                Ok(Key(String::new()))
            }
        }

        deserializer.deserialize_any(KeyVisitor)
    }
}

/// The places of the settings in one `latgen.yaml`, and in the overlay of the environment
/// they are read for (`environments/<name>.yaml`), where a setting it gives is written.
#[derive(Debug)]
pub(crate) struct Places {
    file: std::path::PathBuf,
    root: Option<Node>,
    overlay: Option<Box<Places>>,
}

impl Places {
    /// The places of `config`'s settings: latgen.yaml (`file`, its `text`) and, for an
    /// environment, its overlay first.
    pub fn settings(
        config: &crate::input::config::Config,
        file: &Path,
        text: Option<&str>,
    ) -> Places {
        let mut places = Places::read(file, text);
        if let Some(env) = &config.environment {
            places.overlay = Some(Box::new(Places::read(&env.overlay, Some(&env.text))));
        }
        places
    }

    /// The overlay's places when it writes the setting at `path`.
    fn in_overlay(&self, path: &[&str]) -> Option<&Places> {
        self.overlay.as_deref().filter(|o| o.is_written(path))
    }

    /// Reads the places from the file's text; a text that is not a mapping (or no file)
    /// places every setting at the file itself.
    pub fn read(file: &Path, text: Option<&str>) -> Places {
        let root = text.and_then(|t| serde_saphyr::from_str::<Node>(t).ok());
        Places {
            file: file.to_path_buf(),
            root,
            overlay: None,
        }
    }

    /// Where the setting at `path` (`["kong", "protocol"]`) is written: its value, or,
    /// when it is not written (it has its default), the nearest section that is, or the
    /// file.
    pub fn of(&self, path: &[&str]) -> Span {
        if let Some(o) = self.in_overlay(path) {
            return o.of(path);
        }
        let mut node = self.root.as_ref();
        let mut span = Span::file(&self.file);
        for key in path {
            let Some(Node::Map(entries)) = node else {
                break;
            };
            let Some((_, value)) = find(entries, key) else {
                break;
            };
            span = Span::at(&self.file, &value.referenced);
            node = Some(&value.value);
        }
        span
    }

    /// Whether the setting at `path` is written in the file (rather than defaulted).
    pub fn is_written(&self, path: &[&str]) -> bool {
        if self.in_overlay(path).is_some() {
            return true;
        }
        let mut node = self.root.as_ref();
        for key in path {
            let Some(Node::Map(entries)) = node else {
                return false;
            };
            match find(entries, key) {
                Some((_, value)) => node = Some(&value.value),
                None => return false,
            }
        }
        true
    }

    /// Where the key of the setting or section at `path` is written (`lattice:` rather
    /// than the first setting under it, where [`Places::of`] places a section): the line
    /// to add a setting under. None when it is not written.
    pub fn key_of(&self, path: &[&str]) -> Option<Span> {
        if let Some(o) = self.in_overlay(path) {
            return o.key_of(path);
        }
        let (last, parents) = path.split_last()?;
        let mut node = self.root.as_ref();
        for key in parents {
            let Some(Node::Map(entries)) = node else {
                return None;
            };
            node = Some(&find(entries, key)?.1.value);
        }
        let Some(Node::Map(entries)) = node else {
            return None;
        };
        let (key, _) = find(entries, last)?;
        Some(Span::at(&self.file, &key.referenced))
    }
}

fn find<'a>(
    entries: &'a [(Spanned<Key>, Spanned<Node>)],
    key: &str,
) -> Option<&'a (Spanned<Key>, Spanned<Node>)> {
    entries.iter().find(|(k, _)| k.value.0 == key)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &str = "\
# settings
lattice:
  gateway: { name: lattice-gateway, sectionName: http }
  namespace: lattice-groups
kong:
  protocol: https
  hostnames: [a.example.com]
";

    #[test]
    fn places_values_in_block_and_flow_mappings() {
        let p = Places::read(Path::new("latgen.yaml"), Some(TEXT));
        let at = |path: &[&str]| {
            let s = p.of(path);
            (s.line, s.column)
        };
        assert_eq!(at(&["kong", "protocol"]), (6, 13));
        assert_eq!(at(&["lattice", "gateway", "sectionName"]), (3, 50));
        assert_eq!(at(&["lattice", "namespace"]), (4, 14));
        // Not written: the nearest section that is, or the file.
        assert_eq!(at(&["kong", "port"]), at(&["kong"]));
        assert_eq!(at(&["kong"]).0, 6);
        assert_eq!(at(&["deploy", "repoURL"]), (0, 0));
        assert!(p.is_written(&["kong", "hostnames"]));
        assert!(!p.is_written(&["kong", "port"]));
        // A key's own place: a section's line, not its first setting's.
        let key = |path: &[&str]| p.key_of(path).map(|s| (s.line, s.column));
        assert_eq!(key(&["lattice"]), Some((2, 1)));
        assert_eq!(key(&["lattice", "gateway", "sectionName"]), Some((3, 37)));
        assert_eq!(key(&["kong", "port"]), None);
        assert_eq!(key(&["deploy"]), None);
    }

    #[test]
    fn no_file_or_no_mapping_places_at_the_file() {
        for text in [None, Some("- a\n- b\n"), Some("{")] {
            let p = Places::read(Path::new("latgen.yaml"), text);
            assert_eq!(p.of(&["kong", "protocol"]), Span::file("latgen.yaml"));
        }
    }
}
