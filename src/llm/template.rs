//! Chat templates: the model's Jinja template (`tokenizer.chat_template`) rendered with
//! minijinja the way Hugging Face renders it (trim_blocks, lstrip_blocks, `raise_exception`,
//! Python string methods, `bos_token`/`eos_token`), plus built-in fallbacks for models
//! without one.

use minijinja::value::{Kwargs, Value};
use minijinja::{context, Environment, Error, ErrorKind};
use serde::Serialize;

use super::error::{LlmError, Result};
use super::gguf::GgufFile;
use super::tokenizer::Tokenizer;

const NAME: &str = "chat";

/// "System: ...\nUser: ...\nAssistant:" for base models without a chat format.
const PLAIN: &str =
    "{% for m in messages %}{{ m.role | capitalize }}: {{ m.content }}\n{% endfor %}\
{% if add_generation_prompt %}Assistant:{% endif %}";

/// Gemma's turn format (as in Gemma 3's own template, without images and BOS): Gemma has no
/// system role, so a system message is prepended to the first user turn.
const GEMMA: &str = "{%- if messages and messages[0].role == 'system' -%}
{%- set first_user_prefix = messages[0].content + '\n\n' -%}{%- set loop_messages = messages[1:] -%}
{%- else -%}{%- set first_user_prefix = '' -%}{%- set loop_messages = messages -%}{%- endif -%}
{%- for message in loop_messages -%}
{%- set role = 'model' if message.role == 'assistant' else message.role -%}
{{ '<start_of_turn>' + role + '\n' + (first_user_prefix if loop.first else '') + message.content | trim + '<end_of_turn>\n' }}
{%- endfor -%}
{%- if add_generation_prompt -%}{{ '<start_of_turn>model\n' }}{%- endif -%}";

/// ChatML (`<|im_start|>role\n...<|im_end|>\n`).
const CHATML: &str = "{% for m in messages %}{{ '<|im_start|>' + m.role + '\n' + m.content + '<|im_end|>\n' }}{% endfor %}\
{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

/// One chat message.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Message {
    /// `system`, `user` or `assistant`.
    pub role: String,
    /// The text.
    pub content: String,
}

impl Message {
    /// A message with any role.
    pub fn new(role: impl Into<String>, content: impl Into<String>) -> Self {
        Self {
            role: role.into(),
            content: content.into(),
        }
    }

    /// A system message.
    pub fn system(content: impl Into<String>) -> Self {
        Self::new("system", content)
    }

    /// A user message.
    pub fn user(content: impl Into<String>) -> Self {
        Self::new("user", content)
    }

    /// An assistant message.
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new("assistant", content)
    }
}

/// A compiled chat template.
pub struct ChatTemplate {
    env: Environment<'static>,
    source: String,
    bos: String,
    eos: String,
}

impl std::fmt::Debug for ChatTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ChatTemplate")
            .field("source", &self.source)
            .field("bos", &self.bos)
            .field("eos", &self.eos)
            .finish()
    }
}

fn template_err(e: Error) -> LlmError {
    let mut msg = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        msg.push_str(&format!(": {s}"));
        source = s.source();
    }
    LlmError::Template(msg)
}

/// `raise_exception(message)`, as Hugging Face templates call it.
fn raise_exception(msg: String) -> std::result::Result<Value, Error> {
    Err(Error::new(ErrorKind::InvalidOperation, msg))
}

/// `tojson` (with optional `indent`), non-ASCII kept as is like Hugging Face's.
fn tojson(v: Value, kwargs: Kwargs) -> std::result::Result<Value, Error> {
    let indent: Option<usize> = kwargs.get("indent")?;
    kwargs.assert_all_used()?;
    let bad = |e: serde_json::Error| Error::new(ErrorKind::InvalidOperation, e.to_string());
    let text = match indent {
        None => serde_json::to_string(&v).map_err(bad)?,
        Some(n) => {
            let pad = vec![b' '; n];
            let fmt = serde_json::ser::PrettyFormatter::with_indent(&pad);
            let mut out = Vec::new();
            let mut ser = serde_json::Serializer::with_formatter(&mut out, fmt);
            v.serialize(&mut ser).map_err(bad)?;
            String::from_utf8_lossy(&out).into_owned()
        }
    };
    Ok(Value::from_safe_string(text))
}

impl ChatTemplate {
    /// Compiles `source` (syntax errors are reported here); `bos`/`eos` are the texts the
    /// template sees as `bos_token`/`eos_token`.
    pub fn new(source: &str, bos: &str, eos: &str) -> Result<Self> {
        let mut env = Environment::new();
        env.set_trim_blocks(true);
        env.set_lstrip_blocks(true);
        env.set_keep_trailing_newline(false);
        env.set_unknown_method_callback(minijinja_contrib::pycompat::unknown_method_callback);
        env.add_function("raise_exception", raise_exception);
        env.add_filter("tojson", tojson);
        env.add_template_owned(NAME, source.to_string())
            .map_err(template_err)?;
        Ok(Self {
            env,
            source: source.to_string(),
            bos: bos.to_string(),
            eos: eos.to_string(),
        })
    }

    /// The model's own template (`tokenizer.chat_template`), or `None` when the GGUF has none.
    pub fn from_gguf(g: &GgufFile, tok: &Tokenizer) -> Result<Option<Self>> {
        let Some(source) = g.opt("tokenizer.chat_template", |g, k| {
            g.get_str(k).map(str::to_string)
        })?
        else {
            return Ok(None);
        };
        let text = |id: Option<u32>| id.and_then(|id| tok.token_str(id)).unwrap_or("");
        Self::new(&source, text(tok.bos_id()), text(tok.eos_id())).map(Some)
    }

