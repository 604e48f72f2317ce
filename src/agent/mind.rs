//! What an agent's cognition needs to ask the model, and the asking: closed-set questions
//! through `choose`, free text through constrained generation, with logged fallbacks.

use std::cell::RefCell;
use std::sync::Arc;

use chrono::NaiveDate;
use serde::{Deserialize, Serialize};

use crate::llm::batch::Port;
use crate::llm::constrain::{self, ConstraintSpec, Letters, PlanTimes, TokenTable};
use crate::llm::{
    Choice, ChooseRequest, GenerateRequest, Inference, Message, Prompt, Request, Response, Sampling,
};
use crate::memory::TextEmbedder;

use super::state::PlanLine;

/// A model answer that could not be used, and what was used instead.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Fallback {
    pub agent: String,
    pub purpose: String,
    pub reason: String,
    /// What the model wrote, if anything.
    pub output: String,
    /// What the run used instead.
    pub used: String,
}

/// Sampling settings for free text (plans, dialogue): seeded per request, so reproducible.
pub fn text_sampling() -> Sampling {
    let mut s = Sampling::temperature(0.7);
    s.top_p = 0.9;
    s
}

/// One agent's connection to the model for one task, with the time it happens at.
pub struct Mind<'a> {
    pub name: String,
    pub port: Port,
    pub engine: &'a RefCell<Box<dyn Inference>>,
    pub table: &'a Arc<TokenTable>,
    /// For relevance priors (e.g. which place fits an activity).
    pub embedder: Option<&'a RefCell<Box<dyn TextEmbedder>>>,
    pub date: NaiveDate,
    pub minutes: u32,
    /// Per need ([`crate::world::Need::ALL`] order), the P(yes) above which an answer
    /// counts as satisfying it (0.5 unless the model's manifest tunes it).
    pub yes_threshold: [f32; 5],
    /// The P(yes) above which the agent changes its plan (0.5 unless the manifest tunes it).
    pub change_threshold: f32,
    /// The letters generated text may use (the world's script).
    pub letters: Letters,
    fallbacks: RefCell<Vec<Fallback>>,
}

/// A chat prompt: the agent's context as the system message, then the question.
pub fn chat(system: &str, question: &str) -> Prompt {
    Prompt::Chat(vec![Message::system(system), Message::user(question)])
}

impl<'a> Mind<'a> {
    /// A mind for `name` at `date`/`minutes`, asking through `port`.
    pub fn new(
        name: &str,
        port: Port,
        engine: &'a RefCell<Box<dyn Inference>>,
        table: &'a Arc<TokenTable>,
        date: NaiveDate,
        minutes: u32,
    ) -> Self {
        Self {
            name: name.to_string(),
            port,
            engine,
            table,
            embedder: None,
            date,
            minutes,
            yes_threshold: [0.5; 5],
            change_threshold: 0.5,
            letters: Letters::Any,
            fallbacks: RefCell::new(Vec::new()),
        }
    }

    /// The same mind with need thresholds other than 0.5 (a model's `yes_threshold`).
    pub fn with_yes_threshold(mut self, yes_threshold: [f32; 5]) -> Self {
        self.yes_threshold = yes_threshold;
        self
    }

    /// The same mind with a plan-change threshold other than 0.5.
    pub fn with_change_threshold(mut self, threshold: f32) -> Self {
        self.change_threshold = threshold;
        self
    }

    /// The same mind writing only `letters` (a world's [`letters`](crate::world::World::letters)).
    pub fn with_letters(mut self, letters: Letters) -> Self {
        self.letters = letters;
        self
    }

    /// The same mind with an embedder for relevance priors.
    pub fn with_embedder(mut self, embedder: &'a RefCell<Box<dyn TextEmbedder>>) -> Self {
        self.embedder = Some(embedder);
        self
    }

    /// Cosine similarity of `text` to each of `options` (`None` without an embedder or on
    /// an embedding error).
    pub fn similarities(&self, text: &str, options: &[String]) -> Option<Vec<f32>> {
        let embedder = self.embedder?;
        let mut e = embedder.borrow_mut();
        let mut texts: Vec<&str> = vec![text];
        texts.extend(options.iter().map(String::as_str));
        let v = crate::memory::embedder::embed_checked(&mut **e, &texts).ok()?;
        Some(
            v[1..]
                .iter()
                .map(|o| crate::embed::cosine(&v[0], o))
                .collect(),
        )
    }

