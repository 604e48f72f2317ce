//! The HTTP side of `humanoid serve`: the page, its two assets and a small JSON API over a
//! [`RunSource`]. Run ids are looked up among the listed runs, never joined to a path.

use axum::extract::{Path, Query, State};
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use axum::{Json, Router};
use serde::Deserialize;
use serde_json::json;

use super::data::RunSource;
use super::{INDEX_HTML, VIEWER_CSS, VIEWER_JS};

/// `?from=N` of the states endpoint.
#[derive(Debug, Deserialize)]
pub struct From {
    #[serde(default)]
    pub from: usize,
}

/// The viewer's routes over `source`.
pub fn router(source: RunSource) -> Router {
    Router::new()
        .route("/", get(|| async { html(INDEX_HTML) }))
        .route(
            "/viewer.js",
            get(|| async { asset("text/javascript; charset=utf-8", VIEWER_JS) }),
        )
        .route(
            "/viewer.css",
            get(|| async { asset("text/css; charset=utf-8", VIEWER_CSS) }),
        )
        .route("/api/runs", get(list))
        .route("/api/runs/{id}", get(detail))
        .route("/api/runs/{id}/states", get(states))
        .fallback(|| async { not_found("no such page") })
        .with_state(source)
}

fn html(body: &'static str) -> Response {
    asset("text/html; charset=utf-8", body)
}

fn asset(kind: &'static str, body: &'static str) -> Response {
    ([(header::CONTENT_TYPE, kind)], body).into_response()
}

fn not_found(what: &str) -> Response {
    (StatusCode::NOT_FOUND, Json(json!({ "error": what }))).into_response()
}

/// Runs blocking file reads off the async workers.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> Result<T, Response> {
    tokio::task::spawn_blocking(f).await.map_err(|e| {
        (
            StatusCode::INTERNAL_SERVER_ERROR,
            Json(json!({ "error": format!("reading the run failed: {e}") })),
        )
            .into_response()
    })
}

async fn list(State(source): State<RunSource>) -> Response {
    match blocking(move || source.list()).await {
        Ok(runs) => Json(json!({ "runs": runs })).into_response(),
        Err(r) => r,
    }
}

async fn detail(State(source): State<RunSource>, Path(id): Path<String>) -> Response {
    let name = id.clone();
    match blocking(move || source.detail(&id)).await {
        Ok(Some(d)) => Json(d).into_response(),
        Ok(None) => not_found(&format!("no run named {name:?}")),
        Err(r) => r,
    }
}

async fn states(
    State(source): State<RunSource>,
    Path(id): Path<String>,
    Query(q): Query<From>,
) -> Response {
    let name = id.clone();
    match blocking(move || source.states(&id, q.from)).await {
        Ok(Some(s)) => Json(s).into_response(),
        Ok(None) => not_found(&format!("no run named {name:?}")),
        Err(r) => r,
    }
}
