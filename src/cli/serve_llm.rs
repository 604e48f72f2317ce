//! `humanoid serve-llm`: our engine behind an OpenAI-compatible API.

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use humanoid::serve::{router, serve, ServeOptions};

use super::ModelArgs;

/// Arguments of `serve-llm`.
#[derive(Args, Debug)]
pub struct ServeLlmArgs {
    #[command(flatten)]
    pub model: ModelArgs,
    /// Port to listen on (0: any free port; the address is printed on stdout).
    #[arg(long, default_value_t = 8000)]
    pub port: u16,
    /// Address to listen on.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: String,
    /// The model name clients use (default: the model's name, e.g. smollm2-135m).
    #[arg(long)]
    pub name: Option<String>,
    /// Milliseconds a request waits for others to join its engine batch.
    #[arg(long, default_value_t = 5)]
    pub batch_window_ms: u64,
    /// Most requests in one engine batch.
    #[arg(long, default_value_t = 256)]
    pub max_batch: usize,
    /// Most requests answered at once (more get HTTP 429).
    #[arg(long, default_value_t = 512)]
    pub max_inflight: usize,
    /// Seconds a request may wait for the engine (then HTTP 504).
    #[arg(long, default_value_t = 600)]
    pub request_timeout: u64,
    /// Largest request body in MiB (larger ones get HTTP 413).
    #[arg(long, default_value_t = 2)]
    pub max_body_mib: usize,
}

/// Runs `serve-llm` until killed.
pub fn run(a: ServeLlmArgs) -> Result<()> {
    let (resolved, engine) = a.model.load()?;
    let mut names = vec![a.name.clone().unwrap_or_else(|| resolved.name.clone())];
    let file = resolved
        .path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned());
    let stem = resolved
        .path
        .file_stem()
        .map(|f| f.to_string_lossy().into_owned());
    for n in [
        Some(resolved.name.clone()),
        a.model.model.clone(),
        file,
        stem,
    ]
    .into_iter()
    .flatten()
    {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    let opts = ServeOptions {
        window: Duration::from_millis(a.batch_window_ms),
        max_batch: a.max_batch,
        max_inflight: a.max_inflight,
        request_timeout: Duration::from_secs(a.request_timeout.max(1)),
        max_body_bytes: a.max_body_mib.max(1) << 20,
        ..ServeOptions::new(names.clone())
    };
    let app = router(engine, opts);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .context("starting the async runtime")?;
    rt.block_on(async move {
        let listener = tokio::net::TcpListener::bind((a.host.as_str(), a.port))
            .await
            .with_context(|| format!("listening on {}:{}", a.host, a.port))?;
        let addr = listener.local_addr()?;
        println!("serve-llm: model {} on http://{addr}/v1", names[0]);
        std::io::stdout().flush().ok();
        serve(listener, app).await.context("serving")
    })
}
