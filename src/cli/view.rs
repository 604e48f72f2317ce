//! `serve` (the viewer over HTTP, following runs in progress) and `report` (the viewer as
//! one self-contained HTML file).

use std::net::SocketAddr;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::Args;
use humanoid::viewer::{self, RunSource};

/// Arguments of `serve`.
#[derive(Args, Debug)]
pub struct ServeArgs {
    /// A run directory, or a folder of run directories (the page then offers a picker).
    pub dir: PathBuf,
    /// Port to listen on (0: any free port).
    #[arg(long, default_value_t = 8080)]
    pub port: u16,
    /// Address to listen on; the default serves this machine only.
    #[arg(long, default_value = "127.0.0.1")]
    pub host: std::net::IpAddr,
}

/// Arguments of `report`.
#[derive(Args, Debug)]
pub struct ReportArgs {
    /// A run directory, or a folder of run directories.
    pub dir: PathBuf,
    /// The HTML file to write.
    #[arg(long, short = 'o', default_value = "report.html")]
    pub out: PathBuf,
}

fn source(dir: &std::path::Path) -> Result<RunSource> {
    if !dir.is_dir() {
        bail!("{}: not a folder", dir.display());
    }
    Ok(RunSource::new(dir))
}

/// Serves the viewer until interrupted.
pub fn serve(a: ServeArgs) -> Result<()> {
    let src = source(&a.dir)?;
    if src.runs().is_empty() {
        eprintln!(
            "serve: {} holds no run yet (no config.json in it or its subfolders); the page lists runs as they appear",
            a.dir.display()
        );
    }
    let rt = tokio::runtime::Runtime::new().context("starting the async runtime")?;
    rt.block_on(async move {
        let addr = SocketAddr::new(a.host, a.port);
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .with_context(|| format!("cannot listen on {addr}"))?;
        let bound = listener.local_addr()?;
        println!(
            "viewer of {} at http://{bound}/ (Ctrl-C to stop)",
            a.dir.display()
        );
        axum::serve(listener, viewer::server::router(src))
            .with_graceful_shutdown(async {
                tokio::signal::ctrl_c().await.ok();
            })
            .await
            .context("serving the viewer")
    })
}

/// Writes the self-contained report.
pub fn report(a: ReportArgs) -> Result<()> {
    let src = source(&a.dir)?;
    let runs = src.runs();
    if runs.is_empty() {
        bail!(
            "{}: no run directory (a folder with config.json, or with state_*.json files) here or in its subfolders",
            a.dir.display()
        );
    }
    let page = viewer::self_contained_page(&viewer::report_data(&src));
    let tmp = a.out.with_extension("html.tmp");
    std::fs::write(&tmp, &page).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, &a.out).with_context(|| format!("writing {}", a.out.display()))?;
    eprintln!(
        "report: {} run(s) -> {} ({} KiB; opens from disk, no network)",
        runs.len(),
        a.out.display(),
        page.len() / 1024
    );
    Ok(())
}
