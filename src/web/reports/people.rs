//! The reports about people rather than spend: adoption, governance, security and
//! knowledge. Counts of people below the minimum show as "fewer than N".

use super::super::report::{Cell, OTHER, Table};
use super::Ctx;
use super::usage::spread_table;
use crate::analytics::query::adoption::{self, PeopleCount};
use crate::analytics::query::groups::ToolKey;
use crate::analytics::query::{governance, security};
use crate::charts::{Bar, bars};
use crate::db::DbError;

fn people(count: PeopleCount) -> Cell {
    match count {
        PeopleCount::Shown(n) => Cell::count(n),
        PeopleCount::FewerThan(min) => Cell::text(format!("fewer than {min}")),
        PeopleCount::Withheld => Cell::text("withheld"),
    }
}

fn people_share(count: PeopleCount, whole: i64) -> Cell {
    match count {
        PeopleCount::Shown(n) => Cell::share(n, whole),
        PeopleCount::FewerThan(_) | PeopleCount::Withheld => Cell::text("—"),
    }
}

fn day(ms: i64) -> String {
    crate::model::rfc3339_ms(ms)[..10].to_string()
}

pub fn adoption(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let read = adoption::read(ctx.conn, &ctx.subject, ctx.period, ctx.min_people)?;
    let mut summary = Table::new("summary", "People", vec!["Figure", "People", "Share of members"]);
    summary.rows = vec![
        vec![Cell::text("Members"), Cell::count(read.members), Cell::text("")],
        vec![Cell::text("Active in the period"), people(read.active), people_share(read.active, read.members)],
        vec![
            Cell::text("Active in at least half the weeks"),
            people(read.steady),
            people_share(read.steady, read.members),
        ],
        vec![
            Cell::text("First session ever in the period"),
            people(read.newcomers),
            people_share(read.newcomers, read.members),
        ],
    ];
    let summary =
        summary.note("Members are the accounts in it today (enabled); active means one interactive session or more.");
    let mut weeks = Table::new(
        "weeks",
        "Week by week",
        vec!["Week from", "Active people", "Sessions", "Sessions per active person"],
    );
    let mut points = Vec::new();
    for week in &read.weeks {
        let per_person = match week.people {
            PeopleCount::Shown(n) if n > 0 => {
                let value = week.sessions as f64 / n as f64;
                Cell::shown(format!("{value:.1}"), format!("{value:.2}"))
            }
            _ => Cell::text("—"),
        };
        weeks.rows.push(vec![
            Cell::text(day(week.start_ms)),
            people(week.people),
            Cell::count(week.sessions),
            per_person,
        ]);
        points.push(Bar {
            label: day(week.start_ms)[5..].to_string(),
            hover: match week.people {
                PeopleCount::Shown(n) => format!("week from {}: {n} active people", day(week.start_ms)),
                PeopleCount::FewerThan(min) => {
                    format!("week from {}: fewer than {min} active people", day(week.start_ms))
                }
                PeopleCount::Withheld => format!("week from {}: withheld", day(week.start_ms)),
            },
            value: match week.people {
                PeopleCount::Shown(n) => n as f64,
                PeopleCount::FewerThan(_) | PeopleCount::Withheld => 0.0,
            },
        });
    }
    weeks.chart = Some(bars("Active people per week (people)", &points, |v| format!("{v:.0}"), 900, 200));
    let weeks = weeks.note("A week of fewer active people than the minimum shows no count (and no bar).");
    let mut agents = Table::new("agents-per-person", "Agents per person", vec!["Agents used", "People"]);
    for (label, count) in ["one", "two", "three or more"].iter().zip(read.by_agent_count) {
        agents.rows.push(vec![Cell::text(*label), people(count)]);
    }
    let agents = agents.note("How many different agents each active person made tool calls with.");
    Ok((
        "Who uses coding agents, how steadily, and how many came to them in the period.".into(),
        vec![summary, weeks, agents],
    ))
}

