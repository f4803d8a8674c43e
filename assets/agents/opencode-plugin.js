// sightline.js — Sightline telemetry bridge for OpenCode. sightline-managed: written by
// `sightline install --agent opencode`, removed by `sightline uninstall --agent opencode`.
// Install at: ~/.config/opencode/plugins/sightline.js   (global; `plugin/` also scanned)
// Forwards selected OpenCode hooks/bus events to `sightline hook <event> --agent opencode`
// (JSON envelope on stdin). Never blocks, never throws, never mutates OpenCode state.
// IMPORTANT: keep exactly ONE export and make it a function (legacy plugin shape). Any
// non-function named export makes OpenCode reject the whole file ("Plugin export is not a
// function"); a default-export object without `id` is rejected for file plugins.
import { spawn } from "node:child_process"

const BIN = process.env.SIGHTLINE_BIN || "__SIGHTLINE_BIN__"
const MAX_STR = 16384 // truncate long strings (tool output, file attachments) in the payload

// Only the bus events the adapter maps: every forwarded event starts a process.
const BUS_EVENTS = new Set([
  "session.created", "session.deleted", "session.idle",
  "permission.asked", "permission.updated", "question.asked",
])

export const SightlinePlugin = async ({ project, directory, worktree }) => {
  const doneMessages = new Set() // assistant message ids already forwarded
  const erroredParts = new Set() // tool part ids already forwarded as tool.execute.error

  const trunc = (_k, v) =>
    typeof v === "string" && v.length > MAX_STR
      ? v.slice(0, MAX_STR) + `…[truncated ${v.length - MAX_STR} chars]`
      : v

  const send = (event, sessionID, data) => {
    try {
      const payload = JSON.stringify(
        {
          schema: 1,
          agent: "opencode",
          event,
          time: Date.now(),
          session_id: sessionID ?? null,
          directory: directory ?? null,
          worktree: worktree ?? null,
          project_id: project?.id ?? null,
          data,
        },
        trunc,
      )
      const child = spawn(BIN, ["hook", event, "--agent", "opencode"], {
        detached: true,
        stdio: ["pipe", "ignore", "ignore"],
        windowsHide: true,
      })
      child.on("error", () => {})
      child.stdin.on("error", () => {})
      child.stdin.end(payload)
      child.unref()
    } catch {
      // swallow everything: telemetry must never break OpenCode
    }
  }

  const sessionOf = (type, p) => {
    if (!p) return undefined
    if (typeof p.sessionID === "string") return p.sessionID
    if (p.part?.sessionID) return p.part.sessionID
    if (p.info) return type.startsWith("session.") ? p.info.id : p.info.sessionID
    return undefined
  }

  return {
    event: async ({ event }) => {
      try {
        const type = event?.type
        const p = event?.properties
        if (!type) return
        if (BUS_EVENTS.has(type)) return send(type, sessionOf(type, p), { type, properties: p })
        if (type === "session.status" && p?.status?.type === "idle")
          return send("session.status", p.sessionID, { type, properties: p })
        if (type === "message.updated") {
          const info = p?.info
          if (info?.role !== "assistant" || !info.time?.completed || doneMessages.has(info.id)) return
          doneMessages.add(info.id)
          return send("message.updated", info.sessionID, { type, properties: { info } })
        }
        if (type === "message.part.updated") {
          const part = p?.part
          if (part?.type !== "tool" || part.state?.status !== "error" || erroredParts.has(part.id)) return
          erroredParts.add(part.id)
          return send("tool.execute.error", part.sessionID, {
            input: { tool: part.tool, sessionID: part.sessionID, callID: part.callID, args: part.state.input },
            output: { error: part.state.error, metadata: part.state.metadata ?? null, time: part.state.time },
            messageID: part.messageID,
            partID: part.id,
          })
        }
      } catch {}
    },
    // The prompt itself is never recorded; only that one was submitted.
    "chat.message": async (input) => {
      send("chat.message", input?.sessionID, { input })
    },
    "tool.execute.before": async (input, output) => {
      send("tool.execute.before", input?.sessionID, { input, output: { args: output?.args } })
    },
    "tool.execute.after": async (input, output) => {
      send("tool.execute.after", input?.sessionID, {
        input,
        output: { title: output?.title, output: output?.output, metadata: output?.metadata },
      })
    },
    "experimental.session.compacting": async (input) => {
      send("experimental.session.compacting", input?.sessionID, { input })
    },
  }
}
