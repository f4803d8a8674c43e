//! People and teams in the console (`/admin/people`, `/admin/teams`, `/password/<secret>`)
//! on the real server: a person added gets a one-time link that works once, checks
//! the password, signs them in and ends their other sign-ins; a CSV adds everyone or
//! nobody; disabling revokes what the person holds and the last administrator stays;
//! teams are created, renamed, nested (never under themselves) and their members
//! changed, each with its audit row; a team the GitHub sync keeps refuses what the
//! next sync would undo and still takes its leads.

use crate::admin_console::{ADMIN, world};
use crate::common::*;

/// The one-time links on a page that answered a form: (e-mail, path of the link).
fn links(page: &str) -> Vec<(String, String)> {
    let section = &page[page.find("id=\"links\"").expect("the links section")..];
    let table = &section[..section.find("</table>").unwrap()];
    table
        .split("<tr>")
        .skip(2)
        .map(|row| {
            let cells: Vec<&str> = row.split("<td>").skip(1).map(|cell| cell.split("</td>").next().unwrap()).collect();
            let path = &cells[1][cells[1].find("/password/").unwrap()..];
            (cells[0].to_string(), path.to_string())
        })
        .collect()
}

fn get(world: &crate::admin_console::World, path: &str) -> (u16, String) {
    let (status, body, _) = world.page(None, path);
    (status, body)
}

#[test]
fn a_person_added_sets_their_password_once_with_the_link() {
    let world = world();
    let (status, page, _) = world.form(
        Some(ADMIN),
        "/admin/people",
        &[("email", "noor@example.com"), ("name", "Noor Haddad"), ("role", "MEMBER"), ("team", "web")],
    );
    assert_eq!(status, 200, "{page}");
    let made = links(&page);
    assert_eq!(made.len(), 1);
    let (email, path) = &made[0];
    assert_eq!(email, "noor@example.com");
    assert!(page.contains("active, no password yet"), "the list says they have no password");
    assert_eq!(world.audited("USER_ADDED"), 1);
    assert_eq!(
        world.count("SELECT count(*) FROM team_members m JOIN teams t ON t.id = m.team_id WHERE t.slug = 'web'"),
        3
    );
    let stored: i64 =
        world.count("SELECT count(*) FROM password_links WHERE purpose = 'welcome' AND used_at_ms IS NULL");
    assert_eq!(stored, 1);

    // The same address twice and again an existing one is refused; nothing is added.
    let (status, body, _) = world.form(
        Some(ADMIN),
        "/admin/people",
        &[("email", "NOOR@example.com"), ("name", "Noor"), ("role", "MEMBER")],
    );
    assert!(status == 400 && body.contains("already exists"), "{status} {body}");

    let (status, form) = get(&world, path);
    assert_eq!(status, 200);
    assert!(form.contains("Welcome to Sightline") && form.contains("noor@example.com"), "{form}");
    let post = |fields: &[(&str, &str)]| world.form(None, path, fields);
    let (status, body, _) =
        post(&[("password", "a long and private phrase"), ("repeat", "a long and private phrase!")]);
    assert!(status == 400 && body.contains("The two passwords differ"), "{body}");
    let (status, body, _) = post(&[("password", "short"), ("repeat", "short")]);
    assert!(status == 400 && body.contains("at least 8 characters"), "{body}");
    assert_eq!(world.count("SELECT count(*) FROM users WHERE email = 'noor@example.com' AND password_hash IS NULL"), 1);

    let (status, _, location) =
        post(&[("password", "a long and private phrase"), ("repeat", "a long and private phrase")]);
    assert_eq!((status, location.starts_with("/login/check")), (303, true), "signed in: {location}");
    assert_eq!(world.audited("PASSWORD_SET_BY_LINK"), 1);
    let (status, _, _) = post(&[("password", "another long phrase"), ("repeat", "another long phrase")]);
    assert_eq!(status, 404, "a link works once");
    assert_eq!(get(&world, path).0, 404);
    assert_eq!(get(&world, "/password/not-a-secret").0, 404);
    // The password works at the token endpoint like any other.
    let (status, _) = read(agent().post(format!("{}/oauth/token", world.server.web)).send_form([
        ("grant_type", "password"),
        ("username", "noor@example.com"),
        ("password", "a long and private phrase"),
    ]));
    assert_eq!(status, 200);

    // A reset link for someone who has a password: it voids the older one and, used,
    // ends their sign-ins.
    let noor = world.user_id("noor@example.com");
    let (_, first, _) = world.form(Some(ADMIN), &format!("/admin/people/{noor}/password-link"), &[]);
    let (_, second, _) = world.form(Some(ADMIN), &format!("/admin/people/{noor}/password-link"), &[]);
    let (first, second) = (links(&first).remove(0).1, links(&second).remove(0).1);
    assert_eq!(world.audited("PASSWORD_LINK_MADE"), 2);
    assert_eq!(get(&world, &first).0, 404, "a newer link voids the older");
    let live =
        world.count(&format!("SELECT count(*) FROM auth_sessions WHERE user_id = '{noor}' AND revoked_at_ms IS NULL"));
    assert!(live >= 1, "signed in before the reset");
    let (status, _, _) =
        world.form(None, &second, &[("password", "a brand new phrase"), ("repeat", "a brand new phrase")]);
    assert_eq!(status, 303);
    let live = world.count(&format!(
        "SELECT count(*) FROM auth_sessions WHERE user_id = '{noor}' AND revoked_at_ms IS NULL AND revoked_reason IS NULL"
    ));
    assert_eq!(live, 1, "only the sign-in the link just made is live");
}

