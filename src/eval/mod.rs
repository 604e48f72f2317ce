//! Evaluation of runs: agreement with human labels (Humanoid Agents, Table 1), interviews
//! and information diffusion (Generative Agents).
//!
//! [`judge`](mod@judge) scores a model's judgements of activities against labels without a
//! run. [`snapshot`] reads a run as it stood at a step, [`interview`](mod@interview) asks an
//! agent questions from its retrieved memories, [`diffusion`](mod@diffusion) asks every
//! agent whether it knows a fact and [`density`](mod@density) measures the relationship
//! network, and [`converse`](mod@converse) talks a run's conversations again. The rest of this page is about the annotation sheets: export a run's
//! judgements as a sheet, then score annotators' sheets against the run.
//!
//! **Items.** One row per *new* activity of an agent and one per conversation.
//! - An activity is new at a step when the agent's activity text differs from its previous
//!   one, or when the run asked the model about its needs at that step (a `model_call` with
//!   purpose `need_fullness`: the day's first activity is judged again even when its text
//!   repeats). A continued activity keeps its judgement (`src/agent/step.rs`), so it is not
//!   a new item.
//! - **Needs**: the run logs its judgement itself: the `needs` event of the step lists the
//!   needs the model said yes to (`satisfied`, one `choose` yes/no per need in
//!   `src/agent/act.rs`). That list is the run's answer ("yes" when listed), not the change
//!   of the need's level (which also decays at random).
//! - **Emotion**: the agent's emotion when the step's `needs` event is logged: the `to` of
//!   the activity's `emotion` event, or the emotion it already had (an unchanged, frozen or
//!   unanswered emotion). Later emotion changes from conversations of the same step are not
//!   counted. Before any `emotion` event the world's starting emotion holds.
//! - **Brought them closer** (conversations): each participant judged whether they enjoyed
//!   it (closeness +1 if so, −1 if not); both `closeness` events are logged just before their
//!   `conversation` event. The run's answer is "yes" when every participant enjoyed it (the
//!   closeness of both rose), else "no".
//!
//! **Sheet.** [`sheet::KEY_COLUMNS`]: key columns (`id`, `kind`, `step`, `date`, `time`, `agent`,
//! `place`, `text`), then the run's answers in `model_*` columns and empty `label_*` columns
//! (a column that does not apply to a row's kind stays empty). The instructions shown to
//! annotators go in a separate text file ([`sheet::instructions`]).
//!
//! **Scores** ([`score()`]): per dimension, the annotators' majority (ties and all-missing
//! items are skipped and counted), the F1 of the run against it (yes = positive; emotion:
//! micro-F1 = accuracy), Fleiss' κ between annotators over fully labelled items, and the
//! share of positives predicted vs annotated.

pub mod ablation;
pub mod converse;
pub mod density;
pub mod diffusion;
pub mod error;
pub mod interview;
pub mod judge;
pub mod labels;
pub mod place;
pub mod place_check;
pub mod place_kept;
pub mod replan;
pub mod run_dir;
pub mod score;
pub mod sheet;
pub mod snapshot;
pub mod step_check;

pub use density::{density, Density};
pub use diffusion::{diffusion, DiffusionReport};
pub use error::EvalError;
pub use interview::{interview, Answer, InterviewOptions};
pub use labels::read_labels;
pub use score::{fleiss_kappa, majority, score, DimensionScore, ScoreReport, Vote};
pub use sheet::{export, instructions, items_from_run, Dimension, Item, ItemKind};
pub use snapshot::Snapshot;
