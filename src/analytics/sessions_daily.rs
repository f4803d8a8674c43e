//! The daily sessions aggregate (`agg_sessions_daily`, owned here): per day, person and
//! team, the `INTERACTIVE` sessions, active time, notifications by kind, response time
//! and the mix of permission modes, and the friction of the day's scored sessions (sum
//! and count, from `sessions.friction_score`). A person in several teams has a row for each (a team
//! sums its members); a person in none has one with team `''`. Membership is read when the
//! day is refreshed.

use rusqlite::{Connection, ToSql, params, params_from_iter};

use crate::db::DbError;
use crate::events::partitions::DailySessions;

/// Replaces the rows of the day starting at `day_start_ms` with `people`, one row per
/// team each is in now.
pub fn replace_day(conn: &Connection, day_start_ms: i64, people: &[DailySessions]) -> Result<usize, DbError> {
    conn.prepare_cached("DELETE FROM agg_sessions_daily WHERE day_start_ms = ?1")?.execute([day_start_ms])?;
    let teams = crate::access::teams::memberships(conn)?;
    let none = vec![String::new()];
    let mut insert = conn.prepare_cached(
        "INSERT INTO agg_sessions_daily (day_start_ms, user_id, team_id, sessions, active_ms,
             notifications_permission, notifications_idle, notifications_elicitation, notifications_auth,
             notifications_other, response_ms, responses, mode_normal, mode_plan, mode_accept_edits, mode_auto,
             mode_dont_ask, mode_bypass)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18)",
    )?;
    let mut rows = 0;
    for person in people {
        for team in teams.get(&person.user_id).unwrap_or(&none) {
            let keys: [&dyn ToSql; 3] = [&day_start_ms, &person.user_id, team];
            let figures = person.figures();
            insert
                .execute(params_from_iter(keys.into_iter().chain(figures.iter().map(|figure| figure as &dyn ToSql))))?;
            rows += 1;
        }
    }
    // Friction of the day's scored sessions (scoring marks the day dirty when it writes).
    let mut friction = conn.prepare_cached(
        "UPDATE agg_sessions_daily SET friction_sum = ?3, friction_sessions = ?4 WHERE day_start_ms = ?1 AND user_id = ?2",
    )?;
    for (user_id, sum, count) in
        crate::sessions::scored::friction_by_person(conn, day_start_ms, day_start_ms + 86_400_000)?
    {
        friction.execute(params![day_start_ms, user_id, sum, count])?;
    }
    Ok(rows)
}
