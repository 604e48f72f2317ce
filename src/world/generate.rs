//! Synthetic towns for scaling benchmarks: households with rooms, shared workplaces, a cafe
//! and a park, and agents with varied names, jobs, traits, plans and relationships.

use super::clock::format_time;
use super::emotion::Relationship;
use super::location::{parse_path, LocationTree};
use super::{AgentSpec, DayEvent, Emotion, Needs, World};
use chrono::NaiveDate;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

const FIRST_NAMES: &[&str] = &[
    "Maya", "Omar", "Lena", "Tobias", "Priya", "Marcus", "Ingrid", "Kenji", "Sofia", "Daniel",
    "Amara", "Felix", "Noor", "Hugo", "Clara", "Ravi", "Elena", "Samuel", "Yuki", "Arthur",
    "Leila", "Mateo", "Hannah", "Diego", "Zara", "Oscar", "Iris", "Kwame", "Freya", "Luca", "Anya",
    "Theo", "Mina", "Jonas", "Rosa", "Emil", "Talia", "Victor", "Nadia", "Ben",
];

const SURNAMES: &[&str] = &[
    "Chen",
    "Okafor",
    "Lindqvist",
    "Moreau",
    "Patel",
    "Reyes",
    "Nakamura",
    "Kowalski",
    "Haddad",
    "Brennan",
    "Silva",
    "Novak",
    "Adeyemi",
    "Fischer",
    "Rossi",
    "Kaur",
    "Larsen",
    "Mendes",
    "Tanaka",
    "Dubois",
    "Ibrahim",
    "Walsh",
    "Petrov",
    "Alvarez",
    "Sato",
    "Byrne",
];

const TRAITS: &[&str] = &[
    "cheerful",
    "curious",
    "patient",
    "stubborn",
    "generous",
    "shy",
    "witty",
    "careful",
    "ambitious",
    "easygoing",
    "thoughtful",
    "talkative",
    "organised",
    "impulsive",
    "gentle",
    "competitive",
    "loyal",
    "anxious",
    "creative",
    "practical",
    "warm",
    "sarcastic",
    "calm",
    "energetic",
];

const HOBBIES: &[&str] = &[
    "play the guitar",
    "read mystery novels",
    "go for a run along the river",
    "bake bread",
    "paint watercolours",
    "play chess",
    "work in the garden",
    "watch old films",
    "practise yoga",
    "write poems",
];

/// A job: title, workplace leaf, what the work looks like.
struct Job {
    title: &'static str,
    place: &'static str,
    work: &'static str,
}

const JOBS: &[Job] = &[
    Job {
        title: "barista",
        place: "Maple Street Cafe/Counter",
        work: "make coffee and chat with regulars",
    },
    Job {
        title: "software developer",
        place: "Harbor Office/Open-plan desks",
        work: "write and review code",
    },
    Job {
        title: "accountant",
        place: "Harbor Office/Open-plan desks",
        work: "go through the monthly accounts",
    },
    Job {
        title: "project manager",
        place: "Harbor Office/Meeting room",
        work: "run the team meeting and plan the week",
    },
    Job {
        title: "librarian",
        place: "Town Library/Front desk",
        work: "help visitors find books",
    },
    Job {
        title: "teacher",
        place: "Elm Grove School/Classroom",
        work: "teach a class",
    },
    Job {
        title: "grocer",
        place: "Corner Grocery/Checkout",
        work: "serve customers and restock shelves",
    },
    Job {
        title: "nurse",
        place: "Town Clinic/Exam room",
        work: "look after patients",
    },
    Job {
        title: "baker",
        place: "Sunrise Bakery/Kitchen",
        work: "bake bread and pastries",
    },
    Job {
        title: "gardener",
        place: "Riverside Park/Flower beds",
        work: "tend the flower beds",
    },
];

const STUDENT: Job = Job {
    title: "student",
    place: "Elm Grove School/Classroom",
    work: "attend lessons",
};
const RETIRED: Job = Job {
    title: "retiree",
    place: "Riverside Park/Pond",
    work: "take a long walk around the pond",
};

