//! The OTLP identities part of `/admin/adapters`: service accounts' tokens (a collector
//! forwarding many people's exports), the identities their records carried that no
//! mapping names (refused, counted, never guessed), and the mappings from exported
//! identities (`user.email`, `user.account_uuid`, `user.id`) to people, with the forms
//! that change them. Every change is audited by the store (`OTLP_SERVICE_TOKEN_CREATED`,
//! `OTLP_IDENTITY_MAPPED`, `OTLP_IDENTITY_UNMAPPED`, in `auth::otlp_identities`).

use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderValue, header};
use axum::response::{Redirect, Response};
use serde::Deserialize;

use super::{Field, Flash, Form as PageForm, Row, Section, change, done, when};
use crate::auth::otlp_identities::{self, ATTRIBUTES, Mapping, Unknown};
use crate::auth::users;
use crate::http::errors::{AppError, PageError};
use crate::http::extract::Form;
use crate::state::AppState;
use crate::state::caller::Administrator;
use crate::web::report::Cell;

const PATH: &str = "/admin/adapters";

/// What the adapters page shows of OTLP identities, read in its transaction.
pub struct Identities {
    pub services: Vec<(String, String, i64)>,
    pub unknown: Vec<Unknown>,
    pub mappings: Vec<Mapping>,
}

impl Identities {
    pub fn read(conn: &rusqlite::Connection, now_ms: i64) -> Result<Identities, crate::db::DbError> {
        Ok(Identities {
            services: otlp_identities::services(conn, now_ms)?,
            unknown: otlp_identities::unknown(conn)?,
            mappings: otlp_identities::mappings(conn)?,
        })
    }

    /// The three sections: service accounts, identities without a person, mappings.
    pub fn sections(self) -> [Section; 3] {
        let mut services = Section::new("service-accounts", "Service accounts (OTLP collectors)")
            .intro("A collector (an OpenTelemetry Collector, a vendor's agent) that forwards many people's exports holds one service-account token; each record then counts as the person its user.email, user.account_uuid or user.id is mapped to below. A person's own token (from /install) needs no mapping.")
            .columns(vec!["Service account", "Token id", "Expires"])
            .empty("No service account has a token.")
            .form(
                PageForm::new(format!("{PATH}/service-tokens"), "Make a service-account token")
                    .field(Field::text("name", "Name (e.g. the collector it is for)", "")),
            );
        services.rows = self
            .services
            .into_iter()
            .map(|(name, token_id, expires_ms)| {
                Row::new(vec![Cell::text(name), Cell::text(token_id), when(Some(expires_ms))])
            })
            .collect();

        let mut unknown = Section::new("unknown-identities", "Identities without a person")
            .intro("Records a service account forwarded whose identity no mapping names: refused (the exporter is told), counted here, never stored under a guess. Map one to a person and their next records are stored.")
            .columns(vec!["Attribute", "Value", "Records refused", "First seen", "Last seen", "Via"])
            .empty("Every identity a service account forwarded is mapped.");
        unknown.rows = self
            .unknown
            .into_iter()
            .map(|line| {
                let mappable = ATTRIBUTES.contains(&line.attribute.as_str());
                let row = Row::new(vec![
                    Cell::text(line.attribute.clone()),
                    Cell::text(if mappable { line.value.clone() } else { "records that carry no identity".into() }),
                    Cell::count(line.records),
                    when(Some(line.first_seen_ms)),
                    when(Some(line.last_seen_ms)),
                    Cell::text(line.service),
                ]);
                if !mappable {
                    return row;
                }
                row.action(
                    PageForm::new(format!("{PATH}/identities"), "Map")
                        .field(Field::hidden("attribute", line.attribute))
                        .field(Field::hidden("value", line.value))
                        .field(Field::text("email", "Person's e-mail", "")),
                )
            })
            .collect();

        let mut mappings = Section::new("identity-mappings", "Identity mappings")
            .intro("Which exported identity is which person, for service accounts' records. E-mail addresses are compared without case; nothing else is matched.")
            .columns(vec!["Attribute", "Value", "Person", "Since"])
            .empty("No identity is mapped.")
            .form(
                PageForm::new(format!("{PATH}/identities"), "Map an identity")
                    .field(Field::select("attribute", "Attribute", "user.email", &ATTRIBUTES))
                    .field(Field::text("value", "Value", ""))
                    .field(Field::text("email", "Person's e-mail", "")),
            );
        mappings.rows = self
            .mappings
            .into_iter()
            .map(|line| {
                Row::new(vec![
                    Cell::text(line.attribute.clone()),
                    Cell::text(line.value.clone()),
                    Cell::text(line.email),
                    when(Some(line.created_at_ms)),
                ])
                .action(
                    PageForm::new(format!("{PATH}/identities/unmap"), "Remove")
                        .field(Field::hidden("attribute", line.attribute))
                        .field(Field::hidden("value", line.value))
                        .danger(),
                )
            })
            .collect();
        [services, unknown, mappings]
    }
}

