//! A results.db damaged part-way: the cells read fine until an export or a report
//! reaches the damaged logs. A failing export is never left looking complete (an error
//! before the first chunk, a cut connection after it), and a failing report leaves no
//! file and an earlier report untouched.

use crate::common;

use std::io::{Read, Write};
use std::path::Path;

use common::results::RunningDashboard;
use common::{sightline, stderr, stdout};
use rusqlite::Connection;

/// A results.db whose last cells' logs sit on damaged pages: the cells read fine until
/// the export or report reaches their logs. `diff` is the last column of a rowid
/// table, so summaries, leaderboards and the table never touch those pages.
fn damaged_db(path: &Path) {
    let conn = Connection::open(path).unwrap();
    conn.execute_batch(
        "CREATE TABLE run_results (cell_id TEXT, run_name TEXT, harness TEXT, model TEXT, task_id TEXT, track TEXT,
           exit_class TEXT, success REAL, total_cost REAL, timestamp TEXT, diff TEXT,
           PRIMARY KEY (run_name, cell_id))",
    )
    .unwrap();
    // 2,000 small cells (about 1 MB of CSV, several export chunks), then 20 with logs
    // large enough to live on overflow pages.
    for i in 0..2020 {
        let diff = if i < 2000 { format!("small diff {i} {}", "d".repeat(400)) } else { "L".repeat(20_000) };
        conn.execute(
            "INSERT INTO run_results VALUES (?1, 'nightly', 'alpha', 'm1', 't', 'swe', 'pass', 1.0, 0.5, 'now', ?2)",
            rusqlite::params![format!("cell-{i:05}"), diff],
        )
        .unwrap();
    }
    let page_size: i64 = conn.query_row("PRAGMA page_size", [], |r| r.get(0)).unwrap();
    let overflow: Vec<i64> = conn
        .prepare("SELECT pageno FROM dbstat WHERE name = 'run_results' AND pagetype = 'overflow'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(overflow.len() >= 20, "the large logs are on overflow pages");
    drop(conn);
    // Each overflow page starts with the number of the next one: point it past the end.
    let mut file = std::fs::OpenOptions::new().write(true).open(path).unwrap();
    for page in overflow {
        use std::io::{Seek, SeekFrom};
        file.seek(SeekFrom::Start(((page - 1) * page_size) as u64)).unwrap();
        file.write_all(&[0x7f, 0xff, 0xff, 0xff]).unwrap();
    }
}

/// A raw HTTP/1.1 GET, read to the end: the status and whether the chunked body
/// ended with its final zero-length chunk.
fn raw_get(base: &str, path: &str) -> (u16, usize, bool) {
    let address = base.trim_start_matches("http://");
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream.set_read_timeout(Some(std::time::Duration::from_secs(30))).unwrap();
    write!(stream, "GET {path} HTTP/1.1\r\nHost: {address}\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = Vec::new();
    let _ = stream.read_to_end(&mut response);
    let text = String::from_utf8_lossy(&response);
    let status = text.split_whitespace().nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (status, response.len(), text.ends_with("\r\n0\r\n\r\n"))
}

#[test]
fn an_export_that_fails_part_way_is_cut_short_and_one_that_fails_first_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    damaged_db(&db);
    let dashboard = RunningDashboard::start(&db, None);
    // The summaries and the run page do not read the logs.
    assert_eq!(dashboard.json("/api/run/nightly")["total"], 2020);
    let (status, length, complete) = raw_get(&dashboard.base, "/run/nightly/export/csv");
    assert_eq!(status, 200);
    assert!(length > 256 * 1024, "the first chunks went out ({length} bytes)");
    assert!(!complete, "the body has no final chunk: the client sees an incomplete download");
    // Newest-first order reaches a damaged cell before anything is sent: a plain 500.
    let (status, body) = dashboard.get("/run/nightly/export/json?sort=cell_id&order=desc");
    assert_eq!(status, 500, "{body}");
    assert!(body.contains("internal"), "{body}");
}

#[test]
fn a_report_that_fails_part_way_leaves_no_report_behind() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("results.db");
    damaged_db(&db);
    let out = dir.path().join("reports");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("nightly_report.html"), "yesterday's report").unwrap();
    let report = sightline(&["report", "nightly", "--db", db.to_str().unwrap(), "--output", out.to_str().unwrap()]);
    assert_eq!(report.status.code(), Some(2), "{}", stdout(&report));
    assert!(stderr(&report).contains("malformed"), "the cause is named: {}", stderr(&report));
    let mut left: Vec<String> =
        std::fs::read_dir(&out).unwrap().map(|e| e.unwrap().file_name().to_string_lossy().into_owned()).collect();
    left.sort();
    assert_eq!(left, ["nightly_report.html"], "no partial files and no new report");
    assert_eq!(std::fs::read_to_string(out.join("nightly_report.html")).unwrap(), "yesterday's report");
}
