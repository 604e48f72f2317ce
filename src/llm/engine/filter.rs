//! [`Engine::run`]: the batch, then (in fault-injection tests) an answer filter between the
//! model and the caller.

use super::{Engine, Event};
use crate::llm::error::Result;
use crate::llm::request::{Request, Response};

/// Rewrites each answer of [`Engine::run`] (fault injection: what if the model said this?).
pub type AnswerFilter = Box<dyn FnMut(&Request, Result<Response>) -> Result<Response> + Send>;

impl Engine {
    /// Runs every request as one batch; responses come back in request order. A request that
    /// cannot run (over budget, bad input) gets its own error; the others still run.
    pub fn run(
        &mut self,
        requests: Vec<Request>,
        on_event: impl FnMut(Event<'_>),
    ) -> Vec<Result<Response>> {
        let Some(mut filter) = self.answer_filter.take() else {
            return self.run_model(requests, on_event);
        };
        let asked = requests.clone();
        let answers = self.run_model(requests, on_event);
        let out = asked
            .iter()
            .zip(answers)
            .map(|(r, a)| filter(r, a))
            .collect();
        self.answer_filter = Some(filter);
        out
    }

    /// Puts `filter` between the model and every caller of [`Engine::run`]: a test can make
    /// the "model" answer empty, huge, malformed or hostile text and see the program cope.
    pub fn set_answer_filter(&mut self, filter: Option<AnswerFilter>) {
        self.answer_filter = filter;
    }
}