    /// "System: ...\nUser: ...\nAssistant:" for base models.
    pub fn plain() -> Self {
        Self::builtin(PLAIN)
    }

    /// Gemma's `<start_of_turn>` format, the system message folded into the first user turn.
    pub fn gemma() -> Self {
        Self::builtin(GEMMA)
    }

    /// ChatML (`<|im_start|>` ... `<|im_end|>`).
    pub fn chatml() -> Self {
        Self::builtin(CHATML)
    }

    /// A built-in template for a model without one, chosen by its special tokens: Gemma turns
    /// if it has `<start_of_turn>`, ChatML if it has `<|im_start|>`, else [`plain`](Self::plain).
    pub fn fallback(tok: &Tokenizer) -> Self {
        let has = |t: &str| tok.id_of(t).is_some();
        if has("<start_of_turn>") && has("<end_of_turn>") {
            Self::gemma()
        } else if has("<|im_start|>") && has("<|im_end|>") {
            Self::chatml()
        } else {
            Self::plain()
        }
    }

    /// The template's Jinja source.
    pub fn source(&self) -> &str {
        &self.source
    }

    fn builtin(source: &'static str) -> Self {
        match Self::new(source, "", "") {
            Ok(t) => t,
            // The built-in sources are constants covered by the unit tests.
            Err(e) => unreachable!("built-in chat template does not compile: {e}"),
        }
    }

    /// Renders `messages`; with `add_generation_prompt` the text ends where the assistant's
    /// reply begins.
    pub fn render(&self, messages: &[Message], add_generation_prompt: bool) -> Result<String> {
        let tmpl = self.env.get_template(NAME).map_err(template_err)?;
        tmpl.render(context! {
            messages => messages,
            add_generation_prompt => add_generation_prompt,
            bos_token => &self.bos,
            eos_token => &self.eos,
        })
        .map_err(template_err)
    }

    /// Renders a prompt for the model's reply: `messages` with the generation prompt, and
    /// when the last message is the assistant's, its text as the reply's beginning (a
    /// prefill the model continues) rather than a finished turn.
    pub fn render_reply(&self, messages: &[Message]) -> Result<String> {
        match messages.split_last() {
            Some((last, earlier)) if begins_reply(messages) => {
                Ok(self.render(earlier, true)? + &last.content)
            }
            _ => self.render(messages, true),
        }
    }
}

/// Whether `messages` end with the assistant's message: the beginning of the reply the
/// model continues (a prefill), not a finished turn.
pub fn begins_reply(messages: &[Message]) -> bool {
    messages.last().is_some_and(|m| m.role == "assistant")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMOLLM2: &str = "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful AI assistant named SmolLM, trained by Hugging Face<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";

    #[test]
    fn chatml_with_system_and_generation_prompt() {
        let t = ChatTemplate::new(SMOLLM2, "<|im_start|>", "<|im_end|>").unwrap();
        let msgs = [Message::system("You are John."), Message::user("Hi")];
        assert_eq!(
            t.render(&msgs, true).unwrap(),
            "<|im_start|>system\nYou are John.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
        let no_sys = t.render(&[Message::user("Hi")], false).unwrap();
        assert!(no_sys.starts_with("<|im_start|>system\nYou are a helpful AI"));
        assert!(no_sys.ends_with("<|im_start|>user\nHi<|im_end|>\n"));
        assert_eq!(
            ChatTemplate::chatml().render(&msgs, true).unwrap(),
            t.render(&msgs, true).unwrap()
        );
    }

    #[test]
    fn hf_features() {
        let src = "{{ bos_token }}{% for m in messages %}\n  {{ m.content.strip().upper() }}|{{ m | tojson }}\n{% endfor %}{{ eos_token }}";
        let t = ChatTemplate::new(src, "<s>", "</s>").unwrap();
        let out = t.render(&[Message::user(" é ")], false).unwrap();
        assert_eq!(out, "<s>  É|{\"role\":\"user\",\"content\":\" é \"}\n</s>");
    }

    #[test]
    fn raise_exception_and_syntax_errors() {
        let t = ChatTemplate::new("{{ raise_exception('no system role') }}", "", "").unwrap();
        let err = t.render(&[], false).unwrap_err().to_string();
        assert!(err.contains("no system role"), "{err}");
        let err = ChatTemplate::new("{% for %}", "", "").unwrap_err();
        assert!(matches!(err, LlmError::Template(_)), "{err}");
    }

    #[test]
    fn a_last_assistant_message_begins_the_reply() {
        let t = ChatTemplate::chatml();
        let asked = [Message::system("Be brief."), Message::user("Say hi.")];
        let begun = [asked[0].clone(), asked[1].clone(), Message::assistant("\"")];
        assert_eq!(
            t.render_reply(&begun).unwrap(),
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nSay hi.<|im_end|>\n<|im_start|>assistant\n\""
        );
        assert_eq!(
            t.render_reply(&asked).unwrap(),
            t.render(&asked, true).unwrap()
        );
    }

    #[test]
    fn builtins() {
        let msgs = [
            Message::system("Be brief."),
            Message::user("Hi"),
            Message::assistant("Hello"),
        ];
        assert_eq!(
            ChatTemplate::plain().render(&msgs, true).unwrap(),
            "System: Be brief.\nUser: Hi\nAssistant: Hello\nAssistant:"
        );
        assert_eq!(
            ChatTemplate::gemma().render(&msgs, true).unwrap(),
            "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\nHello<end_of_turn>\n<start_of_turn>model\n"
        );
    }
}
