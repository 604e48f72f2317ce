//! Tests of the tokenizer and chat template against the real models and llama.cpp's ids.

use std::path::Path;
use std::time::Instant;

use humanoid::llm::gguf::GgufFile;
use humanoid::llm::template::{ChatTemplate, Message};
use humanoid::llm::tokenizer::{Tokenizer, TokenizerMetadata};
use humanoid::llm::LlmError;

use crate::util;

fn load(path: &Path) -> (GgufFile, Tokenizer) {
    let g = GgufFile::open(path).expect("model opens");
    let start = Instant::now();
    let tok = Tokenizer::from_gguf(&g).expect("tokenizer builds");
    eprintln!(
        "{}: tokenizer built in {:?}",
        path.display(),
        start.elapsed()
    );
    (g, tok)
}

fn ids(v: &serde_json::Value) -> Vec<u32> {
    v.as_array()
        .expect("ids array")
        .iter()
        .map(|x| x.as_u64().expect("id") as u32)
        .collect()
}

/// More strings that must survive encode → decode and encode → token bytes.
const EXTRA_TEXTS: &[&str] = &[
    "\r\n\t \n  \n\n\n   x",
    "DON'T don't I'LL 1,234.5 0x1F 3.14e-10",
    "<table><tr><td>a</td></tr></table> <start_of_turn> <|im_start|> <|unknown|>",
    "trailing spaces   ",
    // (A literal "▁" decodes as a space in SentencePiece models, in llama.cpp too.)
    " <0x41> \u{0} \u{7f} \u{200b}\u{feff}",
    "🤖🤖🤖 ﷽ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 \u{10FFFD}",
];

/// Every reference string gives llama.cpp's ids, decodes back, and its token bytes concatenate
/// to the text.
fn check_reference(name: &str, tok: &Tokenizer) {
    let reference = util::llamacpp_reference();
    let cases = reference[name]["tokenize"]
        .as_array()
        .expect("tokenize cases");
    assert!(!cases.is_empty());
    let mut failures = Vec::new();
    for case in cases {
        let text = case["text"].as_str().expect("text");
        assert_eq!(case["add_bos"], false);
        assert_eq!(case["special"], true);
        let want = ids(&case["ids"]);
        let got = tok.encode(text, true).expect("encodes");
        if got != want {
            failures.push(format!("{text:?}\n  got  {got:?}\n  want {want:?}"));
            continue;
        }
        assert_eq!(
            tok.decode(&got).expect("decodes"),
            text,
            "round trip of {text:?}"
        );
        let bytes: Vec<u8> = got.iter().flat_map(|&id| tok.token_bytes(id)).collect();
        assert_eq!(bytes, text.as_bytes(), "token bytes of {text:?}");
    }
    assert!(
        failures.is_empty(),
        "{name}: ids differ from llama.cpp:\n{}",
        failures.join("\n")
    );
    for text in EXTRA_TEXTS {
        for special in [true, false] {
            let got = tok.encode(text, special).expect("encodes");
            assert_eq!(tok.decode(&got).unwrap(), *text, "round trip of {text:?}");
            let bytes: Vec<u8> = got.iter().flat_map(|&id| tok.token_bytes(id)).collect();
            assert_eq!(bytes, text.as_bytes(), "token bytes of {text:?}");
        }
    }
    let long = reference[name]["tokenize"][0]["text"]
        .as_str()
        .unwrap()
        .repeat(200);
    let start = Instant::now();
    let n = tok.encode(&long, true).unwrap().len();
    eprintln!(
        "{name}: {} bytes -> {n} tokens in {:?}",
        long.len(),
        start.elapsed()
    );

    for case in reference[name]["top_logits"]
        .as_array()
        .expect("top_logits cases")
    {
        let prompt = case["prompt"].as_str().expect("prompt");
        let want = ids(&case["ids"]);
        let has_bos = tok.bos_id().is_some() && want.first() == tok.bos_id().as_ref();
        assert_eq!(
            tok.add_bos(),
            has_bos,
            "{name}: add_bos vs reference for {prompt:?}"
        );
        let body = if has_bos { &want[1..] } else { &want[..] };
        assert_eq!(tok.encode(prompt, true).unwrap(), body, "{prompt:?}");
        assert_eq!(tok.encode_prompt(prompt, true).unwrap(), want, "{prompt:?}");
    }
}

#[test]
fn smollm2_matches_llamacpp() {
    let (_, tok) = load(&util::smollm2());
    check_reference("smollm2", &tok);
}

#[test]
fn gemma3_matches_llamacpp() {
    let (_, tok) = load(&util::gemma3());
    check_reference("gemma3", &tok);
}

