#!/bin/sh
# Sightline bridge for Cline hooks (macOS/Linux). sightline-managed: written by
# `sightline install --agent cline`, removed by `sightline uninstall --agent cline`.
# Install one executable COPY per hook name
# (TaskStart TaskResume TaskCancel TaskComplete UserPromptSubmit PreToolUse PostToolUse
#  PreCompact Notification) into <Documents>/Cline/Hooks/ and `chmod 755` each.
# Forwards stdin to `sightline hook <HookName> --agent cline` in the background and always
# answers "continue". Never cancels, never fails, never waits for Sightline.
hook="$(basename "$0")"
SL="${SIGHTLINE_BIN:-__SIGHTLINE_ABS_PATH__}"   # installer substitutes the absolute path
[ -x "$SL" ] || SL="$(command -v sightline 2>/dev/null)"
payload="$(cat)"
if [ -n "$SL" ]; then
  ( printf '%s' "$payload" | "$SL" hook "$hook" --agent cline >/dev/null 2>&1 & ) >/dev/null 2>&1 </dev/null
fi
printf '%s\n' '{"cancel":false,"contextModification":"","errorMessage":""}'
exit 0