    /// Records a fallback (it goes to the event log).
    pub fn fallback(&self, purpose: &str, reason: impl Into<String>, output: &str, used: &str) {
        let f = Fallback {
            agent: self.name.clone(),
            purpose: purpose.to_string(),
            reason: reason.into(),
            output: output.chars().take(300).collect(),
            used: used.chars().take(300).collect(),
        };
        tracing::info!(agent = %f.agent, purpose = %f.purpose, reason = %f.reason, "fallback");
        self.fallbacks.borrow_mut().push(f);
    }

    /// The fallbacks recorded so far (and forgets them).
    pub fn take_fallbacks(&self) -> Vec<Fallback> {
        std::mem::take(&mut self.fallbacks.borrow_mut())
    }

    /// Tokens `prompt` takes on the engine (`usize::MAX` if it cannot be rendered).
    pub fn prompt_len(&self, prompt: &Prompt) -> usize {
        self.engine
            .borrow()
            .prompt_tokens(prompt)
            .map_or(usize::MAX, |t| t.len())
    }

    /// The engine's context budget.
    pub fn budget(&self) -> usize {
        self.engine.borrow().context_budget()
    }

    /// A `choose` request over `options`.
    pub fn choose_request(system: &str, question: &str, options: &[&str]) -> Request {
        Request::Choose(ChooseRequest::new(
            chat(system, question),
            options.iter().copied(),
        ))
    }

    /// A yes/no question as a `choose` request.
    pub fn yes_no_request(system: &str, question: &str) -> Request {
        let q = format!("{question} Answer yes or no.");
        Self::choose_request(system, &q, &["yes", "no"])
    }

    /// Interprets a `choose` result, recording a fallback to option `default` on error.
    pub fn chosen(
        &self,
        purpose: &str,
        result: Result<Response, crate::llm::LlmError>,
        options: &[&str],
        default: usize,
    ) -> Option<Choice> {
        match result {
            Ok(Response::Chosen(c)) if c.index < options.len() => Some(c),
            Ok(_) => {
                self.fallback(purpose, "not a choice", "", options[default]);
                None
            }
            Err(e) => {
                self.fallback(purpose, e.to_string(), "", options[default]);
                None
            }
        }
    }

    /// Interprets a yes/no result: yes where it is the more probable answer (`default` on
    /// error).
    pub fn yes(
        &self,
        purpose: &str,
        result: Result<Response, crate::llm::LlmError>,
        default: bool,
    ) -> bool {
        self.yes_above(purpose, result, default, 0.5)
    }

    /// Interprets a yes/no result as yes when P(yes) is above `threshold` (`default` on
    /// error).
    pub fn yes_above(
        &self,
        purpose: &str,
        result: Result<Response, crate::llm::LlmError>,
        default: bool,
        threshold: f32,
    ) -> bool {
        let options = ["yes", "no"];
        match self.chosen(purpose, result, &options, usize::from(!default)) {
            Some(c) => c.probs.first().is_some_and(|&p| p > threshold),
            None => default,
        }
    }

    /// Asks a yes/no question.
    pub async fn ask_yes_no(&self, purpose: &str, system: &str, question: &str) -> bool {
        self.ask_yes_no_above(purpose, system, question, 0.5).await
    }

    /// Asks a yes/no question; yes when P(yes) is above `threshold`.
    pub async fn ask_yes_no_above(
        &self,
        purpose: &str,
        system: &str,
        question: &str,
        threshold: f32,
    ) -> bool {
        let r = self
            .port
            .run(vec![(
                purpose.to_string(),
                Self::yes_no_request(system, question),
            )])
            .await;
        let r = r.into_iter().next().unwrap_or_else(missing);
        self.yes_above(purpose, r, false, threshold)
    }

    /// Asks a question with a closed set of answers; `None` (and a fallback) on error.
    pub async fn ask_choice(
        &self,
        purpose: &str,
        system: &str,
        question: &str,
        options: &[&str],
        default: usize,
    ) -> Option<Choice> {
        let r = self
            .port
            .run(vec![(
                purpose.to_string(),
                Self::choose_request(system, question, options),
            )])
            .await;
        let r = r.into_iter().next().unwrap_or_else(missing);
        self.chosen(purpose, r, options, default)
    }

    /// A generation request constrained to `spec`, seeded from the port.
    pub fn generate_request(
        &self,
        prompt: Prompt,
        spec: ConstraintSpec,
        max_tokens: usize,
    ) -> Request {
        let mut g = GenerateRequest::new(prompt, max_tokens);
        g.sampling = text_sampling();
        g.seed = self.port.next_seed();
        g.constrain(self.table, spec);
        Request::Generate(g)
    }