const SHARED_PLACES: &[&str] = &[
    "Maple Street Cafe/Counter",
    "Maple Street Cafe/Seating area",
    "Riverside Park/Pond",
    "Riverside Park/Flower beds",
    "Harbor Office/Open-plan desks",
    "Harbor Office/Meeting room",
    "Town Library/Front desk",
    "Town Library/Reading room",
    "Elm Grove School/Classroom",
    "Elm Grove School/Staff room",
    "Corner Grocery/Checkout",
    "Corner Grocery/Aisles",
    "Town Clinic/Waiting room",
    "Town Clinic/Exam room",
    "Sunrise Bakery/Kitchen",
    "Sunrise Bakery/Shop",
];

fn surname(h: usize) -> String {
    let l = SURNAMES.len();
    let (q, r) = (h / l, h % l);
    match q {
        0 => SURNAMES[r].to_string(),
        q if q < l => format!("{}-{}", SURNAMES[r], SURNAMES[(r + q) % l]),
        q => format!("{} {}", SURNAMES[r], q),
    }
}

fn path(s: &str) -> Vec<String> {
    parse_path(s).unwrap_or_else(|_| vec![s.to_string()])
}

fn plan(rng: &mut ChaCha8Rng, job: &Job, hobby: &str) -> Vec<String> {
    let wake = [360, 390, 420][rng.gen_range(0..3)];
    let workplace = job.place.split('/').next().unwrap_or(job.place);
    let steps: [(u32, String); 11] = [
        (wake, "wake up and get ready for the day".into()),
        (wake + 30, "have breakfast in the kitchen".into()),
        (480, format!("walk to {workplace}")),
        (510, job.work.to_string()),
        (720, "have lunch at Maple Street Cafe".into()),
        (780, job.work.to_string()),
        (1020, "head home".into()),
        (1080, "cook and eat dinner".into()),
        (1170, hobby.to_string()),
        (1320, "get ready for bed".into()),
        (1350, "go to sleep".into()),
    ];
    steps
        .iter()
        .map(|(t, a)| format!("{}: {a}", format_time(*t)))
        .collect()
}

fn relate(agents: &mut [AgentSpec], a: usize, b: usize, rel: &str, back: &str, closeness: u8) {
    if a == b
        || agents[a]
            .relationships
            .iter()
            .any(|(n, _)| *n == agents[b].name)
    {
        return;
    }
    let (na, nb) = (agents[a].name.clone(), agents[b].name.clone());
    let r = |relationship: &str| Relationship {
        relationship: relationship.to_string(),
        closeness,
    };
    agents[a].relationships.push((nb, r(rel)));
    agents[b].relationships.push((na, r(back)));
}