#[test]
fn smollm2_special_ids() {
    let (_, tok) = load(&util::smollm2());
    assert_eq!(tok.vocab_size(), 49152);
    assert_eq!(tok.bos_id(), Some(1));
    assert_eq!(tok.eos_id(), Some(2));
    assert!(!tok.add_bos());
    assert_eq!(tok.id_of("<|im_start|>"), Some(1));
    assert_eq!(tok.token_str(2), Some("<|im_end|>"));
    assert_eq!(tok.stop_ids(), &[2, 0]);
    assert_eq!(tok.token_bytes(216), b" ");
    assert_eq!(tok.token_bytes(1), b"<|im_start|>");
    assert!(tok.token_bytes(1_000_000).is_empty());
    assert!(tok.decode(&[1_000_000]).is_err());
    // Without special parsing, special-token text is plain text.
    let plain = tok.encode("<|im_end|>", false).unwrap();
    assert!(plain.len() > 1 && !plain.contains(&2), "{plain:?}");
    assert_eq!(tok.decode(&plain).unwrap(), "<|im_end|>");
    assert_eq!(tok.encode("<|im_end|>", true).unwrap(), [2]);
}

#[test]
fn gemma3_special_ids() {
    let (_, tok) = load(&util::gemma3());
    assert_eq!(tok.bos_id(), Some(2));
    assert_eq!(tok.eos_id(), Some(1));
    assert!(tok.add_bos());
    let eot = tok.id_of("<end_of_turn>").expect("<end_of_turn>");
    assert_eq!(tok.stop_ids(), &[1, eot]);
    let byte = tok.id_of("<0x0A>").expect("byte token");
    assert_eq!(tok.token_bytes(byte), [b'\n']);
    assert_eq!(tok.token_bytes(tok.id_of("▁").unwrap()), b" ");
    // A character outside the vocabulary falls back to its UTF-8 bytes.
    let ids = tok.encode("\u{10FFFD}", true).unwrap();
    assert_eq!(ids.len(), 4, "{ids:?}");
    assert_eq!(tok.decode(&ids).unwrap(), "\u{10FFFD}");
    let plain = tok.encode("<start_of_turn>", false).unwrap();
    assert!(
        !plain.contains(&tok.id_of("<start_of_turn>").unwrap()),
        "{plain:?}"
    );
    assert_eq!(tok.decode(&plain).unwrap(), "<start_of_turn>");
}

#[test]
fn smollm2_chat_template() {
    let (g, tok) = load(&util::smollm2());
    let t = ChatTemplate::from_gguf(&g, &tok)
        .unwrap()
        .expect("SmolLM2 has a template");
    let msgs = [
        Message::system("You are John Lin, a pharmacy shopkeeper."),
        Message::user("It is 7:00 am. What do you do next?"),
    ];
    let text = t.render(&msgs, true).unwrap();
    assert_eq!(
        text,
        "<|im_start|>system\nYou are John Lin, a pharmacy shopkeeper.<|im_end|>\n\
         <|im_start|>user\nIt is 7:00 am. What do you do next?<|im_end|>\n\
         <|im_start|>assistant\n"
    );
    let ids = tok.encode_prompt(&text, true).unwrap();
    assert_eq!(ids[0], 1, "starts with <|im_start|>");
    let tail = tok.encode("<|im_start|>assistant\n", true).unwrap();
    assert_eq!(tail[0], 1);
    assert!(ids.ends_with(&tail), "{ids:?}");
}

#[test]
fn gemma3_has_no_template_and_falls_back_to_turns() {
    let (g, tok) = load(&util::gemma3());
    assert!(ChatTemplate::from_gguf(&g, &tok).unwrap().is_none());
    let t = ChatTemplate::fallback(&tok);
    let text = t
        .render(
            &[Message::user("It is 7:00 am. What do you do next?")],
            true,
        )
        .unwrap();
    let reference = util::llamacpp_reference();
    let case = reference["gemma3"]["tokenize"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| {
            c["text"]
                .as_str()
                .is_some_and(|t| t.starts_with("<start_of_turn>"))
        })
        .expect("a turn-format reference case");
    assert_eq!(text, case["text"].as_str().unwrap());
    assert_eq!(tok.encode(&text, true).unwrap(), ids(&case["ids"]));
}

#[test]
fn tokenizer_json_round_trip() {
    let (_, tok) = load(&util::smollm2());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("tokenizer.json");
    tok.inner().save(&path, false).unwrap();
    let loaded = Tokenizer::from_file(&path).unwrap();
    let text = "<|im_start|>user\nHello world! 12345 café<|im_end|>\n";
    assert_eq!(
        loaded.encode(text, true).unwrap(),
        tok.encode(text, true).unwrap()
    );
    assert_eq!(loaded.vocab_size(), tok.vocab_size());
    assert_eq!(loaded.token_bytes(216), b" ");
    assert!(loaded.stop_ids().contains(&2));

    let minilm = util::models_dir().join("minilm-l6-v2/tokenizer.json");
    let wp = Tokenizer::from_file(&minilm).unwrap();
    let ids = wp.encode("hello world", true).unwrap();
    assert_eq!(ids.len(), 2, "no padding or [CLS]: {ids:?}");
    assert_eq!(wp.decode(&ids).unwrap(), "hello world");
    assert!(Tokenizer::from_file(&dir.path().join("missing.json")).is_err());
}

