//! A report page: a title, the tabs of its scope, the period links and a list of tables,
//! each with an optional inline-SVG chart drawn from the same rows and a CSV export
//! (`?format=csv&table=<id>`). Every `/team/<slug>/*` and `/org/*` page past the overview
//! is one, so they look, export and degrade alike.
//!
//! Invariants: a page whose group is below the minimum size carries a notice and no
//! table, and its CSV is refused (403), so no export can say more than the page; a CSV
//! cell holds the raw value (no thousands separators, no `$`), the page the formatted one.

use askama::Template;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::login::render;
use super::teams::ScopeParams;
use crate::http::errors::{AppError, PageError};
use crate::model::{count, usd};

/// The name of the row that folds the groups too small to show alone.
pub const OTHER: &str = "other (groups too small to show alone)";

/// One cell: what the page shows, what the CSV holds, and an optional link.
pub struct Cell {
    pub text: String,
    pub raw: String,
    pub href: Option<String>,
    /// Said on hover (an instant's exact time beside its "3 h ago").
    pub title: Option<String>,
}

impl Cell {
    pub fn text(text: impl Into<String>) -> Cell {
        let text = text.into();
        Cell { raw: text.clone(), text, href: None, title: None }
    }

    /// A value as a person reads it (`text`) and as a CSV keeps it (`raw`).
    pub fn shown(text: impl Into<String>, raw: impl Into<String>) -> Cell {
        Cell { text: text.into(), raw: raw.into(), href: None, title: None }
    }

    pub fn count(value: i64) -> Cell {
        Cell::shown(count(value), value.to_string())
    }

    pub fn usd(nusd: i64) -> Cell {
        Cell::shown(usd(nusd), format!("{:.2}", crate::model::nusd_to_usd(nusd)))
    }

    /// A share of a whole, in percent; "—" when the whole is zero.
    pub fn share(part: i64, whole: i64) -> Cell {
        if whole <= 0 {
            return Cell::text("—");
        }
        let percent = part as f64 * 100.0 / whole as f64;
        Cell::shown(format!("{percent:.0}%"), format!("{percent:.1}"))
    }

    /// A duration in hours, or "—".
    pub fn hours(ms: Option<i64>) -> Cell {
        match ms {
            Some(ms) => {
                let hours = ms as f64 / 3_600_000.0;
                Cell::shown(format!("{hours:.1} h"), format!("{hours:.2}"))
            }
            None => Cell::text("—"),
        }
    }

    /// An instant: "3 h ago" before `now_ms`, its exact UTC time on hover, RFC 3339 in CSV.
    pub fn when(ms: i64, now_ms: i64) -> Cell {
        Cell {
            text: crate::model::instants::relative(ms, now_ms),
            raw: crate::model::rfc3339_ms(ms),
            href: None,
            title: Some(crate::model::instants::exact_utc(ms)),
        }
    }

    pub fn link(self, href: impl Into<String>) -> Cell {
        Cell { href: Some(href.into()), ..self }
    }
}

/// One table of a report.
pub struct Table {
    /// The CSV name (`?table=`), unique on the page.
    pub id: &'static str,
    pub heading: String,
    pub columns: Vec<&'static str>,
    pub rows: Vec<Vec<Cell>>,
    /// An inline SVG drawn from the rows, shown above them.
    pub chart: Option<String>,
    /// What the table counts and leaves out, under it.
    pub note: String,
    /// Said instead of an empty table.
    pub empty: &'static str,
}

impl Table {
    pub fn new(id: &'static str, heading: impl Into<String>, columns: Vec<&'static str>) -> Table {
        Table {
            id,
            heading: heading.into(),
            columns,
            rows: Vec::new(),
            chart: None,
            note: String::new(),
            empty: "None in this period.",
        }
    }

    pub fn note(mut self, note: impl Into<String>) -> Table {
        self.note = note.into();
        self
    }
}

