//! Semantic checks of the `[[agents]]` tables: names, ages, lists, plan lines, start
//! locations, emotions, needs and relationships.

use super::checker::Checker;
use super::clock::{self, parse_plan_line};
use super::emotion::{Emotion, Relationship, CLOSENESS_DEFAULT, CLOSENESS_MAX};
use super::locate::join;
use super::location::{display_path, parse_path, LocationTree};
use super::needs::{Need, Needs, NEED_MAX};
use super::schema::RawAgent;
use super::AgentSpec;
use std::collections::HashMap;

/// A readable list of at most 12 leaves.
fn leaf_list(leaves: &[Vec<String>]) -> String {
    let mut s: Vec<String> = leaves
        .iter()
        .take(12)
        .map(|l| format!("{:?}", display_path(l)))
        .collect();
    if leaves.len() > 12 {
        s.push(format!("and {} more", leaves.len() - 12));
    }
    s.join(", ")
}

/// Checks every agent: unique names, then each agent's fields.
pub(crate) fn check_agents(
    c: &mut Checker,
    agents: &[RawAgent],
    tree: &LocationTree,
) -> Vec<AgentSpec> {
    if agents.is_empty() {
        c.nowhere(
            "agents",
            "at least one agent is needed: add an [[agents]] table",
        );
    }
    let mut first: HashMap<&str, usize> = HashMap::new();
    for (i, a) in agents.iter().enumerate() {
        let n = a.name.get_ref().as_str();
        if let Some(line) = first.get(n) {
            c.at(
                a.name.span(),
                format!("agents[{i}].name"),
                format!("agent name {n:?} is used twice (first on line {line}); agent names must be unique"),
            );
        } else {
            first.insert(n, c.line_of(a.name.span()));
        }
    }
    let names: Vec<&str> = agents.iter().map(|a| a.name.get_ref().as_str()).collect();
    agents
        .iter()
        .enumerate()
        .map(|(i, a)| check_agent(c, i, a, tree, &names))
        .collect()
}

/// Checks one agent (`agents[i]`); `names` are all agents' names, for relationships.
fn check_agent(
    c: &mut Checker,
    i: usize,
    a: &RawAgent,
    tree: &LocationTree,
    names: &[&str],
) -> AgentSpec {
    let f = |k: &str| format!("agents[{i}].{k}");
    let name = c.text(&a.name, &f("name"), "an agent's name");
    let age = c.int(&a.age, &f("age"), 1, 150).unwrap_or(0);
    let traits = c.list(&a.traits, &f("traits"), "trait");
    let description = c.list(&a.description, &f("description"), "description sentence");
    let example_day_plan = c.list(&a.example_day_plan, &f("example_day_plan"), "plan line");
    let mut previous: Option<u32> = None;
    for (j, line) in a.example_day_plan.get_ref().iter().enumerate() {
        if line.get_ref().trim().is_empty() {
            continue; // already reported as empty
        }
        let field = f(&format!("example_day_plan[{j}]"));
        match parse_plan_line(line.get_ref()) {
            None => c.at(
                line.span(),
                field,
                format!("bad plan line {:?}: write \"hh:mm am: activity\" (hh 01–12, mm 00–59, lowercase am or pm), e.g. \"06:00 am: wake up and stretch\"", line.get_ref()),
            ),
            Some((t, _)) => {
                if let Some(p) = previous.filter(|&p| t <= p) {
                    c.at(
                        line.span(),
                        field,
                        format!("{} is not after the previous line's {}: list plan lines in increasing time order", clock::format_time(t), clock::format_time(p)),
                    );
                }
                previous = Some(t);
            }
        }
    }
    let location = match parse_path(a.location.get_ref()) {
        Err(msg) => {
            c.at(a.location.span(), f("location"), msg);
            Vec::new()
        }
        Ok(p) if !tree.contains(&p) => {
            c.at(
                a.location.span(),
                f("location"),
                format!(
                    "unknown location {:?} (valid leaves: {})",
                    a.location.get_ref(),
                    leaf_list(&tree.leaves())
                ),
            );
            p
        }
        Ok(p) if !tree.is_leaf(&p) => {
            let inside: Vec<Vec<String>> = tree
                .leaves()
                .into_iter()
                .filter(|l| l.starts_with(&p))
                .collect();
            c.at(
                a.location.span(),
                f("location"),
                format!("location {:?} contains other places; start the agent in one with nothing inside it, e.g. {}", a.location.get_ref(), leaf_list(&inside)),
            );
            p
        }
        Ok(p) => p,
    };
    let home = a.home.as_ref().and_then(|h| match parse_path(h.get_ref()) {
        Err(msg) => {
            c.at(h.span(), f("home"), msg);
            None
        }
        Ok(p) if !tree.contains(&p) => {
            c.at(
                h.span(),
                f("home"),
                format!(
                    "unknown place {:?}: name a place of the location tree (e.g. {})",
                    h.get_ref(),
                    leaf_list(
                        &tree
                            .roots()
                            .iter()
                            .map(|r| vec![r.to_string()])
                            .collect::<Vec<_>>()
                    )
                ),
            );
            None
        }
        Ok(p) => Some(p),
    });
    let emotion = match &a.emotion {
        None => Emotion::Neutral,
        Some(e) => e.get_ref().parse::<Emotion>().unwrap_or_else(|msg| {
            c.at(e.span(), f("emotion"), msg);
            Emotion::Neutral
        }),
    };
    let mut needs = Needs::default();
    if let Some(raw) = &a.needs {
        for (need, v) in Need::ALL.into_iter().zip([
            &raw.fullness,
            &raw.social,
            &raw.fun,
            &raw.health,
            &raw.energy,
        ]) {
            if let Some(v) = v {
                if let Some(x) = c.int(
                    v,
                    &f(&format!("needs.{}", need.as_str())),
                    0,
                    i64::from(NEED_MAX),
                ) {
                    needs.set(need, x as u8);
                }
            }
        }
    }
    let mut relationships = Vec::new();
    for (target, rel) in a
        .relationships
        .as_ref()
        .map(|r| r.0.as_slice())
        .unwrap_or(&[])
    {
        let base = join(&f("relationships"), target.get_ref());
        let other = target.get_ref().as_str();
        if other == name {
            c.at(
                target.span(),
                base.clone(),
                "an agent cannot have a relationship with itself",
            );
        } else if !names.contains(&other) {
            c.at(
                target.span(),
                base.clone(),
                format!(
                    "unknown agent {other:?} (agents: {})",
                    names
                        .iter()
                        .map(|n| format!("{n:?}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            );
        }
        let relationship = c.text(
            &rel.relationship,
            &format!("{base}.relationship"),
            "the relationship",
        );
        let closeness = match &rel.closeness {
            Some(v) => c
                .int(v, &format!("{base}.closeness"), 0, i64::from(CLOSENESS_MAX))
                .unwrap_or(0) as u8,
            None => CLOSENESS_DEFAULT,
        };
        relationships.push((
            other.to_string(),
            Relationship {
                relationship,
                closeness,
            },
        ));
    }
    AgentSpec {
        name,
        age,
        traits,
        description,
        example_day_plan,
        location,
        home,
        emotion,
        needs,
        relationships,
    }
}
