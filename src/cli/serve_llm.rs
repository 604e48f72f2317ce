//! `humanoid serve-llm`: our engine behind an OpenAI-compatible API.

use std::io::Write;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use humanoid::llm::serve::{router, serve, ServeOptions};

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
        names: names.clone(),
        window: Duration::from_millis(a.batch_window_ms),
        max_batch: a.max_batch,
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
