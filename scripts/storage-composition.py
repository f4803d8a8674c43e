#!/usr/bin/env python3
"""Where the bytes of a stored event go: samples about a dozen event partitions of a data
directory (one every len/12 days), and prints bytes per event by table and index (SQLite's
dbstat) and by column (the width SQLite stores: integers by their varint size, text and
blobs by their length). Read-only; safe beside a running server.

    python3 scripts/storage-composition.py <data-dir>
"""
import glob
import os
import sqlite3
import sys


def stored_width(column):
    return (
        f"sum(case typeof({column}) when 'integer' then (case when abs({column}) < 128 then 1 "
        f"when abs({column}) < 32768 then 2 when abs({column}) < 8388608 then 3 "
        f"when abs({column}) < 2147483648 then 4 when abs({column}) < 140737488355328 then 6 else 8 end) "
        f"when 'null' then 0 else length(CAST({column} AS BLOB)) end)"
    )


def main(data_dir):
    files = sorted(glob.glob(os.path.join(data_dir, "events", "*.db")))
    if not files:
        sys.exit(f"no event partitions under {data_dir}/events")
    sample = files[:: max(1, len(files) // 12)]
    open_ro = lambda path: sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    columns = [row[1] for row in open_ro(sample[0]).execute("PRAGMA table_info(events)")]
    events = file_bytes = 0
    by_object, by_column = {}, dict.fromkeys(columns, 0)
    for path in sample:
        conn = open_ro(path)
        events += conn.execute("SELECT count(*) FROM events").fetchone()[0]
        file_bytes += os.path.getsize(path)
        for name, size in conn.execute("SELECT name, sum(pgsize) FROM dbstat GROUP BY name"):
            by_object[name] = by_object.get(name, 0) + size
        widths = conn.execute("SELECT " + ", ".join(stored_width(c) for c in columns) + " FROM events").fetchone()
        for column, width in zip(columns, widths):
            by_column[column] += width or 0
    if events == 0:
        sys.exit("the sampled partitions hold no events")
    print(f"sampled {len(sample)} of {len(files)} partitions, {events} events; file {file_bytes / events:.1f} B/event")
    for name, size in sorted(by_object.items(), key=lambda kv: -kv[1]):
        print(f"  {name:22s} {size / events:7.1f} B/event")
    print("row payload by column, B/event:")
    for column, width in sorted(by_column.items(), key=lambda kv: -kv[1]):
        print(f"  {column:22s} {width / events:7.1f}")
    print(f"  {'(sum)':22s} {sum(by_column.values()) / events:7.1f}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
