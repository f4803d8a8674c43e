//! The administrator's console (`/admin/*`): health, jobs, people, teams, price
//! tables, retention, access grants, adapters, alerts and service levels. Every page
//! is one [`AdminPage`]: sections, each a table whose rows may carry forms, and forms
//! of its own. Every form posts to a route of the same feature, which changes one thing
//! in one writer transaction with its audit row, then answers 303 back to the page with
//! what it did (`?done=`), so the console works without JavaScript.
//!
//! Invariants: only an `ADMIN` gets past the `Administrator` extractor every handler
//! takes, or `admin_only` where a handler serves pages and JSON (403 for anyone else,
//! the login page for nobody); no change commits without its audit row; a form's bad
//! value is a 400 page naming the field, and nothing is stored.

pub mod adapters;
pub mod alerts;
pub mod catalogue;
pub mod grants;
pub mod health;
pub mod identities;
pub mod jobs;
pub mod people;
pub mod prices;
pub mod projections;
pub mod retention;
pub mod slo;
pub mod teams;

use askama::Template;
use axum::http::HeaderMap;
use axum::response::Redirect;
use serde::Deserialize;

use super::report::Cell;
use crate::access::roles::OrgRole;
use crate::access::teams::TeamError;
use crate::db::DbError;
use crate::http::errors::{AppError, PageError};
use crate::model::percent_encode;
use crate::state::AppState;
use crate::state::caller::Caller;

/// The console's pages, in its tab order.
pub const TABS: [(&str, &str); 11] = [
    ("/admin/health", "Health"),
    ("/admin/jobs", "Jobs"),
    ("/admin/people", "People"),
    ("/admin/teams", "Teams"),
    ("/admin/price-tables", "Price tables"),
    ("/admin/retention", "Retention"),
    ("/admin/access-grants", "Access grants"),
    ("/admin/adapters", "Adapters"),
    ("/admin/alerts", "Alerts"),
    ("/admin/slo", "Service levels"),
    ("/admin/projections", "Projections"),
];

/// Refuses anyone but an administrator.
pub fn admin_only(caller: &Caller) -> Result<(), PageError> {
    caller.require_admin().map_err(PageError)
}

/// True when the client asked for a page (a browser) rather than JSON.
pub fn wants_html(headers: &HeaderMap) -> bool {
    headers
        .get(axum::http::header::ACCEPT)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|accept| accept.contains("text/html"))
}

/// A form's value that must parse: trimmed and parsed by `parse`, else a 400 naming
/// `field` that says what it `must` be and quotes what came.
pub fn required<T>(
    field: &'static str,
    text: Option<String>,
    parse: impl FnOnce(&str) -> Option<T>,
    must: impl std::fmt::Display,
) -> Result<T, AppError> {
    let text = text.unwrap_or_default();
    parse(text.trim()).ok_or_else(|| AppError::bad_request(field, format!("{must}, not {text:?}")))
}

/// One change on the writer. `work` answers a refusal as the page's error (`Ok(Err)`):
/// it refuses before writing anything, so committing the refusal changes nothing. A
/// storage failure (`Err`) rolls the transaction back.
pub async fn change<T: Send + 'static>(
    state: &AppState,
    work: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<Result<T, AppError>, DbError> + Send + 'static,
) -> Result<T, PageError> {
    Ok(state.write(work).await??)
}

/// A team's refusal as the page's error naming `field` (a team not found is a 404); a
/// storage failure stays one, to roll the change back.
pub fn team_refusal(err: TeamError, field: &str) -> Result<AppError, DbError> {
    match err {
        TeamError::Db(db) => Err(db),
        TeamError::NotFound(_) => Ok(AppError::NotFound),
        other => Ok(AppError::bad_request(field, other.to_string())),
    }
}

/// Back to `path` after a change, saying what was done.
pub fn done(path: &str, message: &str) -> Redirect {
    Redirect::to(&format!("{path}?done={}", percent_encode(message)))
}

/// `?done=` of a page: what the last form did.
#[derive(Deserialize, Default)]
pub struct Flash {
    pub done: Option<String>,
}

/// One input of a form.
pub struct Field {
    pub name: &'static str,
    pub label: String,
    /// `text`, `number`, `hidden`, `select`, `textarea`, `checkbox`, `file` (its value is
    /// what it accepts) or `datetime-local`.
    pub kind: &'static str,
    pub value: String,
    /// `(value, label)` of a select.
    pub options: Vec<(String, String)>,
}

impl Field {
    pub fn text(name: &'static str, label: impl Into<String>, value: impl Into<String>) -> Field {
        Field { name, label: label.into(), kind: "text", value: value.into(), options: Vec::new() }
    }

    pub fn number(name: &'static str, label: impl Into<String>, value: impl Into<String>) -> Field {
        Field { kind: "number", ..Field::text(name, label, value) }
    }

    pub fn hidden(name: &'static str, value: impl Into<String>) -> Field {
        Field { kind: "hidden", ..Field::text(name, "", value) }
    }

