//! The location tree: places are slash-separated paths (`"Lin family's house/Kitchen"`); every
//! prefix of a listed path is a place too, and agents stand on leaves.

/// A tree of named places; siblings have distinct names and keep the order in which they first
/// appear.
/// Two trees are equal when they have the same places with children in the same order.
#[derive(Clone, Debug, Default)]
pub struct LocationTree {
    nodes: Vec<Node>,
    roots: Vec<usize>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
struct Node {
    name: String,
    children: Vec<usize>,
}

/// A place and the places inside it (for display).
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct LocationNode {
    pub name: String,
    pub children: Vec<LocationNode>,
}

/// Joins a path with `/`: `["Lin family's house", "Kitchen"]` → `"Lin family's house/Kitchen"`.
pub fn display_path(path: &[String]) -> String {
    path.join("/")
}

/// Splits a slash-separated path into its segments; an error says what is wrong (an empty path,
/// an empty segment, spaces around a `/`).
pub fn parse_path(s: &str) -> Result<Vec<String>, String> {
    if s.trim().is_empty() {
        return Err("empty location path".to_string());
    }
    let mut out = Vec::new();
    for (i, seg) in s.split('/').enumerate() {
        if seg.trim().is_empty() {
            return Err(format!(
                "location path {s:?} has an empty segment (number {}); write names separated by \
                 single slashes, e.g. \"House/Kitchen\"",
                i + 1
            ));
        }
        if seg.trim() != seg {
            return Err(format!(
                "location path {s:?}: segment {seg:?} has leading or trailing spaces; write \
                 \"{}\"",
                s.split('/').map(str::trim).collect::<Vec<_>>().join("/")
            ));
        }
        out.push(seg.to_string());
    }
    Ok(out)
}

impl LocationTree {
    /// Builds the tree from slash-separated paths; fails on an empty path or segment or on a
    /// path listed twice.
    pub fn new(paths: &[String]) -> Result<Self, String> {
        let mut tree = LocationTree::default();
        let mut listed = std::collections::HashSet::new();
        for p in paths {
            let segs = parse_path(p)?;
            if !listed.insert(segs.clone()) {
                return Err(format!("location {p:?} is listed twice"));
            }
            tree.insert(&segs);
        }
        Ok(tree)
    }

    /// Adds a path (and its prefixes) if not present.
    pub(crate) fn insert(&mut self, path: &[String]) {
        let mut parent: Option<usize> = None;
        for seg in path {
            let siblings = match parent {
                None => &self.roots,
                Some(p) => &self.nodes[p].children,
            };
            let found = siblings
                .iter()
                .copied()
                .find(|&i| self.nodes[i].name == *seg);
            let idx = match found {
                Some(i) => i,
                None => {
                    let i = self.nodes.len();
                    self.nodes.push(Node {
                        name: seg.clone(),
                        children: Vec::new(),
                    });
                    match parent {
                        None => self.roots.push(i),
                        Some(p) => self.nodes[p].children.push(i),
                    }
                    i
                }
            };
            parent = Some(idx);
        }
    }

    fn find(&self, path: &[String]) -> Option<usize> {
        let mut current: Option<usize> = None;
        for seg in path {
            let siblings = match current {
                None => &self.roots,
                Some(p) => &self.nodes[p].children,
            };
            current = Some(
                siblings
                    .iter()
                    .copied()
                    .find(|&i| self.nodes[i].name == *seg)?,
            );
        }
        current
    }

    /// The tree as nested nodes, top-level places first, in file order.
    pub fn nested(&self) -> Vec<LocationNode> {
        fn node(tree: &LocationTree, i: usize) -> LocationNode {
            LocationNode {
                name: tree.nodes[i].name.clone(),
                children: tree.nodes[i]
                    .children
                    .iter()
                    .map(|&c| node(tree, c))
                    .collect(),
            }
        }
        self.roots.iter().map(|&r| node(self, r)).collect()
    }

    /// Names of the top-level places, in file order.
    pub fn roots(&self) -> Vec<&str> {
        self.roots
            .iter()
            .map(|&i| self.nodes[i].name.as_str())
            .collect()
    }

    /// Names of the places directly inside `path`, in file order (the roots for an empty path;
    /// empty for a leaf or an unknown path).
    pub fn children(&self, path: &[String]) -> Vec<&str> {
        if path.is_empty() {
            return self.roots();
        }
        match self.find(path) {
            Some(i) => self.nodes[i]
                .children
                .iter()
                .map(|&c| self.nodes[c].name.as_str())
                .collect(),
            None => Vec::new(),
        }
    }

    /// Whether `path` is a place (a listed path or a prefix of one). The empty path is not.
    pub fn contains(&self, path: &[String]) -> bool {
        !path.is_empty() && self.find(path).is_some()
    }

    /// Whether `path` is a place with nothing inside it.
    pub fn is_leaf(&self, path: &[String]) -> bool {
        !path.is_empty()
            && self
                .find(path)
                .is_some_and(|i| self.nodes[i].children.is_empty())
    }

    /// Every leaf as a full path, depth first in file order.
    pub fn leaves(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let mut prefix = Vec::new();
        for &r in &self.roots {
            self.collect_leaves(r, &mut prefix, &mut out);
        }
        out
    }

