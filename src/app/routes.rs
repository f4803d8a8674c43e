//! Every route of every listener, on one screen. Features own their handlers; this
//! file only mounts them, with the layers each listener needs.
//!
//! - ingest (`listen.ingest`): the `/v1` API of developer machines, the token
//!   endpoints (so `sightline login` needs only this address), `/health`, `/readyz`,
//!   `/metrics`.
//! - web (`listen.web`): sign-in, the person's pages and the JSON API, every route
//!   behind `web::security::guard` (CSRF and security headers).
//! - GitHub app (`listen.github`): `POST /github/webhooks` (the App's deliveries), `/health`.
//! - OTLP/gRPC (`listen.otlp_grpc`, HTTP/2): the collector services' `Export` calls.
//! - eval dashboard (`sightline dashboard`): its pages and API over a results.db,
//!   behind `evals::dashboard::auth::guard`.

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, patch, post};

use super::ops::listener_router;
use crate::evals::dashboard::{self, DashState, api as evals_api, pages as evals_pages};
use crate::ingest;
use crate::state::AppState;
use crate::web::{
    access_requests, admin, benchmarks, deletion, device, eval_api, github, grants, insights, install, install_script,
    jobs, login, me, my_prs, my_session, my_sessions, oauth, org, org_search, overview, password_link, reports, search,
    security, sessions, settings, team_people, teams, transcript_page,
};

/// The token endpoints, on both the ingest and the web listener.
fn token_routes() -> Router<Arc<AppState>> {
    Router::new()
        .route("/oauth/token", post(oauth::token))
        .route("/oauth/revoke", post(oauth::revoke))
        .route("/oauth/device/code", post(oauth::device_code))
        .route("/oauth/device/token", post(oauth::device_token))
        .route("/api/me/hook-tokens", post(oauth::create_hook_token))
}

pub fn ingest(state: Arc<AppState>) -> Router {
    let prefix = state.config.ingest.otlp_path_prefix.clone();
    let routes = Router::new()
        .route("/v1/events", post(ingest::post_events))
        // OTLP/HTTP at its default paths and under the configured prefix.
        .route("/v1/logs", post(ingest::otlp::post_logs))
        .route("/v1/metrics", post(ingest::otlp::post_metrics))
        .route("/v1/traces", post(ingest::otlp::post_traces))
        .route(&format!("{prefix}/v1/logs"), post(ingest::otlp::post_logs))
        .route(&format!("{prefix}/v1/metrics"), post(ingest::otlp::post_metrics))
        .route(&format!("{prefix}/v1/traces"), post(ingest::otlp::post_traces))
        .route("/v1/price-table", get(ingest::price_table))
        // The one-line install for developer machines, and the hook binaries it downloads.
        .route("/install.sh", get(install_script::script))
        .route("/install/hook/{name}", get(install_script::hook_binary))
        .route("/v1/transcripts/{session_id}", get(ingest::transcripts::state_of).post(ingest::transcripts::post_chunk))
        .route("/v1/me/sessions/{agent_type}/{session_id}", get(ingest::me::session))
        .route("/v1/me/sessions/{agent_type}/{session_id}/events", get(ingest::me::session_events))
        // Behind the same CSRF guard and headers as on the web listener.
        .merge(token_routes().layer(axum::middleware::from_fn_with_state(state.clone(), security::guard)))
        .fallback(|| async { crate::http::errors::AppError::NotFound });
    listener_router(state, "ingest", routes, true)
}

