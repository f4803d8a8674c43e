//! How a session is named wherever it is listed or headed: by what it was about (its
//! title from the transcript, `transcripts::title`) for a reader who may read that
//! transcript, else by where it worked ("acme/shop on fix-login"), never by its UUID; and
//! its repository as `owner/name` linked to its host.
//!
//! Invariant: a title is transcript content, so only [`titled`] shows one and its
//! callers pass titles only for the reader's own sessions (or on the transcript page,
//! whose read is audited); every other list uses [`neutral`], made of the session's
//! metadata that reader already sees (repository, branch, agent).

use std::collections::HashMap;

use crate::model::instants;
use crate::sessions::listing::SessionRow;

/// A session row with its name and its repository as shown.
pub struct Named {
    pub row: SessionRow,
    pub name: String,
    /// Whether `name` is the transcript's title (shown in a plain font) rather than the
    /// neutral name (muted, so a reader sees it says where, not what).
    pub titled: bool,
    pub repository: Repository,
}

/// A repository as shown: `owner/name` with a link when the remote reads as one, the
/// remote as recorded otherwise, empty when the session reported none.
pub struct Repository {
    pub shown: String,
    pub href: Option<String>,
}

impl Repository {
    pub fn of(remote: Option<&str>) -> Repository {
        let Some(remote) = remote.filter(|remote| !remote.trim().is_empty()) else {
            return Repository { shown: String::new(), href: None };
        };
        match instants::repository(remote) {
            Some((shown, href)) => Repository { shown, href: Some(href) },
            None => Repository { shown: remote.to_string(), href: None },
        }
    }
}

/// A session's name from its metadata: "acme/shop on fix-login", "acme/shop", or
/// "a claude_code session" when it reported no git work.
pub fn neutral(agent_type: &str, remote: Option<&str>, branch: Option<&str>) -> String {
    let repository = Repository::of(remote).shown;
    let branch = branch.map(str::trim).filter(|branch| !branch.is_empty());
    match (repository.is_empty(), branch) {
        (false, Some(branch)) => format!("{repository} on {branch}"),
        (false, None) => repository,
        (true, Some(branch)) => format!("{agent_type} session on {branch}"),
        (true, None) => format!("a {agent_type} session"),
    }
}

/// Rows named by their titles where `titles` has one (the reader's own sessions),
/// neutrally otherwise.
pub fn titled(rows: Vec<SessionRow>, titles: &HashMap<String, String>) -> Vec<Named> {
    rows.into_iter()
        .map(|row| {
            let title = titles.get(&row.id).cloned();
            let titled = title.is_some();
            let name = title.unwrap_or_else(|| neutral(&row.agent_type, row.repo.as_deref(), row.branch.as_deref()));
            let repository = Repository::of(row.repo.as_deref());
            Named { row, name, titled, repository }
        })
        .collect()
}

/// Rows named from their metadata only (another person's sessions).
pub fn untitled(rows: Vec<SessionRow>) -> Vec<Named> {
    titled(rows, &HashMap::new())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_neutral_name_says_where_the_session_worked() {
        assert_eq!(
            neutral("claude_code", Some("git@github.com:acme/shop.git"), Some("fix-login")),
            "acme/shop on fix-login"
        );
        assert_eq!(neutral("codex", Some("https://github.com/acme/shop"), None), "acme/shop");
        assert_eq!(neutral("codex", Some("/home/ada/scratch"), Some(" ")), "/home/ada/scratch");
        assert_eq!(neutral("codex", None, Some("main")), "codex session on main");
        assert_eq!(neutral("gemini_cli", Some(""), None), "a gemini_cli session");
    }

    #[test]
    fn a_repository_links_only_when_it_reads_as_owner_and_name() {
        let linked = Repository::of(Some("git@github.com:acme/research.git"));
        assert_eq!(
            (linked.shown.as_str(), linked.href.as_deref()),
            ("acme/research", Some("https://github.com/acme/research"))
        );
        let local = Repository::of(Some("/srv/git/tools"));
        assert_eq!((local.shown.as_str(), local.href), ("/srv/git/tools", None));
        assert_eq!(Repository::of(None).shown, "");
    }
}
