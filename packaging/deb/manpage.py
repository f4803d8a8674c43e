#!/usr/bin/env python3
"""A manual page (roff, section 1) from a binary's own --help and --version, for the
Debian package (Debian Policy 12.1: every program in /usr/bin has one). Generated at
build time, so the page is never older than the binary: its commands and options are
clap's, and the documentation it points to ships in /usr/share/doc/sightline.

    manpage.py BINARY DATE > NAME.1      (DATE: YYYY-MM-DD, the commit's, for a
                                          reproducible page)
"""
import os
import re
import subprocess
import sys

# What --help does not say: per program, the sections after the commands and options.
EXTRA = {
    "sightline": """\
.SH FILES
.TP
.I /etc/sightline/sightline.toml
The configuration (\\fBsightline config default\\fR prints every setting).
.TP
.I /var/lib/sightline
The data directory (0700, the sightline user's).
.TP
.I /usr/lib/systemd/system/sightline.service
The hardened systemd unit that runs \\fBsightline serve\\fR.
.SH SEE ALSO
.I /usr/share/doc/sightline/README.md
and
.I /usr/share/doc/sightline/operations.md
(installing, hardening, backup and restore, upgrades);
\\fBsightline\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR for each command's options.
""",
    "sightline-hook": """\
.SH NOTES
On a Sightline server this binary is not run: the server hands it to developer machines
of its own platform (\\fBcurl \\-fsSL\\fR \\fIingest\\-url\\fR\\fB/install.sh | sh\\fR).
.SH SEE ALSO
.BR sightline (1),
.IR /usr/share/doc/sightline/README.md ;
\\fBsightline\\-hook\\fR \\fIcommand\\fR \\fB\\-\\-help\\fR for each command's options.
""",
}


def roff(text):
    """Plain text as roff: backslashes and hyphens escaped, no line read as a request."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    return re.sub(r"^([.'])", r"\\&\1", text, flags=re.M)


def blocks(help_text):
    """The help's paragraphs: the description, then `Usage:`, `Commands:`, `Options:`."""
    return [b for b in re.split(r"\n\s*\n", help_text.strip()) if b.strip()]


def items(block):
    """`  name   description` lines (continuations indented further) as (name, text)."""
    found = []
    for line in block.splitlines()[1:]:
        match = re.match(r"^  (\S.*?)(?:\s{2,}(.*))?$", line)
        if match and not line.startswith("   "):
            found.append([match.group(1), match.group(2) or ""])
        elif found:
            found[-1][1] += " " + line.strip()
    return found


def main():
    binary, date = sys.argv[1], sys.argv[2]
    name = os.path.basename(binary)
    help_text = subprocess.run([binary, "--help"], check=True, capture_output=True, text=True).stdout
    version = subprocess.run([binary, "--version"], check=True, capture_output=True, text=True).stdout.split()[-1]
    about, *rest = blocks(help_text)
    out = [
        f'.TH {roff(name.upper())} 1 {date} "{roff(name)} {version}" "User Commands"',
        ".SH NAME",
        f"{roff(name)} \\- {roff(about[0].lower() + about[1:])}",
    ]
    for block in rest:
        heading = block.splitlines()[0]
        if heading.startswith("Usage:"):
            out += [".SH SYNOPSIS", f".B {roff(heading.split(None, 1)[1])}"]
        elif heading in ("Commands:", "Options:"):
            out.append(f".SH {heading[:-1].upper()}")
            for term, text in items(block):
                out += [".TP", f".B {roff(term)}", roff(text)]
        else:
            raise SystemExit(f"manpage.py: {name} --help has a block this script does not know: {heading!r}")
    out.append(EXTRA[name].rstrip("\n"))
    print("\n".join(out))


if __name__ == "__main__":
    main()
