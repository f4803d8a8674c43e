//! Operator verbs for people: `user add|list|set-role|set-password|disable` and
//! `team add|add-member|list`. They run in-process against `main.db`, beside a running
//! server.
//!
//! Invariants: passwords are read from standard input only (never a flag, which would
//! land in shell history and `ps`), checked against the policy and hashed before any
//! write; disabling a user revokes every sign-in and token in the same transaction;
//! role changes and disabling are audited with no actor (the operator at the host).

use std::io::{BufRead, Write};

use clap::Subcommand;

use super::operator::open_main;
use super::{ConfigArgs, load_config};
use crate::access::teams;
use crate::audit::{self, Action, Entry};
use crate::auth::{passwords, users};
use crate::config::Overrides;
use crate::db::side_door;

#[derive(Debug, Subcommand)]
pub enum UserCommand {
    /// Add a user.
    Add {
        #[command(flatten)]
        config: ConfigArgs,
        #[arg(long)]
        email: String,
        #[arg(long)]
        name: String,
        /// ADMIN, INVESTIGATOR, MEMBER or VIEWER_AGGREGATE (docs/access.md).
        #[arg(long, default_value = "MEMBER")]
        role: String,
        /// Read a password for sign-in from standard input (first line).
        #[arg(long)]
        password_stdin: bool,
    },
    /// List users.
    List {
        #[command(flatten)]
        config: ConfigArgs,
    },
    /// Change a user's org role.
    SetRole {
        #[command(flatten)]
        config: ConfigArgs,
        #[arg(long)]
        email: String,
        #[arg(long)]
        role: String,
    },
    /// Set a user's password, read from standard input (first line).
    SetPassword {
        #[command(flatten)]
        config: ConfigArgs,
        #[arg(long)]
        email: String,
        /// Required: the password is read from standard input, never from a flag.
        #[arg(long, required = true)]
        password_stdin: bool,
    },
    /// Disable a user: they can no longer sign in, and every token they hold stops working.
    Disable {
        #[command(flatten)]
        config: ConfigArgs,
        #[arg(long)]
        email: String,
    },
}

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Add a team (optionally below a parent team, with its own retention).
    Add {
        #[command(flatten)]
        config: ConfigArgs,
        /// Lower-case a-z, 0-9 and -, used in URLs (/team/<slug>).
        #[arg(long)]
        slug: String,
        #[arg(long)]
        name: String,
        /// The parent team's slug.
        #[arg(long)]
        parent: Option<String>,
        /// Keep this team's data this many days (overrides the organisation's setting).
        #[arg(long)]
        retention_days: Option<i64>,
    },
    /// Add a user to a team, or change their team role.
    AddMember {
        #[command(flatten)]
        config: ConfigArgs,
        #[arg(long)]
        team: String,
        #[arg(long)]
        email: String,
        /// lead or member.
        #[arg(long, default_value = "member")]
        role: String,
    },
    /// List teams.
    List {
        #[command(flatten)]
        config: ConfigArgs,
    },
}

/// The first line of standard input, without its line ending.
fn password_from_stdin() -> anyhow::Result<String> {
    let mut line = String::new();
    std::io::stdin().lock().read_line(&mut line)?;
    let password = line.trim_end_matches(['\n', '\r']).to_string();
    anyhow::ensure!(!password.is_empty(), "no password on standard input");
    Ok(password)
}