#[test]
fn a_csv_adds_everyone_or_nobody() {
    let world = world();
    let before = world.count("SELECT count(*) FROM users");
    let bad = "email,name,role,team\nana@example.com,Ana,MEMBER,web\nbo@example.com,Bo,CHIEF,\n";
    let (status, body, _) = world.form(Some(ADMIN), "/admin/people/import", &[("csv", bad)]);
    assert!(status == 400 && body.contains("line 3, role") && body.contains("CHIEF"), "{status} {body}");
    assert_eq!(world.count("SELECT count(*) FROM users"), before, "nobody was added");

    let good =
        "email,name,role,team\nana@example.com,Ana,MEMBER,web\nbo@example.com,Bo,,\nmax@example.com,Max,MEMBER,\n";
    let (status, page, _) = world.form(Some(ADMIN), "/admin/people/import", &[("csv", good)]);
    assert_eq!(status, 200, "{page}");
    let emails: Vec<String> = links(&page).into_iter().map(|(email, _)| email).collect();
    assert_eq!(emails, ["ana@example.com", "bo@example.com"]);
    assert!(page.contains("Already here and left as they are: max@example.com"), "{page}");
    assert_eq!(world.count("SELECT count(*) FROM users"), before + 2);
    assert_eq!(world.audited("USER_ADDED"), 2);
}

#[test]
fn disabling_revokes_and_the_last_administrator_stays() {
    let world = world();
    let max = world.user_id("max@example.com");
    assert_eq!(
        world.server.post_events(&world.max_hook, &envelope(vec![event("session_start", "a", now_ms())])).0,
        200
    );
    let (_, page, _) = world.page(Some(ADMIN), "/admin/people");
    assert!(page.contains(&format!("action=\"/admin/people/{max}/revoke\"")), "max holds a token");
    // A reset lists the tokens a reset does not end, for review (issue 52).
    let (_, reset, _) = world.form(Some(ADMIN), &format!("/admin/people/{max}/password-link"), &[]);
    let review = &reset[reset.find("id=\"tokens-to-review\"").expect("the tokens to review")..];
    let review = &review[..review.find("</table>").unwrap()];
    assert!(review.contains("keep working after the password is reset") && review.contains(">hook<"), "{review}");

    assert_eq!(world.change(&format!("/admin/people/{max}/revoke"), &[]), "a person's sign-ins and tokens are revoked");
    assert_eq!(
        world.server.post_events(&world.max_hook, &envelope(vec![event("session_start", "b", now_ms())])).0,
        401
    );
    assert_eq!(world.audited("TOKENS_REVOKED"), 1);

    // A reset link made before the person is disabled dies with the disabling: enabling
    // them again does not revive it (L10 of issue 52).
    let (_, made, _) = world.form(Some(ADMIN), &format!("/admin/people/{max}/password-link"), &[]);
    let old_link = links(&made).remove(0).1;
    assert_eq!(get(&world, &old_link).0, 200, "the link works while max is enabled");
    world.change(&format!("/admin/people/{max}/disable"), &[]);
    assert_eq!(world.count("SELECT count(*) FROM users WHERE disabled_at_ms IS NOT NULL"), 1);
    let (status, body, _) = world.form(Some(ADMIN), &format!("/admin/people/{max}/password-link"), &[]);
    assert!(status == 400 && body.contains("disabled"), "{body}");
    world.change(&format!("/admin/people/{max}/enable"), &[]);
    assert_eq!(world.audited("USER_DISABLED") + world.audited("USER_ENABLED"), 2);
    assert_eq!(get(&world, &old_link).0, 404, "the old link stays void after enabling");
    let (status, _, _) =
        world.form(None, &old_link, &[("password", "an attacker's phrase"), ("repeat", "an attacker's phrase")]);
    assert_eq!(status, 404);

    // Two administrators: one may go, the last may not.
    let abe = world.user_id("abe@example.com");
    world.change(&format!("/admin/people/{abe}/disable"), &[]);
    let ari = world.user_id(ADMIN);
    let (status, body, _) = world.form(Some(ADMIN), &format!("/admin/people/{ari}/disable"), &[]);
    assert!(status == 400 && body.contains("only active administrator"), "{body}");
    assert_eq!(world.count("SELECT count(*) FROM users WHERE org_role = 'ADMIN' AND disabled_at_ms IS NULL"), 1);
    let (status, _, _) = world.form(Some(ADMIN), &format!("/admin/people/{ari}/explode"), &[]);
    assert_eq!(status, 404);
}

