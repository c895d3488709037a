//! The census site.
use crate::model::Report;

pub fn render(report: &Report, _url: Option<&str>) -> Vec<(String, String)> {
    vec![("report.json".into(), report.to_json())]
}
