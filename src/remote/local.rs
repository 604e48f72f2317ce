//! The model's tokenizer and chat template, held locally: `choose` sends the chat-templated
//! text (prompt + option + end of turn) to be scored, and prompt budgets are counted here.

use std::path::Path;

use super::RemoteError;
use crate::llm::gguf::GgufFile;
use crate::llm::request::Prompt;
use crate::llm::template::ChatTemplate;
use crate::llm::tokenizer::Tokenizer;

/// A tokenizer and chat template of the served model.
pub struct LocalModel {
    pub tokenizer: Tokenizer,
    pub template: ChatTemplate,
    /// Text of the token that ends an assistant turn (appended to `choose` options of chat
    /// prompts, as the engine does).
    pub end_of_turn: Option<String>,
}

impl LocalModel {
    /// Loads from a `.gguf` (metadata only, no weights) or a `tokenizer.json` (with the chat
    /// template of a `tokenizer_config.json` beside it, else a built-in one).
    pub fn load(path: &Path) -> Result<Self, RemoteError> {
        let err = |e: crate::llm::LlmError| RemoteError::Tokenizer {
            path: path.display().to_string(),
            reason: e.to_string(),
        };
        let is_gguf = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("gguf"));
        let (tokenizer, template) = if is_gguf {
            let g = GgufFile::open(path).map_err(err)?;
            let tok = Tokenizer::from_gguf(&g).map_err(err)?;
            let tmpl = ChatTemplate::from_gguf(&g, &tok).map_err(err)?;
            let tmpl = tmpl.unwrap_or_else(|| ChatTemplate::fallback(&tok));
            (tok, tmpl)
        } else {
            let tok = Tokenizer::from_file(path).map_err(err)?;
            let tmpl = template_beside(path, &tok).map_err(err)?;
            let tmpl = tmpl.unwrap_or_else(|| ChatTemplate::fallback(&tok));
            (tok, tmpl)
        };
        let end_of_turn = tokenizer
            .end_of_turn_id()
            .and_then(|id| tokenizer.token_str(id))
            .map(str::to_string);
        Ok(Self {
            tokenizer,
            template,
            end_of_turn,
        })
    }

    /// The text the model sees for `prompt` (chat template applied, generation prompt added).
    pub fn prompt_text(&self, prompt: &Prompt) -> crate::llm::error::Result<String> {
        match prompt {
            Prompt::Chat(m) => self.template.render_reply(m),
            Prompt::Text(t) => Ok(t.clone()),
            Prompt::Tokens(ids) => self.tokenizer.decode(ids),
        }
    }

    /// The token ids of `prompt`, as the engine would count them.
    pub fn prompt_tokens(&self, prompt: &Prompt) -> crate::llm::error::Result<Vec<u32>> {
        match prompt {
            Prompt::Tokens(ids) => Ok(ids.clone()),
            p => self.tokenizer.encode_prompt(&self.prompt_text(p)?, true),
        }
    }

    /// The text scored for `option` after a prompt: the option, then the end of turn for
    /// chat prompts.
    pub fn option_text(&self, prompt: &Prompt, option: &str) -> String {
        match (prompt, &self.end_of_turn) {
            (Prompt::Chat(_), Some(eot)) => format!("{option}{eot}"),
            _ => option.to_string(),
        }
    }

    /// The token ids scored for `option` after a prompt, as the engine scores them: the
    /// option's tokens, then the end-of-turn token for chat prompts.
    pub fn option_ids(&self, prompt: &Prompt, option: &str) -> crate::llm::error::Result<Vec<u32>> {
        let terminator = match prompt {
            Prompt::Chat(_) => self.tokenizer.end_of_turn_id(),
            _ => None,
        };
        self.tokenizer.option_ids(option, terminator)
    }

    /// Tokens of the scored option text (option tokens, plus the end of turn for chat).
    pub fn option_tokens(&self, prompt: &Prompt, option: &str) -> usize {
        self.option_ids(prompt, option).map_or(1, |ids| ids.len())
    }
}

/// The `chat_template` of a `tokenizer_config.json` beside `tokenizer.json`, if any.
fn template_beside(
    path: &Path,
    tok: &Tokenizer,
) -> crate::llm::error::Result<Option<ChatTemplate>> {
    let cfg = path.with_file_name("tokenizer_config.json");
    let Ok(text) = std::fs::read_to_string(&cfg) else {
        return Ok(None);
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return Ok(None);
    };
    let Some(src) = v.get("chat_template").and_then(|t| t.as_str()) else {
        return Ok(None);
    };
    let text_of = |id: Option<u32>| id.and_then(|id| tok.token_str(id)).unwrap_or("");
    ChatTemplate::new(src, text_of(tok.bos_id()), text_of(tok.eos_id())).map(Some)
}