#[derive(Template)]
#[template(path = "web/report.html")]
pub struct ReportPage {
    pub nav_role: &'static str,
    pub title: String,
    /// The page's path, for the period and CSV links.
    pub path: String,
    /// The period in days; `None` for a page that has none (the CSV links carry it).
    pub days: Option<i64>,
    pub periods: [i64; 3],
    pub tabs: Vec<(String, &'static str)>,
    /// A paragraph under the title: what the page is about.
    pub intro: String,
    /// Why nothing is shown (a group below the minimum size), instead of the tables.
    pub notice: Option<String>,
    /// Where the same figures stand for the whole organisation, offered beside a notice.
    pub organisation_href: Option<String>,
    pub tables: Vec<Table>,
}

impl ReportPage {
    /// A page with no intro, notice or table yet.
    pub fn new(
        nav_role: &'static str,
        title: String,
        path: String,
        days: Option<i64>,
        tabs: Vec<(String, &'static str)>,
    ) -> ReportPage {
        ReportPage {
            nav_role,
            title,
            path,
            days,
            periods: super::scope::PERIODS,
            tabs,
            intro: String::new(),
            notice: None,
            organisation_href: None,
            tables: Vec::new(),
        }
    }

    /// The query string a CSV link of `table` needs.
    pub fn csv_href(&self, table: &str) -> String {
        let days = self.days.map(|d| format!("days={d}&")).unwrap_or_default();
        format!("{}?{days}format=csv&table={table}", self.path)
    }
}

/// The notice of a group below the minimum size.
pub fn too_few_notice(people: i64, min_people: i64) -> String {
    let who = if people == 1 { "1 person was".to_string() } else { format!("{people} people were") };
    let more = (min_people - people).max(1);
    let more = if more == 1 { "1 more active person".to_string() } else { format!("{more} more active people") };
    format!(
        "{who} active in this period: figures are shown only for groups of at least {min_people} people, so that none points at anyone. {more} (or a longer period) would show them; the organisation's figures are on /org."
    )
}

/// Why a group's figures are not shown (`Guarded`'s refusals), in words.
pub fn withheld_notice<T>(read: &crate::analytics::query::groups::Guarded<T>) -> Option<String> {
    use crate::analytics::query::groups::Guarded;
    match read {
        Guarded::Shown(_) => None,
        Guarded::TooFew { people, min_people } => Some(too_few_notice(*people, *min_people)),
        Guarded::Withheld { min_people } => Some(format!(
            "This team's figures are withheld in this period: with the figures of the teams around it, they would give away those of a group of fewer than {min_people} people. A longer period, or the team and its neighbours each reaching {min_people} active people, would show them; the organisation's figures are on /org."
        )),
    }
}

/// The page as HTML, or one of its tables as CSV (`?format=csv&table=`); a 400 names a
/// wrong `format` or `table`, a 403 refuses the CSV of a page that shows no figures.
pub fn respond(page: ReportPage, params: &ScopeParams, file: &str) -> Result<Response, PageError> {
    match params.format.as_deref() {
        None | Some("") | Some("html") => Ok(render(&page)),
        Some("csv") => {
            if page.notice.is_some() && page.tables.is_empty() {
                return Err(PageError(AppError::Forbidden(
                    "this group has too few active people in the period for its figures to be exported".into(),
                )));
            }
            let wanted = params.table.as_deref().unwrap_or("");
            let Some(table) = page.tables.iter().find(|t| t.id == wanted) else {
                let names: Vec<&str> = page.tables.iter().map(|t| t.id).collect();
                return Err(PageError(AppError::bad_request(
                    "table",
                    format!("table must be one of {}, not {wanted:?}", names.join(", ")),
                )));
            };
            Ok(csv(table, &format!("{file}-{wanted}.csv")))
        }
        Some(other) => {
            Err(PageError(AppError::bad_request("format", format!("format must be html or csv, not {other:?}"))))
        }
    }
}

fn csv(table: &Table, file: &str) -> Response {
    let mut writer = csv::Writer::from_writer(Vec::new());
    // Writing to a Vec cannot fail.
    let _ = writer.write_record(crate::model::csv_cells::record(&table.columns));
    for row in &table.rows {
        let _ = writer.write_record(crate::model::csv_cells::record(row.iter().map(|cell| cell.raw.as_str())));
    }
    csv_download(file, writer.into_inner().unwrap_or_default())
}

/// A CSV file the browser saves as `file`: every page's download answers this way.
pub fn csv_download(file: &str, body: Vec<u8>) -> Response {
    (
        [
            (header::CONTENT_TYPE, "text/csv; charset=utf-8".to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{file}\"")),
        ],
        body,
    )
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_show_formatted_values_and_export_raw_ones() {
        let cell = Cell::usd(1_234_560_000_000);
        assert_eq!((cell.text.as_str(), cell.raw.as_str()), ("$1,234.56", "1234.56"));
        let cell = Cell::count(12_345);
        assert_eq!((cell.text.as_str(), cell.raw.as_str()), ("12,345", "12345"));
        assert_eq!(Cell::share(1, 0).text, "—");
        assert_eq!(Cell::share(1, 3).raw, "33.3");
        assert_eq!(too_few_notice(1, 5).split(':').next(), Some("1 person was active in this period"));
        assert_eq!(too_few_notice(3, 5).split(':').next(), Some("3 people were active in this period"));
    }
}