    fn collect_leaves(&self, i: usize, prefix: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        prefix.push(self.nodes[i].name.clone());
        if self.nodes[i].children.is_empty() {
            out.push(prefix.clone());
        }
        for &c in &self.nodes[i].children {
            self.collect_leaves(c, prefix, out);
        }
        prefix.pop();
    }

    /// `text` with each path of a place inside a building (`"Central Perk/Counter"`) named by
    /// its building (`"Central Perk"`), the longest paths first so that `"A/B/C"` is not left
    /// as `"A/C"`. The model copies the context's paths into its plans; the walk to a place
    /// picks the room.
    pub fn by_building(&self, text: &str) -> String {
        let mut out = text.to_string();
        self.name_by_building(std::iter::once(&mut out));
        out
    }

    /// [`LocationTree::by_building`] on each of `texts` in place, the paths listed once.
    pub fn name_by_building<'a>(&self, texts: impl IntoIterator<Item = &'a mut String>) {
        let mut paths: Vec<(String, &str)> = Vec::new();
        for &r in &self.roots {
            let root = self.nodes[r].name.as_str();
            let mut stack: Vec<(usize, String)> = self.nodes[r]
                .children
                .iter()
                .map(|&c| (c, format!("{root}/{}", self.nodes[c].name)))
                .collect();
            while let Some((i, path)) = stack.pop() {
                for &c in &self.nodes[i].children {
                    stack.push((c, format!("{path}/{}", self.nodes[c].name)));
                }
                paths.push((path, root));
            }
        }
        paths.sort_by_key(|(p, _)| std::cmp::Reverse(p.len()));
        for out in texts {
            for (path, root) in &paths {
                if out.contains(path.as_str()) {
                    *out = out.replace(path.as_str(), root);
                }
            }
        }
    }

    /// Number of places (every node, leaves and the places that contain them).
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether there are no places.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

impl PartialEq for LocationTree {
    /// Same places with the same children in the same order.
    fn eq(&self, other: &Self) -> bool {
        self.leaves() == other.leaves()
    }
}

impl Eq for LocationTree {}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &str) -> Vec<String> {
        s.split('/').map(str::to_string).collect()
    }

    fn lin() -> LocationTree {
        LocationTree::new(&[
            "House/Kitchen".to_string(),
            "House/Bedroom".to_string(),
            "Market/Counter".to_string(),
            "Park".to_string(),
            "House".to_string(),
        ])
        .unwrap()
    }

    #[test]
    fn a_path_inside_a_building_is_named_by_the_building() {
        let tree = LocationTree::new(&[
            "College/Library/Stacks".to_string(),
            "College/Library".to_string(),
            "College/Hall".to_string(),
            "Park".to_string(),
        ])
        .unwrap();
        assert_eq!(
            tree.by_building(
                "reads in College/Library/Stacks, then College/Hall and the Park/Bench"
            ),
            "reads in College, then College and the Park/Bench"
        );
        assert_eq!(tree.by_building("goes to College"), "goes to College");
    }

    #[test]
    fn builds_a_tree_in_file_order() {
        let t = lin();
        assert_eq!(t.roots(), ["House", "Market", "Park"]);
        assert_eq!(t.children(&p("House")), ["Kitchen", "Bedroom"]);
        assert_eq!(t.children(&[]), ["House", "Market", "Park"]);
        assert!(t.children(&p("Park")).is_empty());
        assert!(t.children(&p("Nowhere")).is_empty());
        assert_eq!(t.len(), 6);
        assert_eq!(
            t.leaves(),
            vec![
                p("House/Kitchen"),
                p("House/Bedroom"),
                p("Market/Counter"),
                p("Park")
            ]
        );
    }

    #[test]
    fn contains_and_leaves() {
        let t = lin();
        assert!(t.contains(&p("House")));
        assert!(t.contains(&p("House/Kitchen")));
        assert!(!t.contains(&p("House/Garage")));
        assert!(!t.contains(&[]));
        assert!(t.is_leaf(&p("Park")));
        assert!(t.is_leaf(&p("Market/Counter")));
        assert!(!t.is_leaf(&p("Market")));
        assert!(!t.is_leaf(&p("Kitchen")));
        assert_eq!(display_path(&p("House/Kitchen")), "House/Kitchen");
    }

    #[test]
    fn rejects_bad_paths() {
        let dup = LocationTree::new(&["A/B".to_string(), "A/B".to_string()]).unwrap_err();
        assert!(dup.contains("twice"), "{dup}");
        for bad in ["", "A//B", "/A", "A/", " A/B", "A /B", "  "] {
            assert!(parse_path(bad).is_err(), "{bad:?}");
            assert!(LocationTree::new(&[bad.to_string()]).is_err(), "{bad:?}");
        }
        assert!(parse_path("A/B").is_ok());
    }

    #[test]
    fn same_name_under_different_parents_is_fine() {
        let t = LocationTree::new(&["A/Kitchen".to_string(), "B/Kitchen".to_string()]).unwrap();
        assert_eq!(t.leaves().len(), 2);
    }
}