    pub fn textarea(name: &'static str, label: impl Into<String>, value: impl Into<String>) -> Field {
        Field { kind: "textarea", ..Field::text(name, label, value) }
    }

    /// A file chooser; its form is sent as `multipart/form-data`.
    pub fn file(name: &'static str, label: impl Into<String>, accept: impl Into<String>) -> Field {
        Field { kind: "file", ..Field::text(name, label, accept) }
    }

    pub fn checkbox(name: &'static str, label: impl Into<String>, on: bool) -> Field {
        Field { kind: "checkbox", ..Field::text(name, label, if on { "on" } else { "" }) }
    }

    pub fn select(name: &'static str, label: impl Into<String>, value: impl Into<String>, options: &[&str]) -> Field {
        Field {
            kind: "select",
            options: options.iter().map(|o| (o.to_string(), o.to_string())).collect(),
            ..Field::text(name, label, value)
        }
    }
}

/// A form: a POST to `action` with its fields and a button.
pub struct Form {
    pub action: String,
    pub submit: String,
    pub fields: Vec<Field>,
    /// Drawn as a warning (deny, revoke, demote).
    pub danger: bool,
}

impl Form {
    pub fn new(action: impl Into<String>, submit: impl Into<String>) -> Form {
        Form { action: action.into(), submit: submit.into(), fields: Vec::new(), danger: false }
    }

    pub fn field(mut self, field: Field) -> Form {
        self.fields.push(field);
        self
    }

    /// Whether the form carries a file (and is sent as `multipart/form-data`).
    pub fn multipart(&self) -> bool {
        self.fields.iter().any(|field| field.kind == "file")
    }

    pub fn danger(mut self) -> Form {
        self.danger = true;
        self
    }
}

/// One row: its cells, then the forms that act on it.
pub struct Row {
    pub cells: Vec<Cell>,
    pub actions: Vec<Form>,
}

impl Row {
    pub fn new(cells: Vec<Cell>) -> Row {
        Row { cells, actions: Vec::new() }
    }

    pub fn action(mut self, form: Form) -> Row {
        self.actions.push(form);
        self
    }
}

/// One section of a page: a heading, what it is about, a table and forms.
pub struct Section {
    /// The heading's `id`, unique on the page (a link's `#fragment`).
    pub id: String,
    pub heading: String,
    pub intro: String,
    pub columns: Vec<&'static str>,
    pub rows: Vec<Row>,
    /// Said instead of an empty table (no table when there are no columns).
    pub empty: String,
    /// An inline SVG from the shared chart module, drawn from the same rows.
    pub chart: Option<String>,
    pub forms: Vec<Form>,
}

impl Section {
    pub fn new(id: impl Into<String>, heading: impl Into<String>) -> Section {
        Section {
            id: id.into(),
            heading: heading.into(),
            intro: String::new(),
            columns: Vec::new(),
            rows: Vec::new(),
            empty: "None.".into(),
            chart: None,
            forms: Vec::new(),
        }
    }

    pub fn intro(mut self, intro: impl Into<String>) -> Section {
        self.intro = intro.into();
        self
    }

    pub fn columns(mut self, columns: Vec<&'static str>) -> Section {
        self.columns = columns;
        self
    }

    pub fn empty(mut self, empty: impl Into<String>) -> Section {
        self.empty = empty.into();
        self
    }

    pub fn form(mut self, form: Form) -> Section {
        self.forms.push(form);
        self
    }

    /// True when some row carries a form (the table gets an actions column).
    pub fn has_actions(&self) -> bool {
        self.rows.iter().any(|row| !row.actions.is_empty())
    }
}

#[derive(Template)]
#[template(path = "web/admin.html")]
pub struct AdminPage {
    pub nav_role: &'static str,
    pub title: String,
    pub path: &'static str,
    pub tabs: [(&'static str, &'static str); 11],
    pub intro: String,
    pub flash: Option<String>,
    pub sections: Vec<Section>,
}

impl AdminPage {
    pub fn new(path: &'static str, title: impl Into<String>, intro: impl Into<String>, flash: Flash) -> AdminPage {
        AdminPage {
            nav_role: OrgRole::Admin.as_str(),
            title: title.into(),
            path,
            tabs: TABS,
            intro: intro.into(),
            flash: flash.done.filter(|done| !done.is_empty()),
            sections: Vec::new(),
        }
    }

    pub fn section(mut self, section: Section) -> AdminPage {
        self.sections.push(section);
        self
    }

    pub fn respond(&self) -> axum::response::Response {
        super::login::render(self)
    }
}

/// A time for a page, `—` for none.
pub fn when(ms: Option<i64>) -> Cell {
    match ms {
        // The one exact form a person reads (`model::instants`); RFC 3339 where copied.
        Some(ms) => Cell::shown(crate::model::instants::exact_utc(ms), crate::model::rfc3339_ms(ms)),
        None => Cell::text("—"),
    }
}
