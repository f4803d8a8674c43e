-- Migration 31: the tool calls made under a skill, a slash command or to a tool server,
-- by day, each in a partial index that holds the figures the pages sum (so it answers
-- alone): a skills or servers page over a quarter reads the calls it shows, not every
-- tool call of the quarter (about a sixth, a sixth and a quarter of the rows).
CREATE INDEX agg_tools_daily_skills ON agg_tools_daily(day_start_ms, skill, calls, errors, denials, duration_ms)
    WHERE skill <> '';
CREATE INDEX agg_tools_daily_commands ON agg_tools_daily(day_start_ms, slash_command, calls, errors, denials, duration_ms)
    WHERE slash_command <> '';
CREATE INDEX agg_tools_daily_servers ON agg_tools_daily(day_start_ms, tool_server, calls, errors, denials, duration_ms)
    WHERE tool_server <> '';