    /// Generated text of a result; records a fallback and gives `None` on error.
    pub fn generated(
        &self,
        purpose: &str,
        result: Result<Response, crate::llm::LlmError>,
    ) -> Option<String> {
        match result {
            Ok(Response::Generated(g)) => Some(g.text),
            Ok(_) => {
                self.fallback(purpose, "not a generation", "", "");
                None
            }
            Err(e) => {
                self.fallback(purpose, e.to_string(), "", "");
                None
            }
        }
    }

    /// One line of free text (at most `max_chars`), trimmed; `None` if nothing usable came
    /// back (the caller falls back and says so).
    pub async fn ask_line(
        &self,
        purpose: &str,
        system: &str,
        question: &str,
        max_chars: usize,
    ) -> Option<String> {
        let req = self.generate_request(
            chat(system, question),
            ConstraintSpec::line(max_chars).in_letters(self.letters),
            max_chars / 2 + 16,
        );
        let r = self.port.run(vec![(purpose.to_string(), req)]).await;
        let text = self.generated(purpose, r.into_iter().next().unwrap_or_else(missing))?;
        let line = clean_line(&text);
        if line.is_empty() {
            None
        } else {
            Some(line)
        }
    }

    /// A plan written under `times`; the well-formed lines parsed back (possibly fewer than
    /// asked if generation stopped early; the caller checks and falls back).
    pub async fn ask_plan(
        &self,
        purpose: &str,
        system: &str,
        question: &str,
        times: PlanTimes,
        max_activity_chars: usize,
    ) -> (Vec<PlanLine>, String) {
        let lines = match &times {
            PlanTimes::Fixed(t) => t.len(),
            PlanTimes::Increasing { max_lines, .. } => *max_lines,
        };
        let max_tokens = lines * (max_activity_chars / 3 + 10) + 8;
        let req = self.generate_request(
            chat(system, question),
            ConstraintSpec::plan(times, max_activity_chars).in_letters(self.letters),
            max_tokens,
        );
        let r = self.port.run(vec![(purpose.to_string(), req)]).await;
        let text = self
            .generated(purpose, r.into_iter().next().unwrap_or_else(missing))
            .unwrap_or_default();
        (plan_lines(&text, max_activity_chars), text)
    }
}

/// The well-formed lines of a generated plan with their activities cleaned, a line that
/// reached `max_activity_chars` ended where it can ([`end_of_cut_line`]). Line by line, so
/// that a cut line is known by its length before its trailing spaces are trimmed
/// ("... and prepares the " is 60 characters, 59 after).
pub fn plan_lines(text: &str, max_activity_chars: usize) -> Vec<PlanLine> {
    text.split('\n')
        .flat_map(|line| {
            let raw = crate::formats::clock::split_plan_line(line)
                .map_or(0, |(_, a)| a.trim_end_matches('\r').chars().count());
            constrain::parse_plan(line).into_iter().map(move |(m, a)| {
                let cut = raw >= max_activity_chars;
                let a = if cut { end_of_cut_line(&a) } else { a };
                PlanLine::new(m, clean_activity(&a))
            })
        })
        .filter(|l| !l.activity.is_empty())
        .collect()
}

/// The result used when a batch returned fewer results than requests (never expected).
pub fn missing() -> Result<Response, crate::llm::LlmError> {
    Err(crate::llm::LlmError::InvalidRequest(
        "no result for this request".into(),
    ))
}

/// First line of `text`, trimmed, with surrounding quotes removed and whitespace collapsed.
pub fn clean_line(text: &str) -> String {
    let first = text.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    let collapsed = first.split_whitespace().collect::<Vec<_>>().join(" ");
    collapsed
        .trim_matches(|c: char| c == '"' || c == '\'' || c.is_whitespace())
        .to_string()
}