pub fn user(command: UserCommand) -> anyhow::Result<i32> {
    match command {
        UserCommand::Add { config, email, name, role, password_stdin } => {
            // Hash first: a bad password must not leave a half-made user behind.
            let hash = if password_stdin { Some(passwords::hash(&password_from_stdin()?)?) } else { None };
            let config = load_config(&config, Overrides::default())?;
            let conn = open_main(&config)?;
            let user = side_door::write(&conn, |tx| -> anyhow::Result<_> {
                let user = users::add(tx, &email, &name, &role, crate::clock::system_now_ms())?;
                if let Some(hash) = hash {
                    users::set_password_hash(tx, &user.email, &hash)?;
                }
                Ok(user)
            })?;
            println!("added user {} <{}> ({}) id {}", user.name, user.email, user.org_role, user.id);
            Ok(0)
        }
        UserCommand::List { config } => {
            let config = load_config(&config, Overrides::default())?;
            let conn = open_main(&config)?;
            let mut out = std::io::stdout().lock();
            writeln!(out, "{:<36}  {:<32}  {:<16}  {:<8}  NAME", "ID", "EMAIL", "ROLE", "STATE")?;
            for user in users::list(&conn)? {
                let state = if user.disabled_at_ms.is_some() { "disabled" } else { "active" };
                writeln!(
                    out,
                    "{:<36}  {:<32}  {:<16}  {:<8}  {}",
                    user.id, user.email, user.org_role, state, user.name
                )?;
            }
            Ok(0)
        }
        UserCommand::SetRole { config, email, role } => {
            let role = users::parse_role(&role)?;
            let config = load_config(&config, Overrides::default())?;
            let conn = open_main(&config)?;
            let before = side_door::write(&conn, |tx| -> anyhow::Result<_> {
                let before = users::by_email(tx, &email)?;
                users::change_role(tx, &before, &role, None, crate::clock::system_now_ms())?;
                Ok(before)
            })?;
            println!("{} is now {role} (was {})", before.email, before.org_role);
            Ok(0)
        }
        UserCommand::SetPassword { config, email, password_stdin: _ } => {
            let hash = passwords::hash(&password_from_stdin()?)?;
            let config = load_config(&config, Overrides::default())?;
            let conn = open_main(&config)?;
            let user = users::set_password_hash(&conn, &email, &hash)?;
            println!("password set for {}", user.email);
            Ok(0)
        }
        UserCommand::Disable { config, email } => {
            let config = load_config(&config, Overrides::default())?;
            let conn = open_main(&config)?;
            let now_ms = crate::clock::system_now_ms();
            let user = side_door::write(&conn, |tx| -> anyhow::Result<_> {
                let user = users::disable(tx, &email, now_ms)?;
                let entry = Entry {
                    actor_id: None,
                    action: Action::UserDisabled,
                    subject_user_id: Some(&user.id),
                    target: Some(&user.id),
                    detail: serde_json::json!({}),
                };
                audit::record(tx, &entry, now_ms)?;
                Ok(user)
            })?;
            println!("disabled {}; their sign-ins and tokens are revoked", user.email);
            Ok(0)
        }
    }
}

pub fn team(command: TeamCommand) -> anyhow::Result<i32> {
    match command {
        TeamCommand::Add { config, slug, name, parent, retention_days } => {
            let config = load_config(&config, Overrides::default())?;
            let conn = open_main(&config)?;
            let team =
                teams::add(&conn, &slug, &name, parent.as_deref(), retention_days, crate::clock::system_now_ms())?;
            println!("added team {} ({}) id {}", team.slug, team.name, team.id);
            Ok(0)
        }
        TeamCommand::AddMember { config, team, email, role } => {
            let config = load_config(&config, Overrides::default())?;
            let conn = open_main(&config)?;
            let team = teams::by_slug(&conn, &team)?;
            let user = users::by_email(&conn, &email)?;
            teams::add_member(&conn, &team.id, &user.id, &role, crate::clock::system_now_ms())?;
            println!("{} is a {} of {}", user.email, role.trim().to_ascii_lowercase(), team.slug);
            Ok(0)
        }
        TeamCommand::List { config } => {
            let config = load_config(&config, Overrides::default())?;
            let conn = open_main(&config)?;
            let mut out = std::io::stdout().lock();
            writeln!(out, "{:<24}  {:<8}  {:<10}  NAME", "SLUG", "MEMBERS", "RETENTION")?;
            for (team, members) in teams::list(&conn)? {
                let retention = team.retention_days.map_or("default".to_string(), |days| format!("{days} d"));
                writeln!(out, "{:<24}  {:<8}  {:<10}  {}", team.slug, members, retention, team.name)?;
            }
            Ok(0)
        }
    }
}
