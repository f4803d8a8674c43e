#!/usr/bin/env python3
"""One agent session through the real hook CLI, for benches/soak.sh: replays the Claude
Code fixture (tests/fixtures/agents/claude_code, written from Claude Code's documentation)
under a fresh session id, so each replay is a new session whose transcript the flusher
uploads. Usage: soak_replay.py <sightline binary> <home>"""
import json, os, subprocess, sys, uuid

binary, home = sys.argv[1], sys.argv[2]
fixture = os.path.join(os.path.dirname(__file__), "..", "tests", "fixtures", "agents", "claude_code")
session = str(uuid.uuid4())
work = os.path.join(home, "sessions", session)
os.makedirs(work, exist_ok=True)
env = dict(os.environ, HOME=home, XDG_CONFIG_HOME=os.path.join(home, "config"),
           XDG_DATA_HOME=os.path.join(home, "data"), SIGHTLINE_NO_FLUSHER="1")
old = "3f1c2a9e-5b7d-4c1e-9a0f-6d2e8b4c7a11"

def substitute(text):
    return (text.replace(old, session)
            .replace("${TRANSCRIPT}", os.path.join(work, "transcript.jsonl"))
            .replace("${SUBAGENT_TRANSCRIPT}", os.path.join(work, "subagent.jsonl"))
            .replace("${CWD}", work).replace("${XDG_CONFIG_HOME}", env["XDG_CONFIG_HOME"])
            .replace("${HOME}", home))

with open(os.path.join(fixture, "hooks.jsonl")) as script:
    for line in list(script)[1:]:
        if not line.strip():
            continue
        step = json.loads(line)
        if "write" in step:
            with open(os.path.join(fixture, step["write"])) as source:
                text = source.read()
            if "lines" in step:
                text = "".join(l + "\n" for l in text.splitlines()[1:1 + step["lines"]])
            target = substitute(step["to"]) if "to" in step else os.path.join(work, step["write"])
            os.makedirs(os.path.dirname(target), exist_ok=True)
            with open(target, "w") as out:
                out.write(substitute(text))
            continue
        payload = substitute(json.dumps(step["payload"]))
        subprocess.run([binary, "hook", step["event"], "--agent", "claude_code"], input=payload.encode(),
                       env=env, check=True, stdout=subprocess.DEVNULL)
