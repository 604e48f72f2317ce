//! Synthetic but varied memory sentences ("Mei Lin talked with Sam Moore about the garden
//! contest at the park"), deterministic from a seed: data for benchmarks and recall tests of
//! the vector index, where uniform random vectors would be unrealistically hard.

/// A deterministic generator of varied memory-like sentences.
struct Sentences(u64);

impl Sentences {
    fn next_u64(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[(self.next_u64() % items.len() as u64) as usize]
    }

    fn sentence(&mut self) -> String {
        const NAMES: &[&str] = &[
            "John Lin",
            "Eddy Lin",
            "Mei Lin",
            "Tom Moreno",
            "Jane Moreno",
            "Sam Moore",
            "Jennifer Moore",
            "Isabella Rodriguez",
            "Klaus Mueller",
            "Maria Lopez",
            "Ayesha Khan",
            "Wolfgang Schulz",
            "Carmen Ortiz",
            "Latoya Williams",
            "Rajiv Patel",
            "Abigail Chen",
            "Francisco Lopez",
            "Hailey Johnson",
            "Arthur Burton",
            "Ryan Park",
        ];
        const ACTIVITIES: &[&str] = &[
            "eating breakfast",
            "brewing coffee",
            "reading the newspaper",
            "painting a portrait",
            "practicing the piano",
            "writing a research paper",
            "tending the vegetable garden",
            "jogging along the river",
            "cleaning the kitchen",
            "fixing a leaky faucet",
            "studying chemistry",
            "planning a birthday party",
            "shopping for groceries",
            "cooking pasta for dinner",
            "taking a nap",
            "answering emails",
            "sketching the old library",
            "organizing the bookshelf",
            "baking sourdough bread",
            "walking the dog",
            "practicing yoga",
            "doing the laundry",
            "watering the plants",
            "composing a song",
            "preparing a lecture",
            "filling prescriptions",
            "serving customers at the counter",
            "repairing a bicycle",
            "playing chess",
            "writing in a journal",
            "knitting a scarf",
            "meditating quietly",
            "rehearsing a speech",
            "grading homework",
            "decorating the cafe",
            "feeding the cat",
            "washing the car",
            "editing photographs",
            "learning to dance",
            "volunteering at the shelter",
        ];
        const PLACES: &[&str] = &[
            "at home",
            "in the kitchen",
            "at the Hobbs Cafe",
            "in the park",
            "at the pharmacy",
            "at Oak Hill College",
            "in the library",
            "at the supply store",
            "in the garden",
            "at the town hall",
            "in the bedroom",
            "at the bar",
            "by the lake",
            "at the gym",
            "in the art studio",
            "at the grocery store",
            "in the living room",
            "on the porch",
            "at the school",
            "in the office",
            "at the bakery",
            "at the train station",
            "in the music room",
            "at the market",
            "at the dorm",
            "in the bathroom",
            "at the community center",
            "at the bookstore",
            "at the clinic",
            "on the rooftop",
        ];
        const TIMES: &[&str] = &[
            "this morning",
            "at dawn",
            "before lunch",
            "around noon",
            "in the afternoon",
            "after work",
            "in the evening",
            "late at night",
            "on Monday",
            "on the weekend",
            "yesterday",
            "today",
        ];
        const TOPICS: &[&str] = &[
            "the upcoming election",
            "a new art exhibit",
            "the Valentine's Day party",
            "their favorite books",
            "rising rent prices",
            "a chemistry experiment",
            "the weather",
            "a job offer",
            "a family vacation",
            "the school play",
            "local gossip",
            "a new recipe",
            "a broken window",
            "the town festival",
            "a medical diagnosis",
            "their childhood",
            "a music competition",
            "a research grant",
            "a lost wallet",
            "volunteer work",
            "the stock market",
            "a football match",
            "an old friend",
            "the library renovation",
            "a wedding",
            "a moving truck",
            "a garden contest",
            "the bakery's new menu",
            "a traffic accident",
            "a poetry reading",
        ];
        const FEELINGS: &[&str] = &[
            "happy",
            "anxious",
            "proud",
            "lonely",
            "excited",
            "tired",
            "frustrated",
            "grateful",
            "nervous",
            "curious",
        ];
        match self.next_u64() % 5 {
            0 | 1 => format!(
                "{} is {} {} {}",
                self.pick(NAMES),
                self.pick(ACTIVITIES),
                self.pick(PLACES),
                self.pick(TIMES)
            ),
            2 => format!(
                "{} talked with {} about {} {}",
                self.pick(NAMES),
                self.pick(NAMES),
                self.pick(TOPICS),
                self.pick(PLACES)
            ),
            3 => format!(
                "{} felt {} after {} {}",
                self.pick(NAMES),
                self.pick(FEELINGS),
                self.pick(ACTIVITIES),
                self.pick(TIMES)
            ),
            _ => format!(
                "{} plans to discuss {} with {} {}",
                self.pick(NAMES),
                self.pick(TOPICS),
                self.pick(NAMES),
                self.pick(TIMES)
            ),
        }
    }
}

/// `n` sentences from `seed` (the same seed always gives the same sentences).
pub fn memory_sentences(seed: u64, n: usize) -> Vec<String> {
    let mut g = Sentences(seed | 1);
    (0..n).map(|_| g.sentence()).collect()
}