#[test]
fn teams_are_created_renamed_nested_and_staffed_with_audit() {
    let world = world();
    assert_eq!(world.change("/admin/teams", &[("slug", "eng"), ("name", "Engineering")]), "team eng is created");
    let (status, body, _) = world.form(Some(ADMIN), "/admin/teams", &[("slug", "Not A Slug"), ("name", "x")]);
    assert!(status == 400 && body.contains("slug"), "{body}");
    let (status, body, _) = world.form(Some(ADMIN), "/admin/teams", &[("slug", "eng"), ("name", "Again")]);
    assert!(status == 400 && body.contains("already exists"), "{body}");
    world.change("/admin/teams/web/parent", &[("parent", "eng")]);
    let (status, body, _) = world.form(Some(ADMIN), "/admin/teams/eng/parent", &[("parent", "web")]);
    assert!(status == 400 && body.contains("one of the teams below it"), "{body}");
    world.change("/admin/teams/web/rename", &[("name", "Web & Mobile")]);
    assert_eq!(world.count("SELECT count(*) FROM teams WHERE name = 'Web & Mobile'"), 1);
    assert_eq!(world.audited("TEAM_CREATED") + world.audited("TEAM_CHANGED"), 3);

    let max = world.user_id("max@example.com");
    world.change(&format!("/admin/teams/web/members/{max}/remove"), &[]);
    assert_eq!(world.audited("TEAM_MEMBER_REMOVED"), 1);
    let (status, _, _) = world.form(Some(ADMIN), &format!("/admin/teams/web/members/{max}/remove"), &[]);
    assert_eq!(status, 404, "not a member any more");
    let (_, page, _) = world.page(Some(ADMIN), "/admin/teams");
    assert!(page.contains("· Web &#38; Mobile") && page.contains("made here"), "nested under eng: {page}");
    assert!(page.contains("href=\"#team-web\"") && page.contains("id=\"team-web\""), "each team's row leads to it");
    assert!(world.page(Some(ADMIN), "/admin/team-roles").2 == "/admin/teams", "the old address leads here");

    // A team the sync keeps: what the next sync would undo is refused, leads are ours.
    world.db().execute("UPDATE teams SET synced_at_ms = 1 WHERE slug = 'web'", []).unwrap();
    let (status, body, _) = world.form(Some(ADMIN), "/admin/teams/web/rename", &[("name", "Renamed")]);
    assert!(status == 400 && body.contains("GitHub team sync"), "{body}");
    let (status, body, _) =
        world.form(Some(ADMIN), "/admin/teams/web/members", &[("email", "max@example.com"), ("role", "member")]);
    assert!(status == 400 && body.contains("members"), "{body}");
    let lee = world.user_id("lee@example.com");
    world.change(&format!("/admin/teams/web/members/{lee}"), &[("role", "member")]);
    let (_, page, _) = world.page(Some(ADMIN), "/admin/teams");
    assert!(page.contains("GitHub team sync (last"), "the source is shown: {page}");
    assert!(!page.contains("action=\"/admin/teams/web/rename\""), "no form the sync would undo");
}