pub fn web(state: Arc<AppState>) -> Router {
    let routes = Router::new()
        .route("/login", get(login::show).post(login::submit))
        .route("/login/check", get(login::check))
        .route("/password/{secret}", get(password_link::show).post(password_link::submit))
        .route("/static/{file}", get(crate::http::assets::serve))
        .route("/logout", post(login::logout))
        .route("/auth/github", get(github::start))
        .route("/auth/github/callback", get(github::callback))
        .route("/device", get(device::show).post(device::submit))
        .route("/", get(overview::root))
        .route("/me", get(overview::page))
        .route("/me/sessions", get(my_sessions::page))
        .route("/me/runs", get(my_sessions::machine_runs))
        .route("/grants", get(access_requests::page).post(access_requests::request))
        .route("/grants/{id}", get(access_requests::grant_page))
        .route("/sessions/{id}", get(my_session::page))
        .route("/sessions/{id}/transcript", get(transcript_page::page))
        .route("/me/sessions/{id}", get(my_session::moved))
        .route("/me/sessions/{id}/transcript", get(my_session::moved))
        .route("/me/sessions/{id}/sharing", post(my_session::set_sharing))
        .route("/me/sessions/{id}/feedback", post(my_session::set_feedback))
        .route("/me/search", get(search::page))
        .route("/me/insights", get(insights::page))
        .route("/me/prs", get(my_prs::page))
        .route("/me/settings", get(settings::page))
        .route("/me/settings/visibility", post(settings::set_visibility))
        .route("/me/settings/tokens/{id}/revoke", post(settings::revoke_token))
        .route("/me/settings/sign-ins/{id}/revoke", post(settings::revoke_sign_in))
        .route("/me/settings/deletion", post(settings::request_deletion))
        .route("/me/settings/audit", get(me::audit_page))
        .route("/me/grants", get(me::grants_page))
        .route("/team", get(teams::index))
        .route("/team/{slug}", get(teams::overview))
        .route("/team/{slug}/roster", get(teams::roster))
        .route("/team/{slug}/sessions", get(team_people::sessions))
        .route("/team/{slug}/pulls", get(team_people::pulls))
        .route("/team/{slug}/members/{user}", get(team_people::member))
        .route("/team/{slug}/{report}", get(reports::team_report))
        .route("/org", get(org::dashboard))
        .route("/org/benchmarks", get(benchmarks::page))
        .route("/org/search", get(org_search::page))
        .route("/org/{report}", get(reports::org_report))
        .route("/api/me/audit", get(me::audit_json))
        .route("/api/me/grants", get(me::grants_json))
        .route("/api/me/visibility", get(me::visibility).patch(me::set_visibility))
        .route("/api/me/deletion", post(deletion::request).get(deletion::status))
        .route("/api/search", get(search::search))
        .route("/api/evals/cells/{cell_id}", get(eval_api::cell))
        .route("/api/evals/runs/{run_name}", get(eval_api::run))
        .route("/api/sessions/{id}", get(sessions::session))
        .route("/api/sessions/{id}/events", get(sessions::events))
        .route("/api/sessions/{id}/transcript", get(sessions::transcript))
        .route("/api/grants", get(grants::list).post(grants::request))
        .route("/api/grants/{id}/approve", post(grants::approve))
        .route("/api/grants/{id}/deny", post(grants::deny))
        .route("/api/grants/{id}/revoke", post(grants::revoke))
        .route("/api/users/{id}/visibility", patch(grants::lower_visibility))
        .route("/admin", get(|| async { axum::response::Redirect::to("/admin/health") }))
        .route("/admin/health", get(admin::health::page))
        .route("/admin/jobs", get(jobs::list))
        .route("/admin/jobs/{name}/runs", get(jobs::history))
        .route("/admin/jobs/{name}/run", post(jobs::trigger))
        .route("/admin/jobs/{name}/schedule", post(admin::jobs::schedule))
        .route("/admin/people", get(admin::people::page).post(admin::people::add))
        .route("/admin/people/import", post(admin::people::import))
        .route("/admin/people/{user}/role", post(admin::people::set_role))
        .route("/admin/people/{user}/{act}", post(admin::people::act))
        .route("/admin/teams", get(admin::teams::page).post(admin::teams::create))
        .route("/admin/teams/{slug}/rename", post(admin::teams::rename))
        .route("/admin/teams/{slug}/parent", post(admin::teams::move_under))
        .route("/admin/teams/{slug}/members", post(admin::teams::add_member))
        .route("/admin/teams/{slug}/members/{user}", post(admin::teams::set_member_role))
        .route("/admin/teams/{slug}/members/{user}/remove", post(admin::teams::remove_member))
        // The pages' earlier addresses, for bookmarks.
        .route("/admin/org-roles", get(|| async { axum::response::Redirect::permanent("/admin/people") }))
        .route("/admin/team-roles", get(|| async { axum::response::Redirect::permanent("/admin/teams") }))
        .route("/admin/price-tables", get(admin::prices::page).post(admin::prices::upload))
        .route(
            admin::catalogue::PATH,
            post(admin::catalogue::preview)
                .layer(axum::extract::DefaultBodyLimit::max(admin::catalogue::MAX_CATALOGUE_BYTES)),
        )
        .route("/admin/price-tables/catalogue/apply", post(admin::catalogue::apply))
        .route("/admin/retention", get(admin::retention::page))
        .route("/admin/retention/{slug}", post(admin::retention::set_team))
        .route("/admin/access-grants", get(admin::grants::page))
        .route("/admin/access-grants/{id}/{act}", post(admin::grants::act))
        .route("/admin/adapters", get(admin::adapters::page))
        .route("/admin/adapters/service-tokens", post(admin::identities::new_service_token))
        .route("/admin/adapters/identities", post(admin::identities::map))
        .route("/admin/adapters/identities/unmap", post(admin::identities::unmap))
        .route("/admin/alerts", get(admin::alerts::page))
        .route("/admin/alerts/rules/{rule}", post(admin::alerts::set_rule))
        .route("/admin/alerts/budgets", post(admin::alerts::set_budget))
        .route("/admin/alerts/budgets/{id}/remove", post(admin::alerts::remove_budget))
        .route("/admin/alerts/channels/{channel}", post(admin::alerts::set_channel))
        .route("/admin/alerts/channels/{channel}/test", post(admin::alerts::test_channel))
        .route("/admin/alerts/events/{id}/{act}", post(admin::alerts::act_on_event))
        .route("/admin/slo", get(admin::slo::page))
        .route("/admin/projections", get(admin::projections::page).post(admin::projections::record))
        .route("/admin/projections/{id}/remove", post(admin::projections::remove))
        .route("/install", get(install::page))
        .route("/install/otlp-token", post(install::new_otlp_token))
        .merge(token_routes())
        .fallback(crate::web::not_found)
        .layer(axum::middleware::from_fn_with_state(state.clone(), security::guard));
    listener_router(state, "web", routes, false)
}

