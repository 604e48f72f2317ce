//! Relationship network density (Park et al. 2023, the "relationship formation" measure).
//!
//! Generative Agents defines network density as η = 2|E| / (|V|(|V| − 1)): the share of
//! agent pairs joined by an edge, an edge meaning the two agents know of each other. Here
//! the relationships of the run say who knows whom: agent *a* knows *b* when *a* has a
//! relationship to *b* (from the world file, or made when they first talked) with closeness
//! at least `min_closeness` (0: any relationship; a tie at the threshold counts).
//!
//! [`Density::density`] is the share of *ordered* pairs (a, b), a ≠ b, where a knows b
//! (relationships need not be symmetric); [`Density::mutual_density`] is the paper's
//! undirected η, an edge being a pair who both know each other. With fewer than two agents
//! both are undefined (`None`).

use serde::Serialize;

use crate::agent::AgentState;

/// The density of one relationship network.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Density {
    pub agents: usize,
    /// Ordered pairs (a, b) where a knows b.
    pub edges: usize,
    /// Ordered pairs of distinct agents: n(n − 1).
    pub pairs: usize,
    /// `edges / pairs`.
    pub density: Option<f64>,
    /// Unordered pairs who both know each other.
    pub mutual_edges: usize,
    /// `mutual_edges / (n(n − 1)/2)`: the paper's η.
    pub mutual_density: Option<f64>,
}

/// Density of the network where `closeness[a][b]` is a's closeness to b if a has a
/// relationship to b (`None` otherwise; the diagonal and entries beyond the agent count are
/// ignored, missing entries count as `None`).
pub fn density(closeness: &[Vec<Option<u8>>], min_closeness: u8) -> Density {
    let n = closeness.len();
    let knows = |a: usize, b: usize| {
        closeness[a]
            .get(b)
            .copied()
            .flatten()
            .is_some_and(|c| c >= min_closeness)
    };
    let mut edges = 0;
    let mut mutual = 0;
    for a in 0..n {
        for b in 0..n {
            if a != b && knows(a, b) {
                edges += 1;
                if a < b && knows(b, a) {
                    mutual += 1;
                }
            }
        }
    }
    let pairs = n * n.saturating_sub(1);
    let share = |x: usize, of: usize| (of > 0).then(|| x as f64 / of as f64);
    Density {
        agents: n,
        edges,
        pairs,
        density: share(edges, pairs),
        mutual_edges: mutual,
        mutual_density: share(mutual, pairs / 2),
    }
}

/// The closeness matrix of agents' relationships (in the order of `agents`; relationships
/// to names that are not among them are left out).
pub fn closeness_matrix(agents: &[AgentState]) -> Vec<Vec<Option<u8>>> {
    agents
        .iter()
        .map(|a| {
            agents
                .iter()
                .map(|b| {
                    (a.name != b.name)
                        .then(|| a.relationship(&b.name).map(|r| r.closeness))
                        .flatten()
                })
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn matrix(n: usize, edges: &[(usize, usize, u8)]) -> Vec<Vec<Option<u8>>> {
        let mut m = vec![vec![None; n]; n];
        for &(a, b, c) in edges {
            m[a][b] = Some(c);
        }
        m
    }

    #[test]
    fn empty_and_single_networks_are_undefined() {
        let d = density(&[], 0);
        assert_eq!((d.agents, d.edges, d.pairs), (0, 0, 0));
        assert_eq!((d.density, d.mutual_density), (None, None));
        let d = density(&matrix(1, &[(0, 0, 9)]), 0);
        assert_eq!((d.edges, d.density, d.mutual_density), (0, None, None));
    }

    #[test]
    fn no_edges_is_zero() {
        let d = density(&matrix(3, &[]), 0);
        assert_eq!((d.edges, d.pairs), (0, 6));
        assert_eq!((d.density, d.mutual_density), (Some(0.0), Some(0.0)));
    }

    #[test]
    fn a_full_network_is_one() {
        let all: Vec<_> = (0..4)
            .flat_map(|a| (0..4).filter(move |&b| b != a).map(move |b| (a, b, 7)))
            .collect();
        let d = density(&matrix(4, &all), 5);
        assert_eq!((d.edges, d.pairs, d.mutual_edges), (12, 12, 6));
        assert_eq!((d.density, d.mutual_density), (Some(1.0), Some(1.0)));
    }

    #[test]
    fn one_edge_of_three_agents() {
        let d = density(&matrix(3, &[(0, 1, 5)]), 0);
        assert_eq!(d.edges, 1);
        assert_eq!(d.density, Some(1.0 / 6.0));
        assert_eq!((d.mutual_edges, d.mutual_density), (0, Some(0.0)));
        // Both directions: one mutual pair of three.
        let d = density(&matrix(3, &[(0, 1, 5), (1, 0, 2)]), 0);
        assert_eq!(d.density, Some(2.0 / 6.0));
        assert_eq!((d.mutual_edges, d.mutual_density), (1, Some(1.0 / 3.0)));
    }

    #[test]
    fn a_tie_at_the_threshold_counts() {
        let m = matrix(2, &[(0, 1, 5), (1, 0, 4)]);
        let d = density(&m, 5);
        assert_eq!((d.edges, d.density), (1, Some(0.5)));
        assert_eq!(d.mutual_density, Some(0.0));
        let d = density(&m, 4);
        assert_eq!((d.edges, d.mutual_density), (2, Some(1.0)));
        let d = density(&m, 6);
        assert_eq!((d.edges, d.density), (0, Some(0.0)));
        // A relationship at closeness 0 is still knowing of someone.
        assert_eq!(density(&matrix(2, &[(0, 1, 0)]), 0).edges, 1);
    }

    #[test]
    fn self_loops_and_short_rows_are_ignored() {
        // 0 → 0 is a self-loop; row 1 is empty (no entry for 1 → 0).
        let m = vec![vec![Some(9), Some(9)], vec![]];
        let d = density(&m, 0);
        assert_eq!((d.edges, d.density), (1, Some(0.5)));
    }
}