#[derive(Deserialize)]
pub struct ServiceForm {
    name: Option<String>,
}

/// `POST /admin/adapters/service-tokens`: a service account's token, shown once on the
/// page that answers (never in a redirect's address), not cached.
pub async fn new_service_token(
    State(state): State<Arc<AppState>>,
    admin: Administrator,
    Form(form): Form<ServiceForm>,
) -> Result<Response, PageError> {
    let name = otlp_identities::service_name(&form.name.unwrap_or_default())
        .map_err(|message| AppError::bad_request("name", message))?;
    let (admin_id, now_ms) = (admin.0.user.id.clone(), state.clock.now_ms());
    let shown_name = name.clone();
    let token =
        change(&state, move |tx| Ok(Ok(otlp_identities::create_service_token(tx, &admin_id, &name, now_ms)?))).await?;
    let flash = Flash {
        done: Some(format!(
            "Service account {shown_name}'s token, shown only now: {} (send it as Authorization: Bearer <token> from the collector's OTLP exporter)",
            token.secret
        )),
    };
    let mut response = super::adapters::render(&state, flash).await?;
    response.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    Ok(response)
}

#[derive(Deserialize)]
pub struct MapForm {
    attribute: Option<String>,
    value: Option<String>,
    email: Option<String>,
}

fn attribute_of(text: Option<String>) -> Result<&'static str, AppError> {
    let text = text.unwrap_or_default();
    ATTRIBUTES.iter().copied().find(|attribute| *attribute == text.trim()).ok_or_else(|| {
        AppError::bad_request(
            "attribute",
            format!("attribute must be user.email, user.account_uuid or user.id, not {text:?}"),
        )
    })
}

fn value_of(text: Option<String>) -> Result<String, AppError> {
    let value = text.unwrap_or_default().trim().to_string();
    match value.chars().count() {
        1..=320 => Ok(value),
        _ => Err(AppError::bad_request("value", "value must be the exported identity, 1 to 320 characters")),
    }
}

/// `POST /admin/adapters/identities`: maps an exported identity to a person.
pub async fn map(
    State(state): State<Arc<AppState>>,
    admin: Administrator,
    Form(form): Form<MapForm>,
) -> Result<Redirect, PageError> {
    let attribute = attribute_of(form.attribute)?;
    let value = value_of(form.value)?;
    let email = form.email.unwrap_or_default().trim().to_string();
    let (actor, now_ms) = (admin.0.user.id.clone(), state.clock.now_ms());
    let message = change(&state, move |tx| {
        let Some(person) = users::find_by_email(tx, &email)? else {
            return Ok(Err(AppError::bad_request("email", format!("there is nobody {email:?}"))));
        };
        if person.disabled_at_ms.is_some() {
            let why = format!("{} is disabled: nothing would be stored as them; enable them first", person.email);
            return Ok(Err(AppError::bad_request("email", why)));
        }
        otlp_identities::map(tx, attribute, &value, &person.id, &actor, now_ms)?;
        Ok(Ok(format!("{attribute} {value} is now {}", person.email)))
    })
    .await?;
    Ok(done(PATH, &message))
}

/// `POST /admin/adapters/identities/unmap`: removes a mapping.
pub async fn unmap(
    State(state): State<Arc<AppState>>,
    admin: Administrator,
    Form(form): Form<MapForm>,
) -> Result<Redirect, PageError> {
    let attribute = attribute_of(form.attribute)?;
    let value = value_of(form.value)?;
    let (actor, now_ms) = (admin.0.user.id.clone(), state.clock.now_ms());
    let message = change(&state, move |tx| {
        if otlp_identities::unmap(tx, attribute, &value, &actor, now_ms)?.is_none() {
            return Ok(Err(AppError::NotFound));
        }
        Ok(Ok(format!("{attribute} {value} is no longer mapped")))
    })
    .await?;
    Ok(done(PATH, &message))
}