pub fn github(state: Arc<AppState>) -> Router {
    let routes = Router::new()
        .route("/github/webhooks", post(crate::github::receiver::receive))
        .layer(axum::extract::DefaultBodyLimit::max(crate::github::receiver::MAX_BODY_BYTES))
        .fallback(|| async { crate::http::errors::AppError::NotFound });
    listener_router(state, "github", routes, false)
}

/// OTLP/gRPC (`listen.otlp_grpc`): the collector services' `Export` calls.
pub fn otlp_grpc(state: Arc<AppState>) -> Router {
    use ingest::otlp_grpc::{LOGS_PATH, METRICS_PATH, TRACES_PATH};
    let routes = Router::new()
        .route(LOGS_PATH, post(ingest::otlp_grpc::export_logs))
        .route(METRICS_PATH, post(ingest::otlp_grpc::export_metrics))
        .route(TRACES_PATH, post(ingest::otlp_grpc::export_traces))
        .fallback(ingest::otlp_grpc::unimplemented);
    listener_router(state, "otlp_grpc", routes, false)
}

pub fn dashboard(state: Arc<DashState>) -> Router {
    let mut router = Router::new()
        .route("/", get(evals_pages::overview))
        .route("/run/{run}", get(evals_pages::run_detail))
        .route("/run/{run}/cell/{*cell_id}", get(evals_pages::cell))
        .route("/run/{run}/export/{format}", get(evals_api::export))
        .route("/compare", get(evals_pages::compare))
        .route("/login", get(evals_pages::login_form).post(evals_pages::login))
        .route("/logout", post(evals_pages::logout))
        .route("/health", get(|| async { "ok\n" }))
        .route("/static/app.js", get(dashboard::app_js))
        .route("/static/{file}", get(crate::http::assets::serve))
        .route("/api/runs", get(evals_api::runs))
        .route("/api/run/{run}", get(evals_api::results_page))
        .route("/api/run/{run}/leaderboard", get(evals_api::leaderboard))
        .route("/api/run/{run}/status", get(evals_api::status))
        .route("/api/run/{run}/errors", get(evals_api::errors))
        .route("/api/run/{run}/cell/{*cell_id}", get(evals_api::cell))
        .route("/api/compare", get(evals_api::compare));
    if state.auth.is_none() {
        // Interactive documentation only without authentication (docs/evals-dashboard.md).
        router = router
            .route("/openapi.json", get(dashboard::openapi))
            .route("/docs", get(evals_pages::docs))
            .route("/redoc", get(|| async { axum::response::Redirect::permanent("/docs") }));
    }
    router
        .fallback(dashboard::not_found)
        .layer(axum::middleware::from_fn_with_state(state.clone(), dashboard::auth::guard))
        .with_state(state)
}
