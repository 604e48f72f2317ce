//! The run viewer: a page with a map replay and a dashboard of needs, closeness and emotions,
//! served for live runs (`humanoid serve`) or written as one self-contained file
//! (`humanoid report`). The page is our own HTML, CSS and JS (in `assets/`), with no library
//! and nothing fetched from outside the server it came from.

pub mod data;
pub mod server;

use serde_json::json;

pub use data::{RunSource, RunStatus};

/// The page skeleton.
pub const INDEX_HTML: &str = include_str!("assets/index.html");
/// The viewer's script.
pub const VIEWER_JS: &str = include_str!("assets/viewer.js");
/// The viewer's style sheet.
pub const VIEWER_CSS: &str = include_str!("assets/viewer.css");

/// The page with its style sheet and script inlined and `data` (JSON) embedded: one file
/// that opens from disk with no network.
pub fn self_contained_page(data: &serde_json::Value) -> String {
    // No "<" inside the JSON text (escaped as \u003c): nothing in it can end the script element.
    let data = data.to_string().replace('<', "\\u003c");
    let css = VIEWER_CSS.replace("</style", "<\\/style");
    let js = VIEWER_JS.replace("</script", "<\\/script");
    INDEX_HTML
        .replace(
            r#"<link rel="stylesheet" href="viewer.css">"#,
            &format!("<style>\n{css}\n</style>"),
        )
        .replace(
            r#"<script src="viewer.js"></script>"#,
            &format!(
                "<script id=\"humanoid-data\" type=\"application/json\">{data}</script>\n<script>\n{js}\n</script>"
            ),
        )
}

/// Everything the page shows for every run of `source`, for [`self_contained_page`].
pub fn report_data(source: &RunSource) -> serde_json::Value {
    let runs = source.list();
    let mut details = serde_json::Map::new();
    let mut states = serde_json::Map::new();
    for r in &runs {
        if let Some(d) = source.detail(&r.id) {
            details.insert(r.id.clone(), json!(d));
        }
        if let Some(s) = source.states(&r.id, 0) {
            states.insert(r.id.clone(), json!(s));
        }
    }
    json!({"runs": {"runs": runs}, "details": details, "states": states})
}