impl World {
    /// A synthetic, valid town of `n_agents` agents (at least 1), the same for the same seed:
    /// households with a kitchen, living room, bathroom and a bedroom each, a cafe, a park, an
    /// office, a school, a library, a grocery, a clinic and a bakery; agents with varied names,
    /// jobs, traits, descriptions, example plans, family ties and a few friendships. One day,
    /// with one event. `source` is the world written as TOML ([`World::to_toml`]).
    pub fn generated(n_agents: usize, seed: u64) -> World {
        let n = n_agents.max(1);
        let mut rng = ChaCha8Rng::seed_from_u64(seed);
        let mut locations = LocationTree::default();
        let mut agents: Vec<AgentSpec> = Vec::with_capacity(n);
        let mut households: Vec<Vec<usize>> = Vec::new();
        let mut house_names = Vec::new();
        while agents.len() < n {
            let h = households.len();
            let size = rng.gen_range(1..=4).min(n - agents.len());
            let family = surname(h);
            let mut firsts: Vec<&str> = FIRST_NAMES
                .choose_multiple(&mut rng, size)
                .copied()
                .collect();
            firsts.shuffle(&mut rng);
            let house = if size == 1 {
                format!("{} {family}'s flat", firsts[0])
            } else {
                format!("The {family} family home")
            };
            for room in ["Kitchen", "Living room", "Bathroom"] {
                locations.insert(&[house.clone(), room.to_string()]);
            }
            let mut members = Vec::new();
            for (k, first) in firsts.iter().enumerate() {
                let child = k >= 2 || (k == 1 && rng.gen_bool(0.3));
                let age: u32 = if child {
                    rng.gen_range(6..=18)
                } else {
                    rng.gen_range(23..=78)
                };
                let job = if child {
                    &STUDENT
                } else if age >= 67 {
                    &RETIRED
                } else {
                    &JOBS[rng.gen_range(0..JOBS.len())]
                };
                let name = format!("{first} {family}");
                let bedroom = vec![house.clone(), format!("{first}'s bedroom")];
                locations.insert(&bedroom);
                let traits: Vec<String> = TRAITS
                    .choose_multiple(&mut rng, 3)
                    .map(|t| t.to_string())
                    .collect();
                let hobby = HOBBIES[rng.gen_range(0..HOBBIES.len())];
                let work = match job.title {
                    "student" => "is a student at Elm Grove School".to_string(),
                    "retiree" => "is retired and spends mornings in Riverside Park".to_string(),
                    t => format!(
                        "works as a {t} at {}",
                        job.place.split('/').next().unwrap_or(job.place)
                    ),
                };
                let description = vec![
                    format!("{name} is {age} years old and {work}."),
                    format!("{name} lives in {house}."),
                    format!("{first} likes to {hobby} in the evening."),
                    format!("People know {first} as {} and {}.", traits[0], traits[1]),
                ];
                members.push(agents.len());
                agents.push(AgentSpec {
                    name,
                    age,
                    traits,
                    description,
                    example_day_plan: plan(&mut rng, job, hobby),
                    location: bedroom,
                    home: Some(vec![house.clone()]),
                    emotion: Emotion::Neutral,
                    needs: Needs::default(),
                    relationships: Vec::new(),
                });
            }
            house_names.push(house);
            households.push(members);
        }
        for place in SHARED_PLACES {
            locations.insert(&path(place));
        }
        for members in &households {
            for (x, &a) in members.iter().enumerate() {
                for &b in &members[x + 1..] {
                    let (ra, rb) = match (agents[a].age > 18, agents[b].age > 18) {
                        (true, true) => ("spouse", "spouse"),
                        (true, false) => ("child", "parent"),
                        (false, true) => ("parent", "child"),
                        (false, false) => ("sibling", "sibling"),
                    };
                    let closeness = rng.gen_range(8..=15);
                    relate(&mut agents, a, b, ra, rb, closeness);
                }
            }
        }
        if households.len() > 1 {
            for a in 0..n {
                for _ in 0..rng.gen_range(1..=2) {
                    let b = rng.gen_range(0..n);
                    let closeness = rng.gen_range(1..=8);
                    relate(&mut agents, a, b, "friend", "friend", closeness);
                }
            }
        }
        let start_date = NaiveDate::from_ymd_opt(2023, 1, 3).unwrap_or_default();
        let mut world = World {
            name: format!("Generated town ({n} agents, seed {seed})"),
            description: format!(
                "A synthetic town of {} households for scaling benchmarks.",
                house_names.len()
            ),
            start_date,
            days: 1,
            day_start: 360,
            day_end: 1440,
            step_minutes: 15,
            conversation_cooldown_minutes: 120,
            decay: Default::default(),
            locations,
            events: vec![DayEvent {
                date: start_date,
                text: "A small farmers' market opens in Riverside Park this morning.".to_string(),
            }],
            agents,
            source: String::new(),
        };
        world.source = world.to_toml();
        world
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn generated_worlds_validate_and_round_trip() {
        for n in [1, 2, 4, 8, 16, 100] {
            let w = World::generated(n, 7);
            assert_eq!(w.agents.len(), n);
            let back = World::parse(&w.source, Path::new("generated.toml"))
                .unwrap_or_else(|e| panic!("n = {n}: {e}\n{}", w.source));
            assert_eq!(back, w, "n = {n}");
            assert!(w.agents.iter().all(|a| w.locations.is_leaf(&a.location)));
        }
    }

    #[test]
    fn generation_is_deterministic_and_varied() {
        assert_eq!(World::generated(8, 1), World::generated(8, 1));
        assert_ne!(World::generated(8, 1), World::generated(8, 2));
        let w = World::generated(16, 3);
        let jobs: std::collections::HashSet<_> =
            w.agents.iter().map(|a| a.description[0].clone()).collect();
        assert!(jobs.len() > 8);
        assert!(w.agents.iter().any(|a| !a.relationships.is_empty()));
    }

    #[test]
    fn surnames_stay_unique() {
        let names: std::collections::HashSet<String> = (0..2000).map(surname).collect();
        assert_eq!(names.len(), 2000);
    }
}