/// An activity as the plan keeps it: cut before a `;` or a time-like `hh:mm` that a small
/// model runs on with (`"Lunch; 13:00 am: Lunch"` → `"Lunch"`), trailing punctuation and
/// spaces removed. Empty if nothing usable is left (the caller falls back).
pub fn clean_activity(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut end = text.find(';').unwrap_or(text.len());
    for i in 0..bytes.len().saturating_sub(2) {
        if bytes[i].is_ascii_digit() && bytes[i + 1] == b':' && bytes[i + 2].is_ascii_digit() {
            let start = if i > 0 && bytes[i - 1].is_ascii_digit() {
                i - 1
            } else {
                i
            };
            end = end.min(start);
            break;
        }
    }
    let mut out = text[..end].to_string();
    // Markdown emphasis and a second sentence are the model talking about the plan ("Cook
    // dinner. Keep the focus on finishing", "Hang out. **Rewritten Plan:**").
    if let Some(i) = out.find("**") {
        out.truncate(i);
    }
    if let Some(i) = second_sentence(&out) {
        out.truncate(i);
    }
    // A duration or a number in parentheses ("(15 minutes)", "(2") and an explanation after
    // " - " are the model talking about the plan, not the activity.
    if let Some(i) = out.find('(') {
        let inner = out[i..].to_ascii_lowercase();
        let number = inner[1..]
            .trim_start()
            .starts_with(|c: char| c.is_ascii_digit());
        if number || inner.contains("minute") || inner.contains("hour") || inner.contains("min)") {
            out.truncate(i);
        }
    }
    if let Some(i) = out.find(" - ") {
        out.truncate(i);
    }
    // A trailing duration: "... at the counter for 15", "... for 15 minutes".
    if let Some(i) = out.rfind(" for ") {
        let words: Vec<&str> = out[i + 5..].split_whitespace().collect();
        let number = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_ascii_digit());
        let unit = |w: &str| w.starts_with("min") || w.starts_with("hour");
        let duration = match words.as_slice() {
            [n] => number(n),
            [n, u] => number(n) && unit(u),
            _ => false,
        };
        if duration {
            out.truncate(i);
        }
    }
    out.trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | '-' | '('))
        .trim()
        .to_string()
}

/// Words that do not end an activity: a line cut at the length limit after one of them
/// ("... opening the delivery box and") loses it.
const DANGLING: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "to", "of", "in", "on", "at", "by", "for", "with",
    "from", "into", "his", "her", "their", "my", "its", "while", "as", "some", "if", "that",
    "it's", "is", "are", "was", "were", "be", "who", "which", "than", "about", "what", "how",
    "will", "can", "could", "would", "should",
];

/// Whether an activity ends on a word that cannot end a phrase ("... and prepares the", "...
/// to see if it's"): a line the length limit cut and nothing ended.
pub fn ends_unfinished(activity: &str) -> bool {
    let t = activity
        .trim_end_matches(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | ';' | '-'));
    let last = t.rsplit(' ').next().unwrap_or("").to_lowercase();
    t.contains(' ') && DANGLING.contains(&last.as_str())
}

/// A line that reached the length limit, ended where it can: the last word (perhaps cut)
/// dropped, then an unclosed parenthesis or quotation, then dangling words and punctuation
/// (`"Cook the main course (e.g., chicken, qu"` → `"Cook the main course"`), then the last
/// clause after a comma or "and", which the limit left unfinished, where three words stay
/// (`"checks the fridge and prepares the"` → `"checks the fridge"`). A line of one word is
/// kept as it is.
pub fn end_of_cut_line(text: &str) -> String {
    let Some(space) = text.trim_end().rfind(' ') else {
        return text.to_string();
    };
    let mut out = text[..space].to_string();
    for open in ['(', '"', '“', '\''] {
        let close = match open {
            '(' => ')',
            '“' => '”',
            c => c,
        };
        let (opens, closes) = if open == close {
            (out.matches(open).count(), 0)
        } else {
            (out.matches(open).count(), out.matches(close).count())
        };
        let unclosed = if open == close {
            opens % 2 == 1
        } else {
            opens > closes
        };
        // An apostrophe inside a word ("Monica's") is not a quotation.
        let quote_start = out
            .rfind(open)
            .filter(|&i| open != '\'' || i == 0 || out[..i].ends_with(' '));
        if let (true, Some(i)) = (unclosed, quote_start) {
            out.truncate(i);
        }
    }
    loop {
        let trimmed = out.trim_end_matches(|c: char| {
            c.is_whitespace() || matches!(c, ',' | ':' | ';' | '-' | '—' | '(' | '"' | '\'')
        });
        let last = trimmed.rsplit(' ').next().unwrap_or("");
        if trimmed.contains(' ') && DANGLING.contains(&last.to_lowercase().as_str()) {
            out = trimmed[..trimmed.len() - last.len()].to_string();
        } else {
            out = trimmed.to_string();
            break;
        }
    }
    if let Some(i) = [", ", " and "]
        .iter()
        .filter_map(|sep| out.rfind(sep))
        .max()
    {
        if out[..i].split_whitespace().count() >= 3 {
            out.truncate(i);
        }
    }
    if out.is_empty() {
        text.to_string()
    } else {
        out
    }
}

