//! Applying a forward step's logits to the sequences that asked for them: sampling and stop
//! checks for `generate`, option scoring for `choose`, and the responses they end in.

use super::super::error::Result;
use super::super::model::LogitsFor;
use super::super::request::{Choice, FinishReason, Generation, Request, Response};
use super::super::sampler::{argmax, log_prob};
use super::{Engine, Event, Role, Seq, Slot};

impl Engine {
    /// Applies a step's logits to a sequence. Returns whether the sequence is finished.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn apply(
        &mut self,
        seq: &mut Seq,
        rows: Vec<f32>,
        slots: &mut [Slot],
        results: &mut [Option<Result<Response>>],
        requests: &[Request],
        spawned: &mut Vec<Seq>,
        on_event: &mut impl FnMut(Event<'_>),
    ) -> bool {
        let vocab = self.model.config().vocab;
        match &mut seq.role {
            Role::Prefix { .. } => true,
            Role::Generate {
                req,
                sampler,
                generated,
                text_len,
            } => {
                let req = *req;
                let Request::Generate(g) = &requests[req] else {
                    return true;
                };
                let Slot::Generate {
                    prompt_len,
                    max_new,
                } = slots[req]
                else {
                    return true;
                };
                let mut logits = rows;
                logits.truncate(vocab);
                let mut finish = None;
                let token = match &g.constraint {
                    Some(c) => {
                        let mut c = c.lock().unwrap_or_else(|p| p.into_inner());
                        c.mask(generated, &mut logits);
                        sampler.sample(&logits)
                    }
                    None => sampler.sample(&logits),
                };
                let Some(token) = token else {
                    return self.finish_generation(
                        req,
                        generated,
                        prompt_len,
                        FinishReason::NoAllowedToken,
                        results,
                        slots,
                    );
                };
                self.stats.generated_tokens += 1;
                if self.tokenizer.stop_ids().contains(&token) {
                    finish = Some(FinishReason::Stop);
                } else {
                    generated.push(token);
                    let text = self.tokenizer.decode(generated).unwrap_or_default();
                    if let Some(cut) = g.stop.iter().filter_map(|s| text.find(s.as_str())).min() {
                        let keep = cut.max(*text_len);
                        if keep > *text_len {
                            on_event(Event::Text {
                                index: req,
                                delta: &text[*text_len..keep],
                            });
                        }
                        return self.finish_text(
                            req,
                            text[..cut].to_string(),
                            generated.len(),
                            prompt_len,
                            FinishReason::Stop,
                            results,
                            slots,
                        );
                    }
                    let complete = !text.ends_with('\u{FFFD}');
                    if complete && text.len() > *text_len && text.is_char_boundary(*text_len) {
                        on_event(Event::Text {
                            index: req,
                            delta: &text[*text_len..],
                        });
                        *text_len = text.len();
                    }
                    if let Some(c) = &g.constraint {
                        if c.lock()
                            .unwrap_or_else(|p| p.into_inner())
                            .is_complete(generated)
                        {
                            finish = Some(FinishReason::Stop);
                        }
                    }
                    if finish.is_none() && generated.len() >= max_new {
                        finish = Some(FinishReason::Length);
                    }
                }
                match finish {
                    Some(reason) => {
                        self.finish_generation(req, generated, prompt_len, reason, results, slots)
                    }
                    None => {
                        seq.pending.push(token);
                        // Jump forward over text the constraint forces (fed in one step).
                        if let Some(c) = &g.constraint {
                            let forced = c
                                .lock()
                                .unwrap_or_else(|p| p.into_inner())
                                .forced(generated);
                            if !forced.is_empty() && generated.len() + forced.len() < max_new {
                                generated.extend_from_slice(&forced);
                                seq.pending.extend_from_slice(&forced);
                            }
                        }
                        false
                    }
                }
            }
            Role::ChoosePrompt { req } => {
                let req = *req;
                let Slot::Choose {
                    options,
                    logp,
                    remaining,
                    keep,
                    ..
                } = &mut slots[req]
                else {
                    return true;
                };
                let row = &rows[..vocab];
                let prefix = seq.cache.share();
                if let Some(tokens) = keep.take() {
                    self.prefix_cache.insert(&tokens, prefix.clone());
                }
                for (k, opt) in options.iter().enumerate() {
                    logp[k] = log_prob(row, opt[0] as usize);
                    if opt.len() > 1 {
                        spawned.push(Seq {
                            role: Role::ChooseOption { req, option: k },
                            cache: self.cache_from(prefix.clone(), prefix.len() + opt.len()),
                            pending: opt[..opt.len() - 1].to_vec(),
                            want: LogitsFor::All,
                        });
                    } else {
                        *remaining -= 1;
                    }
                }
                if *remaining == 0 {
                    self.finish_choice(req, slots, results);
                }
                true
            }
            Role::ChooseOption { req, option } => {
                let (req, option) = (*req, *option);
                let Slot::Choose {
                    options,
                    logp,
                    remaining,
                    ..
                } = &mut slots[req]
                else {
                    return true;
                };
                let opt = &options[option];
                for (j, row) in rows.chunks_exact(vocab).enumerate() {
                    logp[option] += log_prob(row, opt[j + 1] as usize);
                }
                *remaining -= 1;
                if *remaining == 0 {
                    self.finish_choice(req, slots, results);
                }
                true
            }
        }
    }

    fn finish_generation(
        &mut self,
        req: usize,
        generated: &[u32],
        prompt_len: usize,
        reason: FinishReason,
        results: &mut [Option<Result<Response>>],
        slots: &mut [Slot],
    ) -> bool {
        let text = self.tokenizer.decode(generated).unwrap_or_default();
        self.finish_text(
            req,
            text,
            generated.len(),
            prompt_len,
            reason,
            results,
            slots,
        )
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_text(
        &mut self,
        req: usize,
        text: String,
        generated_tokens: usize,
        prompt_len: usize,
        reason: FinishReason,
        results: &mut [Option<Result<Response>>],
        slots: &mut [Slot],
    ) -> bool {
        results[req] = Some(Ok(Response::Generated(Generation {
            text,
            prompt_tokens: prompt_len,
            generated_tokens,
            finish: reason,
        })));
        slots[req] = Slot::Done;
        true
    }

    fn finish_choice(
        &mut self,
        req: usize,
        slots: &mut [Slot],
        results: &mut [Option<Result<Response>>],
    ) {
        if let Slot::Choose {
            logp, prompt_len, ..
        } = &slots[req]
        {
            let max = logp.iter().fold(f32::NEG_INFINITY, |a, &b| a.max(b));
            let exp: Vec<f64> = logp.iter().map(|&l| ((l - max) as f64).exp()).collect();
            let sum: f64 = exp.iter().sum();
            let probs: Vec<f32> = exp.iter().map(|e| (e / sum) as f32).collect();
            let best = argmax(logp).unwrap_or(0);
            results[req] = Some(Ok(Response::Chosen(Choice {
                index: best,
                probs,
                logprobs: logp.clone(),
                prompt_tokens: *prompt_len,
            })));
        }
        slots[req] = Slot::Done;
    }
}
