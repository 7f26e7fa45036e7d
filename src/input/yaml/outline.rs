//! The outline of a YAML document: its nodes in order, each with its parent, its key and
//! where it starts, read with the parser serde-saphyr itself uses. Built only to explain a
//! problem (a syntax error, a misplaced key, the field a bad value belongs to), or to look
//! at how a scalar was written (quoted or not), which the typed reader does not keep.

use std::borrow::Cow;

use serde_saphyr::granit_parser::{
    ErrorKind, Event, Parser, ScalarStyle, ScanError, StructureStyle,
};

/// What a node is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Shape<'a> {
    Scalar {
        text: Cow<'a, str>,
        quoted: bool,
    },
    Mapping {
        block: bool,
    },
    Sequence {
        block: bool,
    },
    /// An alias (`*name`): its target is elsewhere.
    Alias,
}

/// One node of the document.
#[derive(Debug, Clone)]
pub(crate) struct Node<'a> {
    pub shape: Shape<'a>,
    /// The mapping or sequence the node is in.
    pub parent: Option<usize>,
    /// For a node that is a mapping's value: its key, when the key is a scalar.
    pub key: Option<Cow<'a, str>>,
    /// Whether the node is a mapping's key.
    pub is_key: bool,
    /// Where the node starts (1-based line and column).
    pub line: u32,
    pub column: u32,
    /// For a mapping or a sequence: where it ended, when it did before the parser stopped.
    pub end: Option<(u32, u32)>,
}

/// Where the parser stopped on a syntax error.
#[derive(Debug, Clone)]
pub(crate) struct SyntaxError {
    /// What the parser expected or found.
    pub what: String,
    pub line: u32,
    pub column: u32,
    /// The mappings and sequences still open there, outermost first.
    pub open: Vec<usize>,
}

/// A document's nodes, in order, and the syntax error that stopped the parser, if one did.
#[derive(Debug, Default)]
pub(crate) struct Outline<'a> {
    pub nodes: Vec<Node<'a>>,
    pub error: Option<SyntaxError>,
}

/// A mapping or sequence being read.
struct Open {
    node: usize,
    is_mapping: bool,
    /// In a mapping: the next node is a key.
    expect_key: bool,
    /// In a mapping: the key of the value that comes next.
    key: Option<Cow<'static, str>>,
}