/// Where a second sentence starts in `text` (the byte after the first one's period): a
/// period, a space and a capital letter, the period not ending a short capitalised word
/// ("Dr. Smith", "Mrs. Lin").
fn second_sentence(text: &str) -> Option<usize> {
    for (i, _) in text.match_indices(". ") {
        let next = text[i + 2..].chars().next();
        if !next.is_some_and(char::is_uppercase) {
            continue;
        }
        let word = text[..i]
            .rsplit(|c: char| !c.is_alphabetic())
            .next()
            .unwrap_or("");
        let abbreviation = word.chars().count() <= 3 && word.starts_with(char::is_uppercase);
        if !abbreviation {
            return Some(i + 1);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_cut_at_the_limit_end_on_a_whole_word() {
        let cases = [
            (
                "Begin the unpacking process by opening the delivery box and",
                "Begin the unpacking process by opening the delivery box",
            ),
            (
                "Rachel Green wakes up in the bridal suite, ready to greet, '",
                "Rachel Green wakes up in the bridal suite",
            ),
            (
                "Cook the ingredients for the main course (e.g., chicken, qu",
                "Cook the ingredients for the main course",
            ),
            (
                "Joey Tribbiani looks at Monica's refrigerator and opens th",
                "Joey Tribbiani looks at Monica's refrigerator",
            ),
            // From a Lin family day: the limit fell on a space after a whole word.
            (
                "John Lin checks the fridge for ingredients and prepares the",
                "John Lin checks the fridge for ingredients",
            ),
            (
                "Play the third section of the composition to see if it's in",
                "Play the third section of the composition to see",
            ),
            ("Go out, and buy some", "Go out, and buy"),
            ("Supercalifragilistic", "Supercalifragilistic"),
            (
                "Say \"hello there\" to the neighbours and the",
                "Say \"hello there\" to the neighbours",
            ),
        ];
        for (line, kept) in cases {
            assert_eq!(end_of_cut_line(line), kept, "{line:?}");
        }
    }

    #[test]
    fn a_plan_line_cut_on_a_space_is_known_as_cut() {
        let text = "07:00 am: John Lin checks the fridge for ingredients and prepares the \n\
                    07:15 am: John Lin measures out eggs and milk\n";
        let lines: Vec<String> = plan_lines(text, 60)
            .into_iter()
            .map(|l| l.activity)
            .collect();
        assert_eq!(
            lines,
            [
                "John Lin checks the fridge for ingredients",
                "John Lin measures out eggs and milk"
            ]
        );
        // Under the limit a line is kept whole, a final "and" too.
        let whole = plan_lines("07:00 am: Eat bread and\n", 60);
        assert_eq!(whole[0].activity, "Eat bread and");
    }

    #[test]
    fn activities_are_cut_before_run_on_times() {
        // (the model's line, what the plan keeps)
        let cases = [
            ("Lunch; 13:00 am: Lunch; 14:00", "Lunch"),
            ("11:45 am: 11:45", ""),
            ("Go to class at 09:00", "Go to class at"),
            ("Read a book.", "Read a book."),
            (
                "Wake up and take a shower (15 minutes)",
                "Wake up and take a shower",
            ),
            (
                "Wake up and get dressed (15 minutes) - This includes getting",
                "Wake up and get dressed",
            ),
            ("Call Mei (his wife)", "Call Mei (his wife)"),
            (
                "Serve customers at the counter for 15",
                "Serve customers at the counter",
            ),
            ("Wait for 2 friends", "Wait for 2 friends"),
            ("Read for 30 minutes", "Read"),
            ("Café au lait, then 3 emails", "Café au lait, then 3 emails"),
            (
                "Cook through the dinner service. Keep the focus on finishing",
                "Cook through the dinner service.",
            ),
            (
                "Hang out at Central Perk. **Rewritten Plan:**",
                "Hang out at Central Perk.",
            ),
            ("**Rewritten Plan:**", ""),
            ("Joey checks his email. (15", "Joey checks his email."),
            ("Cook pasta (2 pans)", "Cook pasta"),
            ("Visit Dr. Smith. Then go home", "Visit Dr. Smith."),
            (
                "Buy milk. and eggs at the market",
                "Buy milk. and eggs at the market",
            ),
        ];
        for (line, kept) in cases {
            assert_eq!(clean_activity(line), kept, "{line:?}");
        }
    }

    #[test]
    fn clean_line_takes_the_first_non_empty_line() {
        assert_eq!(clean_line("\n  \"Hi  there\"  \nmore"), "Hi there");
        assert_eq!(clean_line(""), "");
    }
}