pub fn governance(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let read = governance::read(ctx.conn, ctx.period, ctx.min_people)?;
    let deletions = crate::deletion::counts_in(ctx.conn, ctx.period.from_ms, ctx.period.to_ms)?;
    let g = &read.grants;
    let mut grants = Table::new("grants", "Access grants", vec!["Outcome", "Grants"]);
    for (label, value) in [
        ("Requested", g.requested),
        ("Approved", g.approved),
        ("Denied", g.denied),
        ("Revoked", g.revoked),
        ("Expired", g.expired),
        ("Active at the end of the period", g.active),
    ] {
        grants.rows.push(vec![Cell::text(label), Cell::count(value)]);
    }
    let grants =
        grants.note("Each counted on the day of its act: a grant requested and approved in the period counts in both.");
    let mut audited = Table::new("audited", "Audited acts", vec!["Action", "Times"]);
    for (action, times) in &read.audited {
        audited.rows.push(vec![Cell::text(action.clone()), Cell::count(*times)]);
    }
    let audited = audited.note(
        "Every row of the audit log in the period, by action: reads of another person's sessions, transcripts and team figures (SESSION_READ, TRANSCRIPT_READ, GRANT_USED, MEMBER_VIEWED), the judge's reads, and changes to roles, policies and grants.",
    );
    let s = &read.sharing;
    let mut sharing = Table::new("sharing", "Sharing and visibility", vec!["Setting", "People", "Share of people"]);
    for (label, count) in [
        ("Share transcripts by default", s.share_transcripts),
        ("Allow the LLM judge to read transcripts", s.judge_opt_in),
        ("Turned team drill-in off", s.drill_in_off),
        ("Not named in team views", s.unnamed),
    ] {
        sharing.rows.push(vec![Cell::text(label), people(count), people_share(count, s.people)]);
    }
    sharing.rows.push(vec![
        Cell::text("Sessions of the period whose transcript is shared"),
        Cell::text(format!("{} of {}", s.sessions_shared, s.sessions_with_transcript)),
        Cell::share(s.sessions_shared, s.sessions_with_transcript),
    ]);
    let sharing =
        sharing.note("People are the enabled accounts today; a count below the minimum shows as “fewer than”.");
    let d = &deletions;
    let mut deletions = Table::new("deletions", "Deletion requests", vec!["Figure", "Count"]);
    for (label, value) in [
        ("Requested in the period", d.requested),
        ("Completed in the period", d.completed),
        ("Open now", d.open),
        ("Sessions deleted in the period", d.sessions_deleted),
    ] {
        deletions.rows.push(vec![Cell::text(label), Cell::count(value)]);
    }
    Ok((
        "How the privacy controls are used: grants, audited reads, sharing and deletion. Counts, never who.".into(),
        vec![grants, audited, sharing, deletions],
    ))
}

pub fn security(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    let modes = security::modes(ctx.conn, &ctx.subject, ctx.period, ctx.min_people)?;
    let total: i64 = modes.events.iter().sum();
    let mut table = Table::new("modes", "Permission modes", vec!["Mode", "Events", "Share of events", "People"]);
    for (i, mode) in security::MODES.iter().enumerate() {
        table.rows.push(vec![
            Cell::text(*mode),
            Cell::count(modes.events[i]),
            Cell::share(modes.events[i], total),
            people(modes.people[i]),
        ]);
    }
    let table = table.note("Events recorded in each permission mode; bypass and auto run tools without asking the person. Events of no stated mode are not counted.");
    let per_team = security::modes_per_team(ctx.conn, &ctx.groups, ctx.period, ctx.min_people)?;
    let mut teams = Table::new(
        "team-modes",
        "Unattended modes per team",
        vec!["Team", "People", "Events", "Bypass", "Auto", "Don't ask"],
    );
    for row in &per_team {
        let events: i64 = row.figures.iter().sum();
        teams.rows.push(vec![
            Cell::text(row.key.clone().unwrap_or_else(|| OTHER.into())),
            Cell::count(row.people),
            Cell::count(events),
            Cell::share(row.figures[5], events),
            Cell::share(row.figures[3], events),
            Cell::share(row.figures[4], events),
        ]);
    }
    let hits = security::redactions(ctx.conn, &ctx.subject, ctx.period, ctx.min_people)?;
    let mut redactions = Table::new(
        "redactions",
        "Secrets redacted, by rule",
        vec!["Rule", "People", "At the hook", "At ingest", "Caught at ingest"],
    );
    for row in &hits {
        let (hook, ingest) = row.figures;
        redactions.rows.push(vec![
            Cell::text(row.key.clone().unwrap_or_else(|| "other (rules too few people hit to show alone)".into())),
            Cell::count(row.people),
            Cell::count(hook),
            Cell::count(ingest),
            Cell::share(ingest, hook + ingest),
        ]);
    }
    let redactions = redactions.note(
        "Secrets taken out of interactive events' metadata. At the hook: the hook had redacted them before sending; at ingest: the server caught what the hook let through (an old hook, or a client that does not redact). Transcripts are redacted too, and not counted here.",
    );
    Ok((
        "How much agent work ran without a person approving each step, and which secrets were kept out of storage."
            .into(),
        vec![table, teams.note("Shares of each group's events with a stated mode."), redactions],
    ))
}

pub fn knowledge(ctx: &Ctx<'_>) -> Result<(String, Vec<Table>), DbError> {
    Ok((
        "Which skills, slash commands and tool servers spread across teams, and where they started.".into(),
        vec![
            spread_table("skills", "Skills", "Skill", ctx, ToolKey::Skill)?,
            spread_table("commands", "Slash commands", "Command", ctx, ToolKey::SlashCommand)?,
            spread_table("servers", "Tool servers", "Server", ctx, ToolKey::Server)?,
        ],
    ))
}