impl<'a> Outline<'a> {
    /// Reads `text` (its first document) into an outline.
    pub fn of(text: &'a str) -> Outline<'a> {
        let mut outline = Outline::default();
        let mut open: Vec<Open> = Vec::new();
        for event in Parser::new_from_str(text) {
            let (event, span) = match event {
                Ok(e) => e,
                // The parser's nesting limit is not a syntax error: the typed reader's
                // own finding says more.
                Err(e) if matches!(e.kind(), ErrorKind::RecursionLimitExceeded) => break,
                Err(e) => {
                    outline.error = Some(syntax_error(&e, &open));
                    break;
                }
            };
            let (line, column) = (span.start.line() as u32, span.start.col() as u32 + 1);
            let shape = match event {
                Event::Scalar(text, style, ..) => Shape::Scalar {
                    text,
                    quoted: matches!(style, ScalarStyle::SingleQuoted | ScalarStyle::DoubleQuoted),
                },
                Event::MappingStart(style, ..) => Shape::Mapping {
                    block: style == StructureStyle::Block,
                },
                Event::SequenceStart(style, ..) => Shape::Sequence {
                    block: style == StructureStyle::Block,
                },
                Event::Alias(..) => Shape::Alias,
                Event::MappingEnd | Event::SequenceEnd => {
                    if let Some(o) = open.pop() {
                        outline.nodes[o.node].end = Some((line, column));
                    }
                    continue;
                }
                Event::DocumentEnd => break,
                _ => continue,
            };
            outline.push(shape, line, column, &mut open);
        }
        outline
    }

    /// Adds a node where the open collections say it goes.
    fn push(&mut self, shape: Shape<'a>, line: u32, column: u32, open: &mut Vec<Open>) {
        let index = self.nodes.len();
        let (parent, is_key, key) = match open.last_mut() {
            Some(o) if o.is_mapping && o.expect_key => {
                o.expect_key = false;
                o.key = match &shape {
                    Shape::Scalar { text, .. } => Some(Cow::Owned(text.to_string())),
                    _ => None,
                };
                (Some(o.node), true, None)
            }
            Some(o) if o.is_mapping => {
                o.expect_key = true;
                (Some(o.node), false, o.key.take())
            }
            Some(o) => (Some(o.node), false, None),
            None => (None, false, None),
        };
        let collection = matches!(shape, Shape::Mapping { .. } | Shape::Sequence { .. });
        let is_mapping = matches!(shape, Shape::Mapping { .. });
        self.nodes.push(Node {
            shape,
            parent,
            key,
            is_key,
            line,
            column,
            end: None,
        });
        if collection {
            open.push(Open {
                node: index,
                is_mapping,
                expect_key: true,
                key: None,
            });
        }
    }

    /// The node that starts at this place.
    pub fn at(&self, line: u32, column: u32) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.line == line && n.column == column)
    }

    /// The mapping key that starts at this place (a block mapping starts where its first
    /// key does).
    pub fn key_at(&self, line: u32, column: u32) -> Option<usize> {
        self.nodes
            .iter()
            .position(|n| n.is_key && n.line == line && n.column == column)
    }

    /// The node's place in the document as fields (`service.port`, `paths[1]`); None for a
    /// node under a key that is not a scalar.
    pub fn path(&self, node: usize) -> Option<Vec<Segment>> {
        let mut path = Vec::new();
        let mut at = node;
        while let Some(parent) = self.nodes[at].parent {
            if self.nodes[at].is_key {
                return None;
            }
            match self.nodes[parent].shape {
                Shape::Mapping { .. } => {
                    path.push(Segment::Field(self.nodes[at].key.as_deref()?.to_string()))
                }
                _ => path.push(Segment::Item(self.item_index(parent, at))),
            }
            at = parent;
        }
        path.reverse();
        Some(path)
    }

    /// The place of `node` among the items of the sequence `parent`.
    fn item_index(&self, parent: usize, node: usize) -> usize {
        self.nodes[parent + 1..node]
            .iter()
            .filter(|n| n.parent == Some(parent))
            .count()
    }

    /// The keys of the mapping `map`, in order.
    pub fn keys(&self, map: usize) -> impl Iterator<Item = (usize, &Node<'a>)> {
        self.nodes
            .iter()
            .enumerate()
            .skip(map + 1)
            .filter(move |(_, n)| n.parent == Some(map) && n.is_key)
    }

    /// The text of a scalar node.
    pub fn text(&self, node: usize) -> Option<&str> {
        match &self.nodes[node].shape {
            Shape::Scalar { text, .. } => Some(text),
            _ => None,
        }
    }
}

/// A step of a node's path: a mapping's field or a sequence's item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Segment {
    Field(String),
    Item(usize),
}

/// Shows a path as a person writes it: `service.port`, `paths[1]`.
pub(crate) fn show_path(path: &[Segment]) -> String {
    let mut out = String::new();
    for s in path {
        match s {
            Segment::Field(f) if out.is_empty() => out.push_str(f),
            Segment::Field(f) => {
                out.push('.');
                out.push_str(f);
            }
            Segment::Item(i) => out.push_str(&format!("[{i}]")),
        }
    }
    out
}

fn syntax_error(e: &ScanError, open: &[Open]) -> SyntaxError {
    SyntaxError {
        what: e.info(),
        line: e.marker().line() as u32,
        column: e.marker().col() as u32 + 1,
        open: open.iter().map(|o| o.node).collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_know_their_field() {
        let text = "namespace: web\nservice: { name: shop, port: 8080 }\npaths: [/a, /b]\n";
        let o = Outline::of(text);
        assert!(o.error.is_none());
        let port = o.at(2, 30).unwrap();
        assert_eq!(show_path(&o.path(port).unwrap()), "service.port");
        let b = o.at(3, 13).unwrap();
        assert_eq!(show_path(&o.path(b).unwrap()), "paths[1]");
    }

    #[test]
    fn a_syntax_error_keeps_what_was_open() {
        let o = Outline::of("namespace: web\nservice: { name: shop, port: 8080\npaths: [/a]\n");
        let e = o.error.unwrap();
        assert_eq!((e.line, e.column), (3, 6));
        let inner = *e.open.last().unwrap();
        assert_eq!(o.nodes[inner].shape, Shape::Mapping { block: false });
        assert_eq!((o.nodes[inner].line, o.nodes[inner].column), (2, 10));
    }
}