fn toy_spm() -> TokenizerMetadata {
    let tokens = ["<unk>", "<s>", "</s>", "▁", "a", "b", "ab", "▁ab", "<0x63>"];
    TokenizerMetadata {
        model: "llama".into(),
        tokens: tokens.iter().map(|s| s.to_string()).collect(),
        token_types: Some(vec![2, 3, 3, 1, 1, 1, 1, 1, 6]),
        scores: Some(vec![0.0, 0.0, 0.0, -1.0, -2.0, -3.0, -4.0, -5.0, 0.0]),
        bos_id: Some(1),
        eos_id: Some(2),
        unk_id: Some(0),
        add_space_prefix: Some(false),
        ..Default::default()
    }
}

#[test]
fn toy_sentencepiece() {
    let tok = Tokenizer::from_metadata(toy_spm()).unwrap();
    assert_eq!(tok.encode("ab ab", true).unwrap(), [6, 7]);
    assert_eq!(tok.encode("c</s>", true).unwrap(), [8, 2]);
    assert_eq!(tok.decode(&[6, 7, 8]).unwrap(), "ab abc");
    assert!(tok.add_bos());
    assert_eq!(tok.encode_prompt("a", true).unwrap(), [1, 4]);
    let mut prefixed = toy_spm();
    prefixed.add_space_prefix = Some(true);
    let tok = Tokenizer::from_metadata(prefixed).unwrap();
    assert_eq!(tok.encode("ab", true).unwrap(), [7]);
    assert_eq!(tok.decode(&[7]).unwrap(), "ab");
}

#[test]
fn bad_metadata_is_an_error() {
    let msg = |md: TokenizerMetadata| match Tokenizer::from_metadata(md) {
        Err(e @ LlmError::Tokenizer(_)) => e.to_string(),
        other => panic!("expected a tokenizer error, got {other:?}"),
    };
    let mut md = toy_spm();
    md.model = "wordpiece".into();
    assert!(msg(md).contains("`wordpiece`"));
    let mut md = toy_spm();
    md.scores = None;
    assert!(msg(md).contains("tokenizer.ggml.scores"));
    let mut md = toy_spm();
    md.model = "gpt2".into();
    assert!(msg(md).contains("tokenizer.ggml.merges"));
    let mut md = toy_spm();
    md.tokens.clear();
    assert!(msg(md).contains("tokenizer.ggml.tokens"));
    let mut md = toy_spm();
    md.eos_id = Some(99);
    assert!(msg(md).contains("eos_token_id"));
    let mut md = toy_spm();
    md.token_types = Some(vec![1]);
    assert!(msg(md).contains("token_type"));
}

#[test]
fn templates_render_like_hugging_face() {
    let src =
        "{{ bos_token }}{% for m in messages %}\n  {{ m.content.strip().upper() }}\n{% endfor %}";
    let t = ChatTemplate::new(src, "<s>", "</s>").unwrap();
    assert_eq!(
        t.render(&[Message::user(" hi ")], false).unwrap(),
        "<s>  HI\n"
    );
    let t = ChatTemplate::new(
        "{{ messages[0] | tojson }}|{{ [1] | tojson(indent=2) }}",
        "",
        "",
    )
    .unwrap();
    assert_eq!(
        t.render(&[Message::user("é\"")], false).unwrap(),
        "{\"role\":\"user\",\"content\":\"é\\\"\"}|[\n  1\n]"
    );
    let t = ChatTemplate::new("{{ raise_exception('roles must alternate') }}", "", "").unwrap();
    assert!(t
        .render(&[], true)
        .unwrap_err()
        .to_string()
        .contains("roles must alternate"));
    assert!(matches!(
        ChatTemplate::new("{% if %}", "", ""),
        Err(LlmError::Template(_))
    ));
    let msgs = [Message::system("Be brief."), Message::user("Hi")];
    assert_eq!(
        ChatTemplate::plain().render(&msgs, true).unwrap(),
        "System: Be brief.\nUser: Hi\nAssistant:"
    );
    let chatml = ChatTemplate::chatml().render(&msgs, true).unwrap();
    assert_eq!(
        chatml,
        "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
    );
    assert_eq!(
        ChatTemplate::gemma().render(&msgs, true).unwrap(),
        "<start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n<start_of_turn>model\n"
    );
}
